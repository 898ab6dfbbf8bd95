package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// With a source other than upstream, crawlers read the file that is
// enforced: GET and HEAD /robots.txt are answered from it, with conditional
// requests, even by a site that has no robots.txt of its own, and the
// crawler that read it is tied to its version.
func TestE2EServesEnforcedRobotsTxt(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte("home"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "robots.txt")
	const fromFile = "User-agent: *\nDisallow: /private/\n"
	if err := os.WriteFile(file, []byte(fromFile), 0o644); err != nil {
		t.Fatal(err)
	}
	const inline = "User-agent: GPTBot\nDisallow: /\n"
	c := e2eStart(t, 3, `
http://:<PORT0> {
	bind 127.0.0.1
	root * <ROOT>
	robots_enforce {
		source inline <<TXT
			User-agent: GPTBot
			Disallow: /
			TXT
	}
	file_server
}
http://:<PORT1> {
	bind 127.0.0.1
	root * <ROOT>
	robots_enforce {
		source file <FILE>
	}
	file_server
}
http://:<PORT2> {
	bind 127.0.0.1
	root * <ROOT>
	robots_enforce {
		source file <FILE>
		serve_robots origin
	}
	file_server
}
`, map[string]string{"<ROOT>": filepath.ToSlash(root), "<FILE>": filepath.ToSlash(file)})
	for _, tc := range []struct {
		port int
		body string
	}{{0, inline}, {1, fromFile}} {
		r := c.get(tc.port, "", "/robots.txt", e2eGPTBot)
		if r.status != http.StatusOK || r.body != tc.body || r.header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			r.header.Get("ETag") != `"`+e2eHash(tc.body)+`"` || r.header.Get("Last-Modified") == "" {
			t.Errorf("port %d: GET /robots.txt = %d %q, %v; want 200 with the enforced file, its ETag and Last-Modified", tc.port, r.status, r.body, r.header)
		}
		etag := r.header.Get("ETag")
		if r := c.getWith(tc.port, "", "/robots.txt", e2eGPTBot, http.Header{"If-None-Match": {etag}}); r.status != http.StatusNotModified {
			t.Errorf("port %d: conditional GET /robots.txt = %d, want 304", tc.port, r.status)
		}
		if r := c.raw(tc.port, "HEAD", "/robots.txt", e2eGPTBot); r.status != http.StatusOK || r.body != "" {
			t.Errorf("port %d: HEAD /robots.txt = %d %q, want 200 without a body", tc.port, r.status, r.body)
		}
	}
	// The origin's own answer, when asked for: here none.
	if r := c.get(2, "", "/robots.txt", e2eGPTBot); r.status != http.StatusNotFound {
		t.Errorf("serve_robots origin: GET /robots.txt = %d, want file_server's 404", r.status)
	}
	// GPTBot read the file that bans it, by its token: its denial is
	// evidence that it was told.
	if r := c.get(0, "", "/", e2eGPTBot); r.status != http.StatusForbidden {
		t.Fatalf("GET / by GPTBot = %d, want 403", r.status)
	}
	recs := c.records(1)
	if rec := recs[len(recs)-1]; rec["served_robots"] != true || rec.str("served_hash") != e2eHash(inline) || rec.str("compliance") != "violation" {
		t.Errorf("record after reading the enforced file: %s", e2eDump(recs[len(recs)-1:]))
	}
}

// The AIPREF usage preference that robots.txt attaches to a path reaches
// the response as Content-Usage, for browsers and crawlers: the longest
// matching rule decides (draft-ietf-aipref-attach-05 §3.1). An origin's own
// field is kept unless content_usage override; content_usage off adds none.
func TestE2EContentUsage(t *testing.T) {
	site := func(port, mode string) string {
		return `
http://:<PORT` + port + `> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: *
			Allow: /
			Disallow: /private/
			Content-Usage: train-ai=n, search=y
			Content-Usage: /research/ train-ai=y
			TXT
		content_usage ` + mode + `
	}
	header /origin/* Content-Usage "train-ai=y, search=y"
	respond "page {path}"
}
`
	}
	c := e2eStart(t, 3, site("0", "header")+site("1", "override")+site("2", "off"), nil)
	for _, tc := range []struct {
		port       int
		ua, path   string
		want       string
		wantStatus int
	}{
		{0, e2eBrowser, "/research/paper", "train-ai=y", 200},
		{0, e2eCrawler, "/research/paper", "train-ai=y", 200},
		{0, e2eBrowser, "/blog/post", "train-ai=n, search=y", 200},
		{0, e2eGPTBot, "/blog/post", "train-ai=n, search=y", 200},
		{0, e2eCrawler, "/private/x", "", 403},
		{0, e2eBrowser, "/private/x", "", 200}, // no preference for a path the group disallows
		{0, e2eBrowser, "/origin/x", "train-ai=y, search=y", 200},
		{1, e2eBrowser, "/origin/x", "train-ai=n, search=y", 200},
		{2, e2eBrowser, "/blog/post", "", 200},
	} {
		r := c.get(tc.port, "", tc.path, tc.ua)
		if r.status != tc.wantStatus || r.header.Get("Content-Usage") != tc.want || len(r.header.Values("Content-Usage")) > 1 {
			t.Errorf("port %d: GET %s by %q = %d, Content-Usage %q; want %d, %q", tc.port, tc.path, tc.ua, r.status, r.header.Values("Content-Usage"), tc.wantStatus, tc.want)
		}
	}
}
