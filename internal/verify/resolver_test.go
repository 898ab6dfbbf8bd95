package verify

import (
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/testdns"
)

// TestResolverRealDNS runs forward-confirmed reverse DNS through
// NewResolver against a real DNS server on 127.0.0.1, the only place a
// test may send packets.
func TestResolverRealDNS(t *testing.T) {
	addr := testdns.Serve(t, []string{
		"1.66.249.66.in-addr.arpa. 60 IN PTR crawl-66-249-66-1.googlebot.com.",
		"crawl-66-249-66-1.googlebot.com. 60 IN A 66.249.66.1",
		"7.113.0.203.in-addr.arpa. 60 IN PTR crawl-203-0-113-7.googlebot.com.", // forward does not match
		"crawl-203-0-113-7.googlebot.com. 60 IN A 192.0.2.1",
	}, nil)

	v := newTestVerifier(t, Config{Resolver: NewResolver(addr), Now: newClock().Now})
	for _, tt := range []struct {
		addr string
		want Outcome
	}{
		{"66.249.66.1", Verified},
		{"203.0.113.7", Forged},
		{"198.51.100.1", Forged}, // NXDOMAIN
	} {
		if got := waitFor(t, v, "Googlebot", tt.addr); got != (Result{Outcome: tt.want, Method: ReverseDNS}) {
			t.Errorf("Verify(Googlebot, %s) over real DNS = %+v, want %v", tt.addr, got, tt.want)
		}
	}
}
