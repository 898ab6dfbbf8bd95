package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testchrome"
)

// htmlEvilRecord names its agent, host and path with markup, to check that
// the HTML report escapes record-derived text.
const htmlEvilRecord = `{"ts":1795295011.5,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"evil.example\"><img src=x onerror=alert(1)>","uri":"/<script>alert(2)</script>","agent":"<b>EvilBot</b>","verdict":"deny","grace":false,"agent_fetched_robots":false,"robots_hash":"</svg><svg onload=alert(3)>"}` + "\n"

// htmlReport returns the report of compliance.log, the version 2 logs and
// the evil record, and its HTML.
func htmlReport(t *testing.T) (*audit.Report, []byte) {
	t.Helper()
	a := audit.New(audit.Options{})
	readLog(t, a, "compliance.log")
	for _, name := range v2Logs {
		readLog(t, a, name)
	}
	readText(t, a, "evil.log", htmlEvilRecord)
	r := a.Report()
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return r, b.Bytes()
}

// TestHTMLSelfContained checks that the page fetches nothing and runs no
// script: no element that loads or runs anything, no attribute that names
// a resource or a handler, no CSS that imports; and that record-derived
// text is escaped.
func TestHTMLSelfContained(t *testing.T) {
	_, page := htmlReport(t)
	// html/template escapes quotes and angle brackets in text and in
	// attribute values, so tags and attributes can be found by pattern.
	tags := regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9]*)((?:\s+[a-zA-Z:-]+(?:="[^"]*")?)*)\s*/?>`)
	attrs := regexp.MustCompile(`\s([a-zA-Z:-]+)(?:="[^"]*")?`)
	found := tags.FindAllSubmatch(page, -1)
	if len(found) < 100 {
		t.Fatalf("found %d tags in the page; the pattern is broken", len(found))
	}
	for _, m := range found {
		switch name := strings.ToLower(string(m[1])); name {
		case "script", "img", "link", "iframe", "object", "embed", "image", "use", "foreignobject", "base", "b":
			t.Errorf("the page has a <%s> element: %s", name, m[0])
		}
		for _, a := range attrs.FindAllSubmatch(m[2], -1) {
			if name := strings.ToLower(string(a[1])); name == "src" || name == "href" || name == "xlink:href" || strings.HasPrefix(name, "on") {
				t.Errorf("the page has a %s attribute: %s", name, m[0])
			}
		}
	}
	for _, bad := range []string{"url(", "@import"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page's style contains %q", bad)
		}
	}
	for _, want := range []string{"&lt;b&gt;EvilBot&lt;/b&gt;", "/&lt;script&gt;alert(2)&lt;/script&gt;", "&lt;/svg&gt;&lt;svg onload=alert(3)&gt;"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page does not show %q escaped", want)
		}
	}
}

// TestHTMLInChromium renders the HTML report in headless Chromium, offline,
// and checks in the DOM it built that the summary table has a row per
// crawler, the violations chart a bar per violating crawler with a
// segment per kind of denial, and each crawler's chart over time a
// segment per verdict and bucket; and that no markup from the records
// became an element.
func TestHTMLInChromium(t *testing.T) {
	r, page := htmlReport(t)
	dom := testchrome.DOM(t, page, "render the HTML report")

	var rows, bars, barSegs, protectiveSegs, timelines, tlSegs int
	for i := range r.Crawlers {
		c := &r.Crawlers[i]
		rows++
		timelines++
		if c.Denied > 0 {
			bars++
			for _, n := range []int64{c.ViolationsAfterFetch, c.Violations - c.ViolationsAfterFetch, c.Protective, c.Grace} {
				if n > 0 {
					barSegs++
				}
			}
			if c.Protective > 0 {
				protectiveSegs++
			}
		}
		for j := range r.Buckets.Count {
			b := c.Series.At(j)
			for _, n := range []int64{b.Allowed, b.Violations, b.Grace, b.Protective} {
				if n > 0 {
					tlSegs++
				}
			}
		}
	}
	count := func(re string) int { return len(regexp.MustCompile(re).FindAll(dom, -1)) }
	for _, c := range []struct {
		what string
		re   string
		want int
	}{
		{"summary tables", `<table id="summary-table">`, 1},
		{"summary rows", `<tr class="crawler[ "]`, rows},
		{"violations charts", `<svg id="violations-chart"`, 1},
		{"bars", `<g class="bar-row"`, bars},
		{"bar segments", `<rect class="bar (after-fetch|before-fetch|protective|grace)"`, barSegs},
		{"protective bar segments", `<rect class="bar protective"`, protectiveSegs},
		{"charts over time", `<figure class="timeline"`, timelines},
		{"segments over time", `<rect class="seg (allowed|violations|grace|protective)"`, tlSegs},
		{"forgeries tables", `<table id="forgeries-table">`, 1},
		{"forgery rows", `<tr class="forgery"`, len(r.Forgeries)},
		{"rows of GPTBot, none of them forged", `<tr class="crawler[^"]*" data-agent="GPTBot" data-host="[^"]*" data-identity="(none|verified)"`, 3},
		// A browser at ExampleBot's address fetched robots.txt at 10:00:08:
		// that fetch is not ExampleBot's.
		{"ExampleBot not credited with a browser's fetch", `data-agent="ExampleBot"[^\n]*<td class="time fetched">no</td>`, 1},
		{"bingbot linked by its own fetch", `data-agent="bingbot"[^\n]*<td class="time fetched">yes \(client\)<span class="sub">2026-11-22 10:00:12</span></td>`, 1},
		{"AhrefsBot in both modes", `data-agent="AhrefsBot"[^\n]*<td class="mode">enforce\+log</td>`, 1},
		{"bingbot's protective denial", `data-agent="bingbot" data-host="https://www.example.com" data-identity="verified">[^\n]*<td class="num protective">1</td>`, 1},
		{"Googlebot's grace denial", `data-agent="Googlebot"[^\n]*<td class="num grace">1</td>`, 1},
		{"the forged GPTBot", `<tr class="forgery" data-agent="GPTBot" data-host="https://www.example.com"><td>forged GPTBot</td>`, 1},
		{"elements from records", `<(img|script|b)[ >]`, 0},
	} {
		if got := count(c.re); got != c.want {
			t.Errorf("%s: %d in the rendered DOM, want %d", c.what, got, c.want)
		}
	}
	if bars < 2 || tlSegs < 10 || protectiveSegs < 2 || len(r.Forgeries) != 1 {
		t.Errorf("too little drawn to check: %d bars, %d protective, %d segments over time, %d forgeries", bars, protectiveSegs, tlSegs, len(r.Forgeries))
	}
	// A bar's width follows its count: GPTBot's 8 violations are the
	// longest bar, all after a robots.txt fetch.
	gpt := regexp.MustCompile(`<g class="bar-row" data-agent="GPTBot" data-host="www.example.com">\s*<text[^>]*>[^<]*<title>[^<]*</title></text>\s*<rect class="bar after-fetch" x="400.0" y="[0-9.]+" width="480.0"`)
	if !gpt.Match(dom) {
		t.Errorf("GPTBot's bar is not the full-width after-fetch bar:\n%s", firstMatch(dom, `<g class="bar-row" data-agent="GPTBot"[^§]{0,400}`))
	}
}

func firstMatch(b []byte, re string) string {
	return string(regexp.MustCompile(re).Find(b))
}
