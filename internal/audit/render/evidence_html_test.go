package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestEvidenceHTMLSelfContained checks that the evidence page runs and
// fetches nothing, links only within itself, escapes what the records
// say, and cites each line it links to.
func TestEvidenceHTMLSelfContained(t *testing.T) {
	ev := evidenceBadBot(t)
	ev.Sites[0].Violations[0].Target = "/<script>alert(1)</script>"
	var b bytes.Buffer
	if err := EvidenceHTML(&b, ev); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<img", "<link", "<iframe", "<object", "<embed", "<base", "src=", "url(", "@import"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if m := regexp.MustCompile(`(?i)<[^>]*\son[a-z]+=`).FindString(page); m != "" {
		t.Errorf("the page has an event handler: %s", m)
	}
	hrefs := regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(hrefs) != 3 {
		t.Errorf("%d links, want one per cited line (3)", len(hrefs))
	}
	for _, h := range hrefs {
		id := strings.TrimPrefix(h[1], "#")
		if !strings.HasPrefix(h[1], "#") || !strings.Contains(page, `<tr id="`+id+`" class="cited">`) {
			t.Errorf("link %s: not to a cited line of the page", h[1])
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "Disallow: /drafts/", ev.Sites[0].Versions[0].SHA256, ev.Sites[0].Rows[0].Proven} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
