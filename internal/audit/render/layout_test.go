package render

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// layoutScript, put at the end of a copy of a page, measures the page as
// Chromium laid it out and writes what is cut into an element the DOM
// dump holds: the page wider than the window, an element reaching out of
// the window or out of its box, a text of a chart out of its SVG's view.
// What lies in a container that scrolls (overflow auto or scroll) is not
// cut: it scrolls. The page itself has no script; only the copy under
// test does.
const layoutScript = `<script>
(function () {
  var W = document.documentElement.clientWidth, bad = [];
  function name(el) {
    var s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (el.className && typeof el.className === "string") s += "." + el.className.split(" ").join(".");
    return s + " \"" + (el.textContent || "").trim().slice(0, 60) + "\"";
  }
  function scrolls(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll") return true;
    }
    return false;
  }
  if (document.documentElement.scrollWidth > W + 1) bad.push("the page is " + document.documentElement.scrollWidth + " px wide, the window " + W);
  var all = document.body.querySelectorAll("*");
  for (var i = 0; i < all.length; i++) {
    var el = all[i], r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0 || el.closest("svg") || scrolls(el)) continue;
    if (r.right > W + 1 || r.left < -1) bad.push("out of the window (" + Math.round(r.left) + " to " + Math.round(r.right) + "): " + name(el));
    var cs = getComputedStyle(el);
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && cs.overflowX !== "auto" && cs.overflowX !== "scroll") bad.push("out of its box (" + el.scrollWidth + " > " + el.clientWidth + "): " + name(el));
  }
  var svgs = document.querySelectorAll("svg");
  for (var j = 0; j < svgs.length; j++) {
    var vb = svgs[j].viewBox.baseVal, texts = svgs[j].querySelectorAll("text");
    for (var k = 0; k < texts.length; k++) {
      var b = texts[k].getBBox();
      if (b.x < -0.5 || b.x + b.width > vb.width + 0.5) bad.push("cut in its chart (" + Math.round(b.x) + " to " + Math.round(b.x + b.width) + " of " + vb.width + "): " + name(texts[k]));
    }
  }
  var pre = document.createElement("pre");
  pre.id = "layout-report";
  pre.textContent = bad.length ? bad.join("\n") : "nothing cut";
  document.body.appendChild(pre);
})();
</script>`

// layoutCut renders page in headless Chromium, offline, in a window width
// px wide, with every details element open, and returns what is cut.
func layoutCut(t *testing.T, page []byte, width int) string {
	t.Helper()
	page = regexp.MustCompile(`<details([ >])`).ReplaceAll(page, []byte("<details open$1"))
	page = bytes.Replace(page, []byte("</body>"), []byte(layoutScript+"</body>"), 1)
	dom := chromiumDOM(t, page, "lay the pages out", "--hide-scrollbars", "--window-size="+strconv.Itoa(width)+",1000")
	m := regexp.MustCompile(`(?s)<pre id="layout-report">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("chromium ran no layout check:\n%.2000s", dom)
	}
	return strings.ReplaceAll(string(m[1]), "&quot;", `"`)
}

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
			if cut := layoutCut(t, page.html, width); cut != "nothing cut" {
				t.Errorf("%s at %d px:\n%s", page.name, width, cut)
			}
		}
	}
}
