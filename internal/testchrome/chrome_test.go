package testchrome

import (
	"strings"
	"testing"
)

// TestLayoutCut checks that the layout check finds what it looks for: a
// page wider than the window, and a text out of its chart; and passes a
// page whose wide table is in a box that scrolls.
func TestLayoutCut(t *testing.T) {
	const head = `<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0;font:14px sans-serif}</style></head><body>`
	for _, tt := range []struct {
		name, body, want string
	}{
		{"too wide", `<div style="width:1200px">wide</div>`, "the page is"},
		{"scrolls in its box", `<div style="overflow-x:auto"><table><tr><td style="min-width:1200px">wide</td></tr></table></div>`, NothingCut},
		{"text out of its chart", `<svg viewBox="0 0 100 20" width="100" height="20"><text x="60" y="15">a label far too long for its chart</text></svg>`, "cut in its chart"},
	} {
		got := LayoutCut(t, []byte(head+tt.body+`</body></html>`), 800)
		if !strings.Contains(got, tt.want) || tt.want == NothingCut && got != NothingCut {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
