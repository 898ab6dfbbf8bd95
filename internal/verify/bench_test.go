package verify

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// setupWarm builds a verifier with GPTBot's list loaded and cached
// Googlebot answers for 66.249.66.1 (genuine) and 203.0.113.1 (forged).
func setupWarm(t testing.TB) *Verifier {
	srv := newListServer(t, map[string]string{"/gptbot.json": rangeJSON("20.171.206.0/24", "2001:db8:1::/48")})
	lists := []PublishedList{{Name: "gptbot", URL: srv.URL + "/gptbot.json", Tokens: []string{"GPTBot"}}}
	v := newTestVerifier(t, Config{lists: lists, Resolver: googleResolver()}) // the real clock, as in production
	waitFor(t, v, "GPTBot", "20.171.206.1")
	waitFor(t, v, "Googlebot", "66.249.66.1")
	waitFor(t, v, "Googlebot", "203.0.113.1")
	return v
}

var warmCases = []struct {
	name, token, addr string
	want              Result
}{
	{"range_hit", "GPTBot", "20.171.206.9", Result{Outcome: Verified, Method: IPRanges}},
	{"range_hit_v6_other_case", "gptbot", "2001:db8:1::9", Result{Outcome: Verified, Method: IPRanges}},
	{"range_miss", "GPTBot", "192.0.2.1", Result{Outcome: Forged, Method: IPRanges}},
	{"dns_hit_verified", "Googlebot", "66.249.66.1", Result{Outcome: Verified, Method: ReverseDNS}},
	{"dns_hit_forged", "Googlebot", "203.0.113.1", Result{Outcome: Forged, Method: ReverseDNS}},
	{"no_method", "Mozilla", "192.0.2.1", Result{Outcome: Unverified}},
}

// TestWarmPathsAllocateNothing is the allocation guarantee of the warm
// paths, checked as a test (not a timing): a range hit or miss, a cached
// DNS answer and an unknown token allocate nothing.
func TestWarmPathsAllocateNothing(t *testing.T) {
	v := setupWarm(t)
	for _, c := range warmCases {
		addr := netip.MustParseAddr(c.addr)
		if got := v.Verify(c.token, addr, nil); got != c.want {
			t.Fatalf("%s: Verify = %+v, want %+v", c.name, got, c.want)
		}
		if n := testing.AllocsPerRun(1000, func() { v.Verify(c.token, addr, nil) }); n != 0 {
			t.Errorf("%s: %v allocations per Verify, want 0", c.name, n)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	for _, c := range warmCases {
		b.Run(c.name, func(b *testing.B) {
			v := setupWarm(b)
			addr := netip.MustParseAddr(c.addr)
			b.ReportAllocs()
			for b.Loop() {
				v.Verify(c.token, addr, nil)
			}
		})
	}
}

// BenchmarkVerifyWebBotAuth measures a signed request whose agent's
// directory is cached: "remembered" repeats a signature that verified
// before (the key-cache-hit warm path); "fresh" forgets it each time, so
// each Verify parses the fields and checks the Ed25519 signature.
func BenchmarkVerifyWebBotAuth(b *testing.B) {
	d := newDirServer(b)
	// The real clock, as in production, and a signature made now with the
	// draft vectors' key and shape.
	v, err := New(Config{WebBotAuth: true, HTTPClient: d.client(), lists: []PublishedList{},
		Resolver: &fakeResolver{}, SignatureAgents: map[string][]string{"https://signature-agent.test": {"TestBot"}}})
	if err != nil {
		b.Fatal(err)
	}
	v.Start()
	defer v.Close()
	r := rfcTestRequest()
	r.Header.Set("Signature-Agent", `agent2="https://signature-agent.test"`)
	created := time.Now().Unix()
	sign(b, r, fmt.Sprintf(`sig2=("@authority" "signature-agent";key="agent2");created=%d;expires=%d;keyid="%s";alg="ed25519";tag="web-bot-auth"`,
		created, created+3600, rfcEd25519Thumbprint))
	addr := netip.MustParseAddr("192.0.2.1")
	for v.Verify("TestBot", addr, r).Outcome == Pending {
		time.Sleep(time.Millisecond)
	}
	if got := v.Verify("TestBot", addr, r); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
		b.Fatalf("Verify = %+v", got)
	}
	b.Run("remembered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v.Verify("TestBot", addr, r)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		slot := v.wba.cache.slot(r.Header["Signature"][0])
		b.ReportAllocs()
		for b.Loop() {
			slot.Store(nil) // forget the signature, and only it
			v.Verify("TestBot", addr, r)
		}
	})
}
