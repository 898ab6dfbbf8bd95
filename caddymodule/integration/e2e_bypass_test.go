package integration

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
		// Targets Go reads as a path where a URL parser would not: any
		// scheme with a path, and a raw "#", which Go keeps in the path
		// and reverse_proxy forwards as %23.
		"x:/private/x",
		"http:/private/x",
		"x:/pub/../private/x",
		"/x#/../private/x",
		"/robots.txt#/../private/x",
		"/robots.txt%23/../private/x",
		"/robots.txt/../private/x",
	} {
		r := c.raw(0, "GET", target, "GPTBot/1.2")
		if r.status != http.StatusForbidden || r.body != "denied\n" {
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
		// An opaque URL is no path the handler can read as the origin
		// will: it fails closed.
		{"GET", "x:private/x", 403, "deny|unreadable_target|GPTBot||"},
	} {
		r := c.raw(0, tc.method, tc.target, "GPTBot/1.2")
		if r.status != tc.status || r.header.Get("X-Robots") != tc.robots {
			t.Errorf("%s %s by GPTBot = %d, X-Robots %q; want %d, %q", tc.method, tc.target, r.status, r.header.Get("X-Robots"), tc.status, tc.robots)
		}
	}
}

// Headers some origins serve instead of the request's path are judged too:
// a crawler cannot ask for an allowed path and be served a disallowed one.
func TestE2ERewriteHeaders(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText("User-agent: *\nDisallow: /private/\n")})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied",
	})
	for _, tc := range []struct {
		header string
		status int
	}{
		{"X-Original-URL: /private/x", 403},
		{"X-Rewrite-URL: /private/x?a=1", 403},
		{"X-Original-URL: http://example.test/private/x", 403},
		{"X-Original-URL: x:opaque", 403},
		{"X-Forwarded-Prefix: /private", 403},
		{"X-Original-URL: /public/y", 200},
		{"X-Forwarded-Prefix: /public", 200},
	} {
		if r := c.raw(0, "GET", "/public/x", "GPTBot/1.2", tc.header); r.status != tc.status {
			t.Errorf("GET /public/x with %q by GPTBot = %d, want %d", tc.header, r.status, tc.status)
		}
		if r := c.raw(0, "GET", "/public/x", e2eBrowser, tc.header); r.status != http.StatusOK {
			t.Errorf("GET /public/x with %q by a browser = %d, want 200", tc.header, r.status)
		}
	}
	recs := c.records(5)
	if len(recs) < 1 || recs[0].str("reading") != "rewrite_header" {
		t.Errorf("records of the denials: %s; want reading rewrite_header", e2eDump(recs))
	}
}

// Inside handle_path the handler judges the path the client sent (robots.txt
// belongs to the site), and says once that the robots.txt it fetches through
// its own route may not be the site's.
func TestE2EAfterPathRewrite(t *testing.T) {
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	handle_path /app/* {
		robots_enforce {
			body denied
		}
		respond /robots.txt "User-agent: *
Disallow: /app/private/
"
		respond "app {path}"
	}
}
`, nil)
	for range 2 {
		if r := c.get(0, "", "/app/private/x", e2eCrawler); r.status != http.StatusForbidden {
			t.Errorf("GET /app/private/x by curl = %d %q, want 403 (the path as sent)", r.status, r.body)
		}
	}
	warned := c.linesWhere("caddy.log", "http.robots_enforce", 1, func(rec e2eRecord) bool {
		return rec.str("level") == "warn" && rec.str("sent_path") == "/app/private/x"
	})
	if len(warned) != 1 {
		t.Errorf("warnings: %s, want one", e2eDump(warned))
	}
}
