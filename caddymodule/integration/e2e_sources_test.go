package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Besides the site's own file, robots.txt can come from a file, a URL or
// the configuration itself, and the site's own can be served by
// file_server: each is in force. (The denials have a body, so that the
// handler writes them and the deferred header applies; handle_errors
// answers with a writer of its own.)
func TestE2ESources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(file, []byte("# from a file\nUser-agent: GPTBot\nDisallow: /private/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dir, "site")
	if err := os.MkdirAll(filepath.Join(site, "private"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"robots.txt":     "#\n#\n#\n#\nUser-agent: GPTBot\nDisallow: /private/\n",
		"private/x.html": "private page",
		"public.html":    "public page",
	} {
		if err := os.WriteFile(filepath.Join(site, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	remote := e2eNewUpstream(t, map[string]e2eRoute{"/rules.txt": e2eText("#\n#\nUser-agent: GPTBot\nDisallow: /private/\n")})
	c := e2eStart(t, 4, `
(answer) {
	header >X-Robots "{http.robots_enforce.verdict} {http.robots_enforce.rule_line}"
	respond "page {path}"
}
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source file <FILE>
		body denied
	}
	import answer
}
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<EOF
			User-agent: GPTBot
			Disallow: /private/
			EOF
		body denied
	}
	import answer
}
http://:<PORT2> {
	bind 127.0.0.1
	robots_enforce {
		source url <URL>
		body denied
	}
	import answer
}
http://:<PORT3> {
	bind 127.0.0.1
	header >X-Robots "{http.robots_enforce.verdict} {http.robots_enforce.rule_line}"
	root * <SITE>
	robots_enforce {
		body denied
	}
	file_server
}
`, map[string]string{"<FILE>": filepath.ToSlash(file), "<URL>": remote.URL + "/rules.txt", "<SITE>": filepath.ToSlash(site)})

	for port, tc := range []struct {
		line, source, public string
	}{
		{"3", "file:" + filepath.ToSlash(file), "page /public.html"},
		{"2", "inline", "page /public.html"},
		{"4", remote.URL + "/rules.txt", "page /public.html"},
		{"6", "http://localhost:" + strings.TrimPrefix(c.addr(3), "127.0.0.1:") + "/robots.txt", "public page"}, // the site's scheme; the loopback by any address is "localhost"
	} {
		r := c.get(port, "", "/private/x.html", e2eGPTBot)
		if r.status != http.StatusForbidden || r.header.Get("X-Robots") != "deny "+tc.line {
			t.Errorf("port %d: GET /private/x.html by GPTBot = %d, X-Robots %q; want 403, %q", port, r.status, r.header.Get("X-Robots"), "deny "+tc.line)
		}
		if r := c.get(port, "", "/public.html", e2eGPTBot); r.status != http.StatusOK || r.body != tc.public {
			t.Errorf("port %d: GET /public.html by GPTBot = %d %q, want 200 %q", port, r.status, r.body, tc.public)
		}
		if r := c.get(port, "", "/private/x.html", e2eBrowser); r.status != http.StatusOK {
			t.Errorf("port %d: GET /private/x.html by a browser = %d, want 200", port, r.status)
		}
		recs := c.records(port + 1)
		if got := recs[port].str("robots_source"); got != tc.source {
			t.Errorf("port %d: robots_source %q, want %q", port, got, tc.source)
		}
	}
	if n, ua := remote.count(remote.Listener.Addr().String(), "/rules.txt"), remote.agent(remote.Listener.Addr().String(), "/rules.txt"); n != 1 || ua != e2eInternal {
		t.Errorf("the url source was fetched %d times by %q, want once by %q", n, ua, e2eInternal)
	}
	if r := c.get(3, "", "/robots.txt", e2eGPTBot); r.status != http.StatusOK || r.body != "#\n#\n#\n#\nUser-agent: GPTBot\nDisallow: /private/\n" {
		t.Errorf("file_server site: GET /robots.txt = %d %q, want 200 and the file", r.status, r.body)
	}
}

// How the upstream answers the handler's robots.txt request decides what is
// in force (RFC 9309 §2.3.1), per host: one site serves every host below
// from one upstream, which answers each differently.
func TestE2EUpstreamOutcomes(t *testing.T) {
	const gptbotPrivate = "User-agent: GPTBot\nDisallow: /private/\n"
	routes := map[string]e2eRoute{
		"notfound.test /robots.txt": e2eStatus(http.StatusNotFound),
		"error.test /robots.txt":    e2eStatus(http.StatusInternalServerError),
		"slow.test /robots.txt":     e2eSlow(3*time.Second, e2eText(gptbotPrivate)),
		"html.test /robots.txt": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!doctype html><html><body>Welcome!</body></html>")
		},
		"redirect.test /robots.txt":  e2eRedirect(http.StatusMovedPermanently, "/moved1"),
		"redirect.test /moved1":      e2eRedirect(http.StatusFound, "/moved2"),
		"redirect.test /moved2":      e2eText(gptbotPrivate),
		"redirect5.test /robots.txt": e2eRedirect(http.StatusMovedPermanently, "/r1"),
		"redirect6.test /robots.txt": e2eRedirect(http.StatusMovedPermanently, "/r1"),
		"a.test /robots.txt":         e2eText("User-agent: GPTBot\nDisallow: /a-only/\n"),
		"b.test /robots.txt":         e2eText("User-agent: GPTBot\nDisallow: /b-only/\n"),
	}
	// Chains of 5 and 6 redirects (RFC 9309 §2.3.1.2: follow at least
	// five), each ending in a file that disallows /private/ to GPTBot.
	for i := 1; i <= 6; i++ {
		next := e2eRedirect(http.StatusMovedPermanently, fmt.Sprintf("/r%d", i+1))
		if i == 5 {
			routes["redirect5.test /r5"] = e2eText(gptbotPrivate)
		} else if i < 5 {
			routes[fmt.Sprintf("redirect5.test /r%d", i)] = next
		}
		if i == 6 {
			next = e2eText(gptbotPrivate)
		}
		routes[fmt.Sprintf("redirect6.test /r%d", i)] = next
	}
	up := e2eNewUpstream(t, routes)
	c := e2eStart(t, 1, e2eProxySite, map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "fetch_timeout 1500ms\n\t\tbody denied", // slow.test takes 3s
	})

	for _, tc := range []struct {
		host, ua, path string
		status         int
		robots         string // X-Robots: verdict|reason|agent|rule|rule_line
	}{
		// 4xx: unavailable, everything allowed (§2.3.1.3).
		{"notfound.test", e2eGPTBot, "/private/x", 200, "allow|unavailable|GPTBot||"},
		{"notfound.test", e2eBrowser, "/private/x", 200, "allow|unavailable|||"},
		// 5xx, a timeout, an HTML page: unreachable, complete disallow
		// for crawlers (§2.3.1.4), browsers pass.
		{"error.test", e2eGPTBot, "/private/x", 403, "deny|unreachable|GPTBot||"},
		{"error.test", e2eGPTBot, "/public", 403, "deny|unreachable|GPTBot||"},
		{"error.test", e2eBrowser, "/private/x", 200, "allow|not_automated|||"},
		{"slow.test", e2eGPTBot, "/public", 403, "deny|unreachable|GPTBot||"},
		{"slow.test", e2eBrowser, "/public", 200, "allow|not_automated|||"},
		{"html.test", e2eGPTBot, "/public", 403, "deny|unreachable|GPTBot||"},
		{"html.test", e2eBrowser, "/public", 200, "allow|not_automated|||"},
		// Redirects on the same upstream are followed, up to five.
		{"redirect.test", e2eGPTBot, "/private/x", 403, "deny|named_group|GPTBot|/private/|2"},
		{"redirect.test", e2eGPTBot, "/public", 200, "allow|named_group|GPTBot||"},
		{"redirect5.test", e2eGPTBot, "/private/x", 403, "deny|named_group|GPTBot|/private/|2"},
		{"redirect6.test", e2eGPTBot, "/private/x", 200, "allow|unavailable|GPTBot||"},
		// Each host has its own robots.txt.
		{"a.test", e2eGPTBot, "/a-only/x", 403, "deny|named_group|GPTBot|/a-only/|2"},
		{"a.test", e2eGPTBot, "/b-only/x", 200, "allow|named_group|GPTBot||"},
		{"b.test", e2eGPTBot, "/a-only/x", 200, "allow|named_group|GPTBot||"},
		{"b.test", e2eGPTBot, "/b-only/x", 403, "deny|named_group|GPTBot|/b-only/|2"},
		{"b.test", e2eCrawler, "/b-only/x", 200, "allow|no_group|ExampleCrawler||"},
	} {
		r := c.get(0, tc.host, tc.path, tc.ua)
		if r.status != tc.status || r.header.Get("X-Robots") != tc.robots {
			t.Errorf("GET %s%s by %q = %d, X-Robots %q; want %d, %q", tc.host, tc.path, tc.ua, r.status, r.header.Get("X-Robots"), tc.status, tc.robots)
		}
	}
	// One fetch per host, by the handler, whatever the number of requests;
	// a failed one is not retried at once.
	for _, hp := range []string{
		"notfound.test /robots.txt", "error.test /robots.txt", "slow.test /robots.txt", "html.test /robots.txt",
		"redirect.test /robots.txt", "redirect.test /moved1", "redirect.test /moved2",
		"redirect5.test /r5", "redirect6.test /r5", "a.test /robots.txt", "b.test /robots.txt",
	} {
		host, path, _ := strings.Cut(hp, " ")
		if n, ua := up.count(host, path), up.agent(host, path); n != 1 || ua != e2eInternal {
			t.Errorf("upstream: %d requests for %s by %q, want 1 by %q", n, hp, ua, e2eInternal)
		}
	}
	if n := up.count("redirect6.test", "/r6"); n != 0 {
		t.Errorf("upstream: %d requests for redirect6.test/r6, the sixth redirect's target, want 0", n)
	}
}
