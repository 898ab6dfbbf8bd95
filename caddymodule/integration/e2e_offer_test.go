package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// e2eLifted is e2eRobots once the site lifts GPTBot's ban.
const e2eLifted = "User-agent: GPTBot\nAllow: /\n"

// e2eAfterOfferInterval waits until a client's robots.txt answer may
// start a fetch (robotstxt.OfferInterval).
func e2eAfterOfferInterval() {
	time.Sleep(robotstxt.OfferInterval + 50*time.Millisecond)
}

// e2eEventually polls cond until it holds or e2eTimeout passes, and
// reports whether it held.
func e2eEventually(cond func() bool) bool {
	for deadline := time.Now().Add(e2eTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// A crawler that reads a changed robots.txt is judged by it soon after:
// the site's answer to the crawler's own GET /robots.txt, when it is not
// the version in force, makes the handler fetch the file again with its
// own request, long before its refresh is due. The client's answer is
// never taken as the file: a site that varies robots.txt by User-Agent
// keeps the file the handler's own request gets. Answers that may not be
// what every client gets (an error for crawlers, a range, a query) change
// nothing.
func TestE2EClientRobotsTxtRefreshes(t *testing.T) {
	var mu sync.Mutex
	robots := e2eRobots
	blockGPTBot := false // a firewall's 403 to GPTBot
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, block := robots, blockGPTBot
		mu.Unlock()
		switch ua := r.Header.Get("User-Agent"); {
		case block && ua == e2eGPTBot:
			e2eStatus(http.StatusForbidden)(w, r)
			return
		case strings.Contains(ua, "Googlebot"):
			body = "User-agent: *\nAllow: /\n" // a variant for one crawler only
		}
		http.ServeContent(w, r, "robots.txt", time.Time{}, strings.NewReader(body))
	}})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": ""})
	deniedBefore := func(step string) {
		t.Helper()
		if r := c.get(0, "site.test", "/private/x", e2eGPTBot); r.status != http.StatusForbidden {
			t.Fatalf("%s: GET /private/x by GPTBot = %d, want 403 under the copy in force", step, r.status)
		}
	}
	deniedBefore("first")
	e2eAfterOfferInterval()

	// A variant served to one crawler starts a fetch, whose answer (the
	// file everyone else gets) stays in force.
	if r := c.get(0, "site.test", "/robots.txt", "Googlebot/2.1 (+http://www.google.com/bot.html)"); r.status != http.StatusOK {
		t.Fatalf("GET /robots.txt by Googlebot = %d", r.status)
	}
	if !e2eEventually(func() bool { return up.count("site.test", "/robots.txt") == 3 }) {
		t.Fatalf("upstream saw %d requests for /robots.txt after a variant's answer, want 3 (the handler's refetch)", up.count("site.test", "/robots.txt"))
	}
	deniedBefore("after a variant's answer")
	e2eAfterOfferInterval()

	mu.Lock()
	robots, blockGPTBot = e2eLifted, true
	mu.Unlock()
	// Answers that say nothing about the file everyone gets.
	if r := c.get(0, "site.test", "/robots.txt", e2eGPTBot); r.status != http.StatusForbidden {
		t.Fatalf("GET /robots.txt by GPTBot = %d, want the firewall's 403", r.status)
	}
	deniedBefore("after the firewall's 403")
	if r := c.getWith(0, "site.test", "/robots.txt", e2eBrowser, http.Header{"Range": {"bytes=0-9"}}); r.status != http.StatusPartialContent {
		t.Fatalf("ranged GET /robots.txt = %d, want 206", r.status)
	}
	if r := c.getWith(0, "site.test", "/robots.txt", e2eBrowser, http.Header{"Range": {"bytes=0-999"}}); r.status != http.StatusPartialContent {
		t.Fatalf("ranged GET /robots.txt for the whole file = %d, want 206", r.status)
	}
	if r := c.get(0, "site.test", "/robots.txt?v=2", e2eBrowser); r.body != e2eLifted {
		t.Fatalf("GET /robots.txt?v=2 = %d %q, want the new file", r.status, r.body)
	}
	deniedBefore("after partial and query answers")
	before := up.count("site.test", "/robots.txt")

	// A plain GET: the client gets the file untouched, and the handler
	// fetches it again.
	if r := c.get(0, "site.test", "/robots.txt", e2eBrowser); r.status != http.StatusOK || r.body != e2eLifted {
		t.Fatalf("GET /robots.txt = %d %q, want 200 and the new file", r.status, r.body)
	}
	if !e2eEventually(func() bool { return c.get(0, "site.test", "/private/x", e2eGPTBot).status == http.StatusOK }) {
		t.Errorf("GET /private/x by GPTBot after the new file passed: still denied")
	}
	if n, ua := up.count("site.test", "/robots.txt"), up.agent("site.test", "/robots.txt"); n != before+2 || ua != e2eInternal {
		t.Errorf("upstream saw %d requests for /robots.txt, the last from %q; want %d, the last the handler's own", n, ua, before+2)
	}
}

// file_server hands a file to the connection with ReadFrom (sendfile):
// the handler must still see the body it names a version of.
func TestE2EClientRobotsTxtRefreshesFileServer(t *testing.T) {
	root := t.TempDir()
	robots := filepath.Join(root, "robots.txt")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(robots, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(e2eRobots)
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	root * <ROOT>
	robots_enforce
	file_server
}
`, map[string]string{"<ROOT>": filepath.ToSlash(root)})
	if r := c.get(0, "", "/private/x", e2eGPTBot); r.status != http.StatusForbidden {
		t.Fatalf("GET /private/x by GPTBot = %d, want 403", r.status)
	}
	// The new file moves the ban: a body the handler failed to see would
	// read as an empty file, which allows everything.
	const moved = "User-agent: GPTBot\nDisallow: /drafts/\n"
	write(moved)
	e2eAfterOfferInterval()
	if r := c.get(0, "", "/robots.txt", e2eGPTBot); r.status != http.StatusOK || r.body != moved {
		t.Fatalf("GET /robots.txt = %d %q, want 200 and the new file", r.status, r.body)
	}
	if !e2eEventually(func() bool { return c.get(0, "", "/private/x", e2eGPTBot).status == http.StatusNotFound }) {
		t.Errorf("GET /private/x by GPTBot after reading the new file: never file_server's 404")
	}
	if r := c.get(0, "", "/drafts/x", e2eGPTBot); r.status != http.StatusForbidden {
		t.Errorf("GET /drafts/x by GPTBot after reading the new file = %d, want 403", r.status)
	}
}

// What the handler learns about a site's robots.txt is logged, under its
// robots_txt logger: the file in force, a change (here found by the fetch
// a client's own request started), and, as a warning, a file that cannot
// be fetched.
func TestE2ERobotsTxtLog(t *testing.T) {
	var mu sync.Mutex
	robots := e2eRobots
	up := e2eNewUpstream(t, map[string]e2eRoute{
		"site.test /robots.txt": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			body := robots
			mu.Unlock()
			e2eText(body)(w, r)
		},
		"down.test /robots.txt": e2eStatus(http.StatusServiceUnavailable),
	})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "log", "<OPTIONS>": ""})
	c.get(0, "site.test", "/page", e2eGPTBot)
	mu.Lock()
	robots = e2eLifted
	mu.Unlock()
	e2eAfterOfferInterval()
	c.get(0, "site.test", "/robots.txt", e2eBrowser)
	const logger = "http.robots_enforce.robots_txt"
	c.lines("caddy.log", logger, 2) // the change, found by the fetch the client's answer started
	c.get(0, "down.test", "/page", e2eGPTBot)

	lines := c.lines("caddy.log", logger, 3)
	source := "http://site.test/robots.txt"
	want := []e2eRecord{
		{"level": "info", "msg": "robots.txt in force", "host": "site.test", "robots_source": source,
			"access": "available", "http_status": 200.0, "robots_hash": e2eHash(e2eRobots), "previous_hash": ""},
		{"level": "info", "msg": "robots.txt in force", "host": "site.test", "robots_source": source,
			"access": "available", "http_status": 200.0, "robots_hash": e2eHash(e2eLifted), "previous_hash": e2eHash(e2eRobots)},
		{"level": "warn", "msg": "robots.txt could not be fetched", "host": "down.test", "robots_source": "http://down.test/robots.txt",
			"access": "unreachable", "http_status": 503.0, "failures": 1.0, "disallow_all": true},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines of %s, want %d:\n%s", len(lines), logger, len(want), e2eDump(lines))
	}
	for i, w := range want {
		for k, v := range w {
			if got := lines[i][k]; got != v && !(v == "" && got == nil) {
				t.Errorf("line %d: %s = %v, want %v\n%s", i, k, got, v, e2eDump(lines[i:i+1]))
			}
		}
		if w["level"] == "warn" && lines[i].str("error") == "" {
			t.Errorf("line %d: no error\n%s", i, e2eDump(lines[i:i+1]))
		}
	}
}
