package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// The merged audit of two Caddy instances that share neither state nor
// storage, across a change of robots.txt: a, a process of its own, runs
// throughout; b, in this process, starts after the change and knows only
// the new version. Each judges a denial by what it served itself; the
// audit of both logs judges each denial again against every version
// served to the crawler on either:
//
//   - HonestBot reads v1 through a, and, after the change, asks through b
//     (which never served it) for a path v1 allows: b records a
//     violation; the merged audit counts it grace;
//   - BadBot reads v2 through b, and asks through a (which has both
//     versions in force, and never served it) for a path only v2
//     disallows: a records grace; the merged audit counts a violation,
//     with the versions' texts, and leaves a's grace without them.
func TestE2EMergedAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/caddy")
	}
	const (
		honest = "HonestBot/1.0 (+https://honest.example)"
		bad    = "BadBot/2.0 (+https://bad.example)"
		probe  = "ProbeBot/1.0 (+https://probe.example)"
	)
	var mu sync.Mutex
	robots := evV1
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := robots
		mu.Unlock()
		e2eText(body)(w, r)
	}})
	getA := func(a *hxCaddy, path, ua string) int {
		t.Helper()
		r, err := a.get(0, "site.test", path, ua)
		if err != nil {
			t.Fatalf("a: GET %s by %s: %v", path, ua, err)
		}
		return r.status
	}

	// Instance a: v1 in force (a request judged by it), and HonestBot
	// reads it.
	a := hxStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce enforce {
		verify off
		body denied
	}
	reverse_proxy <UPSTREAM>
}
`, map[string]string{"<UPSTREAM>": up.hostPort()})
	if got := getA(a, "/private/probe", probe); got != http.StatusForbidden {
		t.Fatalf("a: GET /private/probe = %d", got)
	}
	if got := getA(a, "/robots.txt", honest); got != http.StatusOK {
		t.Fatalf("a: GET /robots.txt = %d", got)
	}
	// The site publishes v2; a browser's fetch puts it in force on a,
	// beside v1.
	mu.Lock()
	robots = evV2
	mu.Unlock()
	e2eAfterOfferInterval()
	getA(a, "/robots.txt", e2eBrowser)
	if !e2eEventually(func() bool { return getA(a, "/drafts/probe", probe) == http.StatusForbidden }) {
		t.Fatal("v2 never came into force on a")
	}

	// Instance b starts, knowing only v2: BadBot reads it; HonestBot,
	// holding v1, asks for /drafts/x.
	b := e2eStart(t, 1, e2eProxySite, map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied"})
	if r := b.get(0, "site.test", "/robots.txt", bad); r.body != evV2 {
		t.Fatalf("b: GET /robots.txt = %q", r.body)
	}
	if r := b.get(0, "site.test", "/drafts/x", honest); r.status != http.StatusForbidden {
		t.Fatalf("b: GET /drafts/x = %d", r.status)
	}
	if rec := b.records(1)[0]; rec.str("uri") != "/drafts/x" || rec.str("compliance") != "violation" {
		t.Fatalf("b's record of HonestBot: %s", e2eDump([]e2eRecord{rec}))
	}
	// BadBot asks a for /drafts/y: a never served it, and v1 allows it.
	if got := getA(a, "/drafts/y", bad); got != http.StatusForbidden {
		t.Fatalf("a: GET /drafts/y = %d", got)
	}
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	a.stop()
	if rec := evRecordOf(t, a.logs, "/drafts/y"); rec.str("compliance") != "grace" {
		t.Fatalf("a's record of BadBot: %s", e2eDump([]e2eRecord{rec}))
	}
	evWaitBodies(t, filepath.Join(a.dir, "storage"), evV1, evV2)
	evWaitBodies(t, filepath.Join(b.dir, "storage"), evV2)

	logs := []string{a.logs, filepath.Join(b.dir, "robots.log")}
	rowsOf := func(args ...string) map[string]*audit.Crawler {
		out := filepath.Join(t.TempDir(), "audit.json")
		var r audit.Report
		evRun(t, append(append([]string{"robots", "audit", "--format", "json", "--output", out}, args...), logs...), out, &r)
		rows := map[string]*audit.Crawler{}
		for i := range r.Crawlers {
			rows[r.Crawlers[i].Agent] = &r.Crawlers[i]
		}
		if !r.Merge.Merged || len(r.Merge.Instances) != 2 {
			t.Errorf("merge %+v", r.Merge)
		}
		return rows
	}
	type counts struct{ violations, grace int64 }
	countsOf := func(c *audit.Crawler) counts {
		if c == nil {
			return counts{-1, -1}
		}
		return counts{c.Violations, c.Grace}
	}
	withTexts := rowsOf("--storage", filepath.Join(a.dir, "storage"), "--storage", filepath.Join(b.dir, "storage"))
	without := rowsOf()
	for _, tt := range []struct {
		name string
		rows map[string]*audit.Crawler
		bot  string
		want counts
	}{
		{"with the texts", withTexts, "HonestBot", counts{0, 1}},
		{"with the texts", withTexts, "BadBot", counts{1, 0}},
		// Without them, HonestBot is still grace (v1, which it was
		// served, is not known to disallow /drafts/x); BadBot's grace
		// stands (nothing says v2 disallows /drafts/y).
		{"without texts", without, "HonestBot", counts{0, 1}},
		{"without texts", without, "BadBot", counts{0, 1}},
	} {
		if got := countsOf(tt.rows[tt.bot]); got != tt.want {
			t.Errorf("%s: %s violations, grace = %v, want %v", tt.name, tt.bot, got, tt.want)
		}
	}
	if q := withTexts["BadBot"].ViolatingRequests; len(q) != 1 || q[0].Target != "/drafts/y" || q[0].Recorded != "grace" ||
		q[0].Instance != logs[0] || len(q[0].JudgedVersions) != 1 || q[0].JudgedVersions[0] != e2eHash(evV2) {
		t.Errorf("BadBot's violation: %+v", q)
	}
}

// evRecordOf returns the compliance record of uri in the log file name.
func evRecordOf(t *testing.T, name, uri string) e2eRecord {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(data) {
		var rec e2eRecord
		if json.Unmarshal(line, &rec) == nil && rec.str("msg") == "robots.txt decision" && rec.str("uri") == uri {
			return rec
		}
	}
	t.Fatalf("%s: no record of %s", name, uri)
	return nil
}
