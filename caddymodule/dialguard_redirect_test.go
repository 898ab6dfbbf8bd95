package caddymodule

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"testing"
)

// The rest of the redirect tests run a real Caddy in front of loopback
// origins (caddymodule/integration/e2e_redirect_test.go).

// hxPrivateTargets are redirect targets a robots.txt on a public origin
// must not lead the handler's fetch to: loopback, link-local (cloud
// metadata), private and unspecified addresses, and Caddy's admin.
var hxPrivateTargets = []string{
	"http://127.0.0.1/robots.txt",
	"http://127.0.0.1:2019/config/",
	"http://localhost:2019/config/",
	"http://[::1]/robots.txt",
	"http://[::ffff:127.0.0.1]/robots.txt",
	"http://0.0.0.0:2019/config/",
	"http://10.1.2.3/robots.txt",
	"http://172.16.0.1/robots.txt",
	"http://192.168.1.1/robots.txt",
	"http://169.254.169.254/latest/meta-data/",
	"http://[fe80::1]/robots.txt",
	"http://[fd00::1]/robots.txt",
}

// The private-range rule cannot be shown on loopback (every origin of the
// end-to-end tests is loopback), so it is checked where it is applied: on
// the dial of the handler's own HTTP client, for the redirect of a site
// served on a public address. Nothing is dialled: the guard's dialer only
// records what it would connect to. The control, another public host, is
// dialled.
func TestHostileRedirectIntoPrivateRanges(t *testing.T) {
	t.Parallel()
	cases := []hxRedirectCase{{"https://8.8.4.4/robots.txt", true}}
	for _, target := range hxPrivateTargets {
		cases = append(cases, hxRedirectCase{target, false})
	}
	site := &dialPolicy{site: netip.MustParseAddrPort("8.8.8.8:443")}
	for _, tc := range cases {
		var dialled []string
		g := &dialGuard{resolver: net.DefaultResolver, dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled = append(dialled, addr)
			return nil, errors.New("not dialled in tests")
		}}
		u, err := url.Parse(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		_, err = g.DialContext(withDialPolicy(t.Context(), site), "tcp", net.JoinHostPort(u.Hostname(), port))
		followed := len(dialled) > 0
		if followed != tc.follow || !tc.follow && !errors.Is(err, errRefusedAddress) {
			t.Errorf("redirect from a public site to %s: dialled %v (%v), err %v; want dialled %v", tc.target, followed, dialled, err, tc.follow)
		}
	}
}

// hxRedirectCase is a redirect target, and whether a fetch follows it.
type hxRedirectCase struct {
	target string
	follow bool
}
