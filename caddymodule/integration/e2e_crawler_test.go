package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// The promise of the compliance records, checked with a crawler nobody
// here wrote: Scrapy (Debian's python3-scrapy, which .ci/run installs when
// it can), obeying robots.txt through its Protego parser, crawls a site
// whose pages link to legacy spellings of disallowed paths, with a
// User-Agent naming two groups. Through the handler, in log and in enforce
// mode, it is recorded with no violation; the same crawler with obedience
// switched off is recorded as a violator that never fetched robots.txt.

// e2eCrawlRobots names Scrapy and ExampleBot; the crawl's User-Agent names
// both, and Protego, like RFC 9309 allows, obeys ExampleBot's group.
const e2eCrawlRobots = `User-agent: Scrapy
Disallow: /

User-agent: ExampleBot
Disallow: /drafts/
Disallow: /docs/internal/
Disallow: /*.pdf$

User-agent: *
Disallow: /docs/internal/
Disallow: /drafts/
`

// e2eCrawlSite writes a site of linked pages into a new directory: 30
// ordinary pages, drafts, an internal area, a PDF, and links to the
// internal page and the PDF under spellings RFC 9309 §2.2.2 allows as sent
// (a doubled slash, an encoded slash, a path parameter).
func e2eCrawlSite(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("robots.txt", e2eCrawlRobots)
	var links strings.Builder
	for i := range 30 {
		fmt.Fprintf(&links, `<a href="/pages/p%d.html">page %d</a> `, i, i)
		write(fmt.Sprintf("pages/p%d.html", i), fmt.Sprintf(`<html><body><a href="/pages/p%d.html">next</a> <a href="/drafts/d%d.html">draft</a></body></html>`, (i+1)%30, i%3))
	}
	for i := range 3 {
		write(fmt.Sprintf("drafts/d%d.html", i), "<html><body>draft</body></html>")
	}
	write("docs/internal/notes.html", "<html><body>internal</body></html>")
	write("docs/manual.pdf", "%PDF-1.4 not really")
	write("docs/index.html", `<html><body>
		<a href="/docs/internal/notes.html">notes</a>
		<a href="/docs//internal/notes.html">notes, doubled slash</a>
		<a href="/docs/internal%2Fnotes.html">notes, encoded slash</a>
		<a href="/docs/manual.pdf">manual</a>
		<a href="/docs/manual.pdf;jsessionid=1A2B">manual, with a session</a>
	</body></html>`)
	write("index.html", `<html><body><a href="/docs/">docs</a> `+links.String()+`</body></html>`)
	return root
}

// e2eSpider is a Scrapy spider that follows every link of the site.
const e2eSpider = `
import scrapy

class Site(scrapy.Spider):
    name = "site"

    def __init__(self, start=None, **kw):
        super().__init__(**kw)
        self.start_urls = [start]

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
`

// e2eScrapy runs Scrapy against start with the User-Agent ua, obeying
// robots.txt or not, bounded in time; it skips the test when Scrapy is
// not installed. The crawler speaks from ip, through the test's trusted
// proxy (X-Forwarded-For), so that crawlers are not tied to each other's
// robots.txt fetches by their common loopback address.
func e2eScrapy(t *testing.T, start, ua, ip string, obey bool) {
	t.Helper()
	bin, err := exec.LookPath("scrapy")
	if err != nil {
		if _, serr := os.Stat("/usr/bin/scrapy"); serr != nil {
			t.Skip("Scrapy is not installed (Debian's python3-scrapy): the real-crawler test skips")
		}
		bin = "/usr/bin/scrapy"
	}
	dir := t.TempDir()
	spider := filepath.Join(dir, "spider.py")
	if err := os.WriteFile(spider, []byte(e2eSpider), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "runspider", spider, "-a", "start="+start,
		"-s", "USER_AGENT="+ua, "-s", fmt.Sprintf("ROBOTSTXT_OBEY=%v", obey),
		"-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO", "-s", "CLOSESPIDER_TIMEOUT=60",
		"-s", "CONCURRENT_REQUESTS=4", "-s", "DOWNLOAD_TIMEOUT=10", "-s", "RETRY_ENABLED=False",
		"-s", "HTTPERROR_ALLOW_ALL=True", "-s", `DEFAULT_REQUEST_HEADERS={"X-Forwarded-For": "`+ip+`"}`)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scrapy: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Spider closed (finished)") {
		t.Fatalf("scrapy did not finish its crawl:\n%s", out)
	}
}

// TestE2ERealCrawler: see the comment at the top of this file.
func TestE2ERealCrawler(t *testing.T) {
	if testing.Short() {
		t.Skip("a real crawler's crawl takes seconds")
	}
	const honest = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.net/bot) Scrapy/2.8.0"
	const rogue = "RogueBot/1.0 (+https://rogue.example/bot)"
	root := e2eCrawlSite(t)
	c := e2eStart(t, 2, `
http://:<PORT0> {
	bind 127.0.0.1
	root * <ROOT>
	robots_enforce log {
		log_allowed
	}
	file_server
}
http://:<PORT1> {
	bind 127.0.0.1
	root * <ROOT>
	robots_enforce
	file_server
}
`, map[string]string{"<ROOT>": filepath.ToSlash(root)})

	for port, mode := range []string{"log", "enforce"} {
		e2eScrapy(t, fmt.Sprintf("http://127.0.0.1:%d/", c.ports[port]), honest, "192.0.2.1", true)
		recs := c.linesWhere("robots.log", "http.handlers.robots_enforce", 1, func(r e2eRecord) bool {
			return r.str("msg") == record.MsgDecision && r.str("mode") == mode && r.str("agent") != "RogueBot"
		})
		counts := map[string]int{}
		for _, r := range recs {
			counts[r.str("compliance")]++
			if r.str("compliance") == "violation" {
				t.Errorf("%s mode: the obeying crawler was recorded as a violator: %s", mode, e2eDump([]e2eRecord{r}))
			}
		}
		if counts["protective"] == 0 {
			t.Errorf("%s mode: no protective denial of the legacy spellings; records by compliance: %v", mode, counts)
		}
		t.Logf("%s mode, obeying crawler: records by compliance %v", mode, counts)
	}

	// Obedience off: a violator, which never fetched robots.txt.
	e2eScrapy(t, fmt.Sprintf("http://127.0.0.1:%d/", c.ports[0]), rogue, "192.0.2.66", false)
	recs := c.linesWhere("robots.log", "http.handlers.robots_enforce", 1, func(r e2eRecord) bool {
		return r.str("msg") == record.MsgDecision && r.str("agent") == "RogueBot" && r.str("compliance") == "violation"
	})
	for _, r := range recs {
		if r["served_robots"] != false {
			t.Errorf("the rogue crawler never fetched robots.txt, but: %s", e2eDump([]e2eRecord{r}))
		}
	}
	t.Logf("rogue crawler: %d violations", len(recs))
}
