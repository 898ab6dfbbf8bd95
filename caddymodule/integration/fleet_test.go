package integration

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// The fleet tests' robots.txt versions: v2 also disallows /drafts/, so a
// crawler that holds v1 may fetch /drafts/ for a day (RFC 9309 §2.4).
const (
	fleetV1 = "User-agent: *\nDisallow: /private/\n"
	fleetV2 = "User-agent: *\nDisallow: /private/\nDisallow: /drafts/\n"
)

// The fleet tests' crawlers, each from an address of its own.
const (
	fleetHonest = "HonestBot/1.0 (+https://honest.example)"
	fleetOther  = "OtherBot/1.0 (+https://other.example)"
	fleetRogue  = "RogueBot/1.0 (+https://rogue.example)"
	fleetProbe  = "ProbeBot/1.0 (+https://probe.example)"
)

// fleetWaitStored waits until a part document under storage holds text
// (a crawler's name, lower-case, say): the instance that saw it wrote it.
// It returns how long it waited.
func fleetWaitStored(t *testing.T, storage, text string) time.Duration {
	t.Helper()
	start := time.Now()
	ok := e2eEventually(func() bool {
		docs, _ := filepath.Glob(filepath.Join(storage, "robots_enforce", "fleet", "*", "*", "state.json"))
		for _, d := range docs {
			if b, err := os.ReadFile(d); err == nil && strings.Contains(string(b), text) {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no part in the storage names %q", text)
	}
	return time.Since(start)
}

// Three instances behind a round-robin balancer judge as one fleet: a late
// joiner judges a crawler that holds the file before the change as grace
// (an instance without distributed, as a violation); a crawler that read
// the new file through B and breaks it on A is a violation there; an
// escalation begun on A denies on B and C within the read interval, and is
// begun once.
func TestFleetJudgesAsOne(t *testing.T) {
	robots := fleetOrigin(t, fleetV1)
	storage := t.TempDir()
	setup := fleetSetup{storage: storage, origin: robots.origin.hostPort(), options: "violators block for 1h\n\t\t" + fleetDistributed}
	a := fleetStart(t, "A", setup)
	b := fleetStart(t, "B", setup)

	// HonestBot reads v1 through B; A has v1 in force too.
	fleetExpect(t, b, "B", "/robots.txt", fleetHonest, "192.0.2.1", http.StatusOK)
	fleetExpect(t, a, "A", "/public", fleetHonest, "192.0.2.1", http.StatusOK)
	fleetWaitStored(t, storage, "honestbot")

	// The site publishes v2; C joins the fleet after the change, and so
	// does D, without distributed.
	robots.set(fleetV2)
	c := fleetStart(t, "C", setup)
	fleetWaitView(t, c, "C", 2)
	d := fleetStart(t, "D", fleetSetup{storage: storage, origin: robots.origin.hostPort()})

	// HonestBot, holding v1 as RFC 9309 §2.4 allows, asks C for what v2
	// alone disallows: C's own fetch found v2, and it judges by the v1
	// A and B had in force, and B served it.
	t.Run("late joiner", func(t *testing.T) {
		fleetExpect(t, c, "C", "/drafts/a", fleetHonest, "192.0.2.1", http.StatusForbidden)
		rec := fleetRecord(t, c, "/drafts/a")
		v1 := robotstxt.VersionHash([]byte(fleetV1))
		judged, _ := rec["judged_versions"].([]any)
		if rec.str("compliance") != "grace" || rec["served_robots"] != true || len(judged) != 1 || judged[0] != v1 {
			t.Errorf("C judged HonestBot's /drafts/a %s (served %v, judged %v); want grace, served v1 %s\n%s",
				rec.str("compliance"), rec["served_robots"], judged, v1, e2eDump([]e2eRecord{rec}))
		}
		// Without distributed, the same request on D is a violation:
		// D knows v2 alone.
		fleetExpect(t, d, "D", "/drafts/a", fleetHonest, "192.0.2.1", http.StatusForbidden)
		if rec := fleetRecord(t, d, "/drafts/a"); rec.str("compliance") != "violation" {
			t.Errorf("D, without distributed, judged it %s; want violation (the control)", rec.str("compliance"))
		}
	})

	// OtherBot reads v2 through B, then asks A for what v2 disallows and
	// v1 allows: A never served it robots.txt, and judges it by what B
	// served it.
	t.Run("violation across instances", func(t *testing.T) {
		fleetExpect(t, b, "B", "/robots.txt", fleetOther, "192.0.2.2", http.StatusOK)
		// A browser's fetch of robots.txt through A has A fetch v2.
		e2eAfterOfferInterval()
		fleetExpect(t, a, "A", "/robots.txt", e2eBrowser, "192.0.2.9", http.StatusOK)
		if !e2eEventually(func() bool {
			got, _ := fleetGet(a, "/drafts/probe", fleetProbe, "192.0.2.3")
			return got == http.StatusForbidden
		}) {
			t.Fatalf("A never put v2 in force:\n%s", a.logTail())
		}
		fleetWaitStored(t, storage, "otherbot")
		time.Sleep(3 * fleetInterval) // A reads B's part
		fleetExpect(t, a, "A", "/drafts/b", fleetOther, "192.0.2.2", http.StatusForbidden)
		rec := fleetRecord(t, a, "/drafts/b")
		if rec.str("compliance") != "violation" || rec["served_robots"] != true {
			t.Errorf("A judged OtherBot's /drafts/b %s (served %v); want a violation of what B served it\n%s",
				rec.str("compliance"), rec["served_robots"], e2eDump([]e2eRecord{rec}))
		}
	})

	// RogueBot breaks v2 on A: blocked there, and on B and C within the
	// read interval, by the escalation A began.
	t.Run("escalation", func(t *testing.T) {
		const ip = "198.51.100.1"
		fleetExpect(t, b, "B", "/public", fleetRogue, ip, http.StatusOK)
		fleetExpect(t, a, "A", "/private/x", fleetRogue, ip, http.StatusForbidden)
		began := time.Now()
		if rec := fleetRecord(t, a, "/private/x"); rec["escalation_began"] != true {
			t.Fatalf("A began no escalation:\n%s", e2eDump([]e2eRecord{rec}))
		}
		for _, n := range []struct {
			name string
			c    *hxCaddy
		}{{"B", b}, {"C", c}} {
			var took time.Duration
			for deadline := began.Add(fleetInterval + fleetSlack); ; time.Sleep(10 * time.Millisecond) {
				if got, _ := fleetGet(n.c, "/public", fleetRogue, ip); got == http.StatusForbidden {
					took = time.Since(began)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: RogueBot not blocked %v after A escalated it", n.name, time.Since(began))
				}
			}
			t.Logf("%s blocked RogueBot %v after A escalated it (read interval %v)", n.name, took.Round(time.Millisecond), fleetInterval)
			rec := fleetRecord(t, n.c, "/public")
			if rec.str("reason") != "escalated" || rec.str("escalated_by") != "/private/x" || rec["escalation_began"] == true {
				t.Errorf("%s's record of the blocked request:\n%s", n.name, e2eDump([]e2eRecord{rec}))
			}
		}
		// It breaks v2 on B too: the escalation in force is A's, and B
		// begins none.
		fleetExpect(t, b, "B", "/private/y", fleetRogue, ip, http.StatusForbidden)
		if rec := fleetRecord(t, b, "/private/y"); rec["escalation_began"] == true || rec.str("escalated_by") != "/private/x" {
			t.Errorf("B began an escalation of its own:\n%s", e2eDump([]e2eRecord{rec}))
		}
	})
	// One log may gather the fleet's records: each names the instance
	// that judged, as its part is named; D, alone, names none.
	t.Run("records name their instance", func(t *testing.T) {
		ia, ib := fleetRecord(t, a, "/private/x").str("instance"), fleetRecord(t, b, "/private/y").str("instance")
		if ia == "" || ib == "" || ia == ib {
			t.Errorf("A's record names instance %q, B's %q; want two names", ia, ib)
		}
		if id := fleetRecord(t, d, "/drafts/a").str("instance"); id != "" {
			t.Errorf("D, without distributed, names instance %q; want none", id)
		}
	})
	// The audit of the three instances' records lists RogueBot's
	// escalation once, begun on A, with the denials B and C made under it
	// (B's and C's /public, a moment apart, count as one request: see the
	// audit's DuplicateWindow; B's /private/y is another).
	t.Run("merged audit", func(t *testing.T) {
		dir := t.TempDir()
		var logs []string
		for name, node := range map[string]*hxCaddy{"A": a, "B": b, "C": c} {
			var lines []byte
			for _, msg := range []string{"robots.txt decision", "robots.txt served"} {
				for _, rec := range fleetLines(node, msg) {
					line, _ := json.Marshal(rec)
					lines = append(append(lines, line...), '\n')
				}
			}
			path := filepath.Join(dir, name+".log")
			if err := os.WriteFile(path, lines, 0o644); err != nil {
				t.Fatal(err)
			}
			logs = append(logs, path)
		}
		out := filepath.Join(dir, "audit.json")
		var r audit.Report
		evRun(t, append([]string{"robots", "audit", "--format", "json", "--output", out}, logs...), out, &r)
		var rogue []audit.Escalation
		for _, e := range r.Escalations {
			if e.Agent == "RogueBot" {
				rogue = append(rogue, e)
			}
		}
		ia := fleetRecord(t, a, "/private/x").str("instance")
		if len(rogue) != 1 || rogue[0].Instance != ia || rogue[0].EscalatedBy != "/private/x" || (rogue[0].Denied < 2 || rogue[0].Denied > 3) {
			t.Errorf("RogueBot's escalations in the merged audit: %+v\nwant one, begun on A (%s) by /private/x, with B's and C's denials", rogue, ia)

		}
	})
	for name, node := range map[string]*hxCaddy{"A": a, "B": b, "C": c} {
		if lines := fleetLines(node, "robots.txt fleet view is stale: the storage fails"); len(lines) > 0 {
			t.Errorf("%s says its view is stale: %s", name, e2eDump(lines))
		}
	}
}

// fleetSlack is what the tests allow past an interval for the processes
// to be scheduled, on a machine shared with other tests.
const fleetSlack = time.Second
