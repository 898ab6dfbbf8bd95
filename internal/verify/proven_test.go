package verify

import (
	"net/netip"
	"slices"
	"testing"
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
