package render

import (
	"bytes"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// TestHTMLEscalations checks the page's table of escalations: a row each,
// and text from the records escaped.
func TestHTMLEscalations(t *testing.T) {
	a := audit.New(audit.Options{})
	readLog(t, a, escalatedLog)
	const t0 = 1795514400 // the log's first record
	readText(t, a, "evil.log", decision("<b>EvilBot</b>", "deny", "violation", "record_version", 3, "ts", t0+0.5,
		"escalation", "<i>block</i>", "escalated_since", t0, "escalated_until", t0+3600, "escalated_by", "/<script>alert(1)</script>",
		"escalation_began", true))
	r := a.Report()
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(page.Bytes(), []byte(`<tr class="escalation"`)); n != len(r.Escalations) || n != 7 {
		t.Errorf("%d escalation rows, want one for each of %d escalations (7)", n, len(r.Escalations))
	}
	for _, want := range []string{"&lt;b&gt;EvilBot&lt;/b&gt;", "/&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;i&gt;block&lt;/i&gt;",
		`<td class="num denied">2</td><td class="num violations">1</td><td><span class="path">/private/a</span><span class="sub">2026-11-24 10:00:00</span>`} {
		if !bytes.Contains(page.Bytes(), []byte(want)) {
			t.Errorf("the page does not show %q", want)
		}
	}
	for _, bad := range []string{"<b>EvilBot", "<script>", "<i>block"} {
		if bytes.Contains(page.Bytes(), []byte(bad)) {
			t.Errorf("the page has %q unescaped", bad)
		}
	}
}
