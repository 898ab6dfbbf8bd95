package render

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testchrome"
)

// TestLayoutInChromium lays the HTML report and the evidence out in
// headless Chromium at 1,300 and 800 px, and checks that nothing is cut:
// no chart label out of its chart (the denial bar's label with its
// protective and grace counts included), no text out of the window or its
// box. The report's wide tables scroll in their own boxes; the evidence
// has none.
func TestLayoutInChromium(t *testing.T) {
	// The logs of the HTML tests, and a row with many denials of every
	// kind: its bar's label is the longest, "67 (+67 protective, +66
	// grace)".
	var extra strings.Builder
	for i := range 200 {
		compliance := []string{"violation", "protective", "grace"}[i%3]
		extra.WriteString(decision("ExampleCrawlerWithALongName", "deny", compliance, "site", "https://a-rather-long-host-name.example.com", "uri", "/p"+strconv.Itoa(i)))
	}
	a := audit.New(audit.Options{})
	readLog(t, a, "compliance.log")
	for _, name := range v2Logs {
		readLog(t, a, name)
	}
	for name, log := range map[string]string{"evil.log": htmlEvilRecord, "long.log": extra.String()} {
		readText(t, a, name, log)
	}
	var report bytes.Buffer
	if err := HTML(&report, a.Report()); err != nil {
		t.Fatal(err)
	}
	ev := evidenceBadBot(t)
	ev.Sites[0].Violations[0].Target = "/" + strings.Repeat("very-long-segment-without-a-break", 40) + "?q=1"
	var evidence bytes.Buffer
	if err := EvidenceHTML(&evidence, ev); err != nil {
		t.Fatal(err)
	}
	for _, page := range []struct {
		name string
		html []byte
	}{{"report", report.Bytes()}, {"evidence", evidence.Bytes()}} {
		for _, width := range []int{1300, 800} {
			if cut := testchrome.LayoutCut(t, page.html, width); cut != testchrome.NothingCut {
				t.Errorf("%s at %d px:\n%s", page.name, width, cut)
			}
		}
	}
}
