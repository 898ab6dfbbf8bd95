// Package testchrome renders pages in headless Chromium for the tests of
// the HTML the audit writes: the report's and the evidence's DOM as a
// browser builds it, and what its layout cuts. Chromium runs offline, on
// a copy of the page in the test's directory, bounded in time; without
// Debian's chromium package, a test that asks for it is skipped, saying
// what it would have checked. It is imported by tests only.
package testchrome

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Path is where Debian's chromium package installs the browser.
const Path = "/usr/bin/chromium"

// timeout bounds one run of the browser.
const timeout = 2 * time.Minute

// DOM renders page in headless Chromium, offline, with flags added to its
// own, and returns the DOM it built. Without Chromium the test is skipped,
// saying it could not check what (as "render the HTML report").
func DOM(t testing.TB, page []byte, what string, flags ...string) []byte {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		t.Skipf("%s not found: install Debian's chromium package (apt-get install chromium) to %s", Path, what)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "page.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"}, flags...)
	args = append(args, "--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+file)
	cmd := exec.CommandContext(ctx, Path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return dom
}

// NothingCut is what LayoutCut returns for a page whose layout cuts
// nothing.
const NothingCut = "nothing cut"

// LayoutCut lays page out in headless Chromium, offline, in a window
// width px wide, with every details element open, and returns what is
// cut, one line each, or NothingCut: the page wider than the window, an
// element reaching out of the window or out of its box, a text of a chart
// out of its SVG's view. What lies in a container that scrolls (overflow
// auto or scroll) is not cut: it scrolls.
func LayoutCut(t testing.TB, page []byte, width int) string {
	t.Helper()
	page = regexp.MustCompile(`<details([ >])`).ReplaceAll(page, []byte("<details open$1"))
	page = bytes.Replace(page, []byte("</body>"), []byte(layoutScript+"</body>"), 1)
	dom := DOM(t, page, "lay the page out", "--hide-scrollbars", "--window-size="+strconv.Itoa(width)+",1000")
	m := regexp.MustCompile(`(?s)<pre id="layout-report">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("chromium ran no layout check:\n%.2000s", dom)
	}
	return strings.ReplaceAll(string(m[1]), "&quot;", `"`)
}

// layoutScript, put at the end of a copy of a page, measures the page as
// Chromium laid it out and writes what is cut into an element the DOM
// dump holds. The pages under test have no script; only the copy does.
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
