package integration

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// e2eStateSite is e2eProxySite with a metrics endpoint on a port of its own.
const e2eStateSite = e2eProxySite + `
http://:<PORT1> {
	bind 127.0.0.1
	metrics
}
`

// What the handler knows outlives config reloads and restarts: which
// versions of a site's robots.txt were in force, who was served which, and
// the counters. A crawler served the old version before a change is in
// grace for what only the new one disallows, across a reload and a
// restart; one that never fetched robots.txt violates what every version
// disallows, after them as before.
func TestE2EStateAcrossReloadAndRestart(t *testing.T) {
	const v1 = "User-agent: *\nDisallow: /private/\n"
	const v2 = "User-agent: *\nDisallow: /private/\nDisallow: /drafts/\n"
	var mu sync.Mutex
	robots := v1
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := robots
		mu.Unlock()
		e2eText(body)(w, r)
	}})
	vars := map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied"}
	c := e2eStart(t, 2, e2eStateSite, vars)
	const honest, other = "HonestBot/1.0 (+https://honest.example)", "OtherBot/1.0 (+https://other.example)"
	// Each client from an address of its own (the test speaks for them as
	// a trusted proxy), so that none is tied to another's fetch by IP.
	from := map[string]http.Header{
		honest:     {"X-Forwarded-For": {"192.0.2.1"}},
		other:      {"X-Forwarded-For": {"192.0.2.2"}},
		e2eBrowser: {"X-Forwarded-For": {"192.0.2.3"}},
	}
	get := func(path, ua string) e2eResponse { return c.getWith(0, "site.test", path, ua, from[ua]) }

	// HonestBot reads v1, the handler's version too; then the site
	// publishes v2, which the handler finds through a browser's fetch of
	// the new file.
	get("/public", honest)
	if r := get("/robots.txt", honest); r.body != v1 {
		t.Fatalf("GET /robots.txt = %q", r.body)
	}
	mu.Lock()
	robots = v2
	mu.Unlock()
	e2eAfterOfferInterval()
	get("/robots.txt", e2eBrowser)
	if !e2eEventually(func() bool { return get("/drafts/a", other).status == http.StatusForbidden }) {
		t.Fatal("v2 never came into force")
	}
	check := func(step, ua, path, compliance string, served bool) {
		t.Helper()
		if r := get(path, ua); r.status != http.StatusForbidden {
			t.Fatalf("%s: GET %s by %s = %d, want 403", step, path, ua, r.status)
		}
		recs := c.records(1)
		rec := recs[len(recs)-1]
		if rec.str("uri") != path || rec.str("compliance") != compliance || rec["served_robots"] != served {
			t.Errorf("%s: GET %s by %s recorded %s, served %v; want %s, served %v\n%s", step, path, ua,
				rec.str("compliance"), rec["served_robots"], compliance, served, e2eDump(recs[len(recs)-1:]))
		}
	}
	check("before", honest, "/drafts/a", "grace", true)
	check("before", other, "/private/a", "violation", false)
	denials := e2eMetric(t, c, `caddy_robots_enforce_denials_total{compliance="grace",fetcher="crawler",mode="enforce"}`)

	vars["<OPTIONS>"] = "body \"denied again\""
	c.load(e2eStateSite)
	check("after a reload", honest, "/drafts/b", "grace", true)
	check("after a reload", other, "/private/b", "violation", false)
	// A violation after the reload by the crawler that fetched robots.txt
	// before it is still one "after fetch".
	check("after a reload", honest, "/private/b", "violation", true)
	if got := e2eMetric(t, c, `caddy_robots_enforce_denials_total{compliance="grace",fetcher="crawler",mode="enforce"}`); got != denials+1 {
		t.Errorf("grace denials after a reload = %v, want %v: the counter went on", got, denials+1)
	}

	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	before := up.count("site.test", "/robots.txt")
	c.load(e2eStateSite)
	check("after a restart", honest, "/drafts/c", "grace", true)
	check("after a restart", other, "/private/c", "violation", false)
	recs := c.records(1)
	if judged, _ := recs[len(recs)-1]["judged_versions"].([]any); len(judged) != 2 {
		t.Errorf("after a restart: judged against %v, want both versions in force within the day", judged)
	}
	if n := up.count("site.test", "/robots.txt") - before; n > 1 {
		t.Errorf("%d fetches of robots.txt after the restart, want at most one refresh", n)
	}
}

// e2eMetric reads one series from the metrics endpoint on port 1.
func e2eMetric(t *testing.T, c *e2eCaddy, series string) float64 {
	t.Helper()
	r := c.get(1, "", "/metrics", "")
	sc := bufio.NewScanner(strings.NewReader(r.body))
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), " "); ok && name == series {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return v
		}
	}
	t.Fatalf("no series %s in:\n%s", series, r.body)
	return 0
}

// A saved state that cannot be read is ignored with a warning, and the
// handler starts as on a first start.
func TestE2ECorruptSavedState(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText("User-agent: *\nDisallow: /private/\n")})
	vars := map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied"}
	c := e2eStart(t, 1, e2eProxySite, vars)
	if r := c.get(0, "site.test", "/private/x", e2eCrawler); r.status != http.StatusForbidden {
		t.Fatalf("GET /private/x = %d, want 403", r.status)
	}
	if err := caddy.Stop(); err != nil { // saves the state
		t.Fatal(err)
	}
	saved, err := filepath.Glob(filepath.Join(c.dir, "storage", "robots_enforce", "fleet", "*", "*", "state.json"))
	if err != nil || len(saved) != 1 {
		t.Fatalf("saved states %v (%v), want one", saved, err)
	}
	if err := os.WriteFile(saved[0], []byte(`{"format": 1, "sites": [{"key": `), 0o600); err != nil {
		t.Fatal(err)
	}
	c.load(e2eProxySite)
	if r := c.get(0, "site.test", "/private/x", e2eCrawler); r.status != http.StatusForbidden {
		t.Errorf("after a corrupt state: GET /private/x = %d, want 403 from a fresh fetch", r.status)
	}
	warned := c.linesWhere("caddy.log", "http.robots_enforce", 1, func(r e2eRecord) bool {
		return r.str("msg") == "ignoring the saved robots.txt state"
	})
	if len(warned) != 1 || !strings.Contains(warned[0].str("error"), "not a saved state") {
		t.Errorf("warnings: %s", e2eDump(warned))
	}
}
