package verify

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

// TestProvenTokens checks that an address is proven by its range lists
// and, once its reverse DNS is known and forward-confirmed, by the tokens
// whose domains its name is under, whatever token a request claims; and
// that no lookup is started by the question.
func TestProvenTokens(t *testing.T) {
	res := googleResolver()
	v := newTestVerifier(t, Config{Resolver: res, Now: newClock().Now, RangeOverrides: []RangeOverride{
		{Token: "GPTBot", Source: writeFile(t, "gptbot.json", rangeJSON("192.0.2.0/24"))}}})
	if got := v.ProvenTokens(netip.MustParseAddr("192.0.2.7"), nil); !slices.Equal(got, []string{"GPTBot"}) {
		t.Errorf("ProvenTokens(a GPTBot address) = %v, want [GPTBot]", got)
	}
	googlebot := netip.MustParseAddr("66.249.66.1")
	if got := v.ProvenTokens(googlebot, nil); len(got) != 0 || res.ptrQ.Load() != 0 {
		t.Errorf("before any lookup: %v, %d lookups; want none, and none started", got, res.ptrQ.Load())
	}
	if got := waitFor(t, v, "Googlebot", googlebot.String()); got.Outcome != Verified {
		t.Fatalf("Googlebot's address: %+v", got)
	}
	if got := v.ProvenTokens(googlebot, nil); !slices.Contains(got, "Googlebot") || slices.Contains(got, "GPTBot") {
		t.Errorf("ProvenTokens(Googlebot's confirmed address) = %v, want Googlebot and not GPTBot", got)
	}
	if got := v.ProvenTokens(netip.MustParseAddr("203.0.113.1"), nil); len(got) != 0 {
		t.Errorf("ProvenTokens(an address of no crawler) = %v, want none", got)
	}
}

// TestProvenTokensBySignature checks that a request its signature agent
// signed is proven to be the agent's tokens' whatever it claims, from the
// client that first sent the signature only: a replay from another client
// proves nothing.
func TestProvenTokensBySignature(t *testing.T) {
	clock := newClock()
	v := replayVerifier(t, clock, Config{NoBuiltinReverseDNS: true})
	r := signedAt(t, "s", "bm9uY2UtcHJvdmVu", clock.Now().Unix()-5, 5*time.Minute)
	r.Header.Set("User-Agent", "ExampleBot/1.0") // claims nothing of the agent's
	sender, stranger := netip.MustParseAddr("203.0.113.5"), netip.MustParseAddr("198.51.100.9")
	if got := v.ProvenTokens(sender, r); !slices.Contains(got, "TestBot") || !slices.Contains(got, "Googlebot") {
		t.Errorf("ProvenTokens(the signer's request) = %v, want its agent's tokens", got)
	}
	if got := v.ProvenTokens(stranger, r); len(got) != 0 {
		t.Errorf("ProvenTokens(the same signature replayed) = %v, want none", got)
	}
	if got := v.ProvenTokens(sender, rfcTestRequest()); len(got) != 0 {
		t.Errorf("ProvenTokens(an unsigned request) = %v, want none", got)
	}
}
