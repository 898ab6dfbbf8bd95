package caddymodule

import (
	"net/http"
	"testing"
)

// A crawler cannot reach a disallowed path by spelling it differently: each
// spelling below, sent as written, is denied. Go's server and Caddy accept
// every one of them (none is refused with 400 before the handler), and
// "OPTIONS *" is answered by Go's server itself.
func TestE2EBypassSpellings(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText("User-agent: *\nDisallow: /private/\n")})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied",
	})
	for _, target := range []string{
		"/private/x",
		"/%70rivate/x",
		"//private/x",
		"/./private/x",
		"/pub/../private/x",
		"/pub/..%2Fprivate/x",
		"/pub/%2e%2e/private/x",
		"/private%2Fx",
		"/private;a=b/x",
		`/pub\..\private/x`,
		"http://example.test/private/x", // absolute form
	} {
		r := c.raw(0, "GET", target, "GPTBot/1.2")
		if r.status != http.StatusForbidden || r.body != "denied" {
			t.Errorf("GET %s by GPTBot = %d %q, want 403", target, r.status, r.body)
		}
		if r := c.raw(0, "HEAD", target, "GPTBot/1.2"); r.status != http.StatusForbidden {
			t.Errorf("HEAD %s by GPTBot = %d, want 403", target, r.status)
		}
		if r := c.raw(0, "GET", target, e2eBrowser); r.status != http.StatusOK {
			t.Errorf("GET %s by a browser = %d, want 200", target, r.status)
		}
	}
	for _, tc := range []struct {
		method, target string
		status         int
		robots         string
	}{
		{"GET", "/public/x", 200, "allow|wildcard_group|GPTBot||"},
		{"OPTIONS", "*", 200, ""},                               // Go's server answers
		{"GET", "*", 200, "allow|no_path|||"},                   // reaches the handler
		{"CONNECT", "example.test:80", 200, "allow|no_path|||"}, // authority form
	} {
		r := c.raw(0, tc.method, tc.target, "GPTBot/1.2")
		if r.status != tc.status || r.header.Get("X-Robots") != tc.robots {
			t.Errorf("%s %s by GPTBot = %d, X-Robots %q; want %d, %q", tc.method, tc.target, r.status, r.header.Get("X-Robots"), tc.status, tc.robots)
		}
	}
}
