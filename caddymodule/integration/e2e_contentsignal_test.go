package integration

import (
	"net/http"
	"testing"
)

// Cloudflare's Content-Signal lines (contentsignals.org), which millions of
// robots.txt files carry, reach responses through a real Caddy as the
// AIPREF Content-Usage field (draft-ietf-aipref-attach-05 §2): search as
// search, ai-train as train-ai, ai-input as ai-use, yes as y and no as n.
// A group's Content-Signal and Content-Usage lines combine, any n winning
// (draft-ietf-aipref-vocab-08 §5.1); a named group's lines replace the "*"
// group's; a path the group disallows carries none (attach-05 §3.1); and
// a preference line between user-agent lines joins them into one group
// (docs/rfc9309.md, "Deviations").
func TestE2EContentSignal(t *testing.T) {
	c := e2eStart(t, 3, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: *
			Content-Signal: search=yes, ai-train=no
			Allow: /
			Disallow: /private/
			TXT
	}
	respond "page {path}"
}
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: *
			Allow: /
			Content-Signal: search=yes, ai-train=no, ai-input=no
			Content-Usage: /research/ search=n
			Content-Signal: /open/ ai-train=yes, ai-input=yes

			User-agent: GPTBot
			Disallow: /private/
			Content-Signal: search=no
			Content-Usage: ai-use=y
			TXT
	}
	respond "page {path}"
}
http://:<PORT2> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: GPTBot
			Content-Signal: ai-train=no
			User-agent: *
			Disallow: /x
			TXT
	}
	respond "page {path}"
}
`, nil)
	for _, tc := range []struct {
		port       int
		ua, path   string
		want       string
		wantStatus int
	}{
		// Content-Signal alone.
		{0, e2eBrowser, "/blog/post", "train-ai=n, search=y", http.StatusOK},
		{0, e2eCrawler, "/blog/post", "train-ai=n, search=y", http.StatusOK},
		{0, e2eCrawler, "/private/x", "", http.StatusForbidden},
		{0, e2eBrowser, "/private/x", "", http.StatusOK},
		// Content-Signal and Content-Usage in one group: the longest
		// line of each kind, the two combined.
		{1, e2eBrowser, "/blog/post", "train-ai=n, ai-use=n, search=y", http.StatusOK},
		{1, e2eCrawler, "/research/paper", "train-ai=n, ai-use=n, search=n", http.StatusOK},
		{1, e2eCrawler, "/open/data", "train-ai=y, ai-use=y", http.StatusOK},
		{1, e2eGPTBot, "/blog/post", "ai-use=y, search=n", http.StatusOK},
		{1, e2eGPTBot, "/private/x", "", http.StatusForbidden},
		// One group for GPTBot and "*": its preference is everyone's.
		{2, e2eCrawler, "/a", "train-ai=n", http.StatusOK},
		{2, e2eCrawler, "/x", "", http.StatusForbidden},
	} {
		r := c.get(tc.port, "", tc.path, tc.ua)
		if r.status != tc.wantStatus || r.header.Get("Content-Usage") != tc.want || len(r.header.Values("Content-Usage")) > 1 {
			t.Errorf("port %d: GET %s by %q = %d, Content-Usage %q; want %d, %q",
				tc.port, tc.path, tc.ua, r.status, r.header.Values("Content-Usage"), tc.wantStatus, tc.want)
		}
	}
}
