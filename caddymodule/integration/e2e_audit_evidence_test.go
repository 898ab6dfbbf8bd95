package integration

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testchrome"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// The evidence a site sends a crawler's operator, from a real Caddy's
// records and storage: the audit and its evidence export name every
// address, User-Agent, request target (with its query), rule line and
// version served, quote each version's text, which hashes to the version
// its records name, and cite for each violation the line of each quoted
// text that disallows it.

// Two versions of the site's robots.txt: the second adds /drafts/ and
// moves /private/ to another line.
const (
	evV1 = "User-agent: *\nDisallow: /private/\n"
	evV2 = "# version 2\nUser-agent: *\nDisallow: /drafts/\nDisallow: /private/\n"
)

// Clients, each from an address of its own.
const (
	evReader = "ReaderBot/1.0 (+https://reader.example/bot)" // reads v1, then v2, and breaks both
	evKeeper = "KeeperBot/2.1 (+https://keeper.example/bot)" // reads v1 and keeps to it
	evProbe  = "ProbeBot/1.0 (+https://probe.example/bot)"   // finds out when v2 is in force
)

var evFrom = map[string]string{evReader: "192.0.2.10", evKeeper: "198.51.100.20", evProbe: "203.0.113.30", e2eBrowser: "192.0.2.40"}

// TestE2EEvidence runs the story through a real Caddy, then the audit and
// the evidence export of the caddy command, and checks them against the
// records and the texts they quote.
func TestE2EEvidence(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/caddy")
	}
	var mu sync.Mutex
	robots := evV1
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := robots
		mu.Unlock()
		e2eText(body)(w, r)
	}})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied"})
	get := func(path, ua string) e2eResponse {
		return c.getWith(0, "site.test", path, ua, http.Header{"X-Forwarded-For": {evFrom[ua]}})
	}
	want := func(path, ua string, status int) {
		t.Helper()
		if r := get(path, ua); r.status != status {
			t.Fatalf("GET %s by %s = %d, want %d", path, ua, r.status, status)
		}
	}

	// Both crawlers read v1; ReaderBot breaks it at once.
	want("/robots.txt", evReader, http.StatusOK)
	want("/robots.txt", evKeeper, http.StatusOK)
	want("/private/a?sessionid=1", evReader, http.StatusForbidden)
	// The site publishes v2; a browser's fetch of it puts it in force.
	mu.Lock()
	robots = evV2
	mu.Unlock()
	e2eAfterOfferInterval()
	get("/robots.txt", e2eBrowser)
	if !e2eEventually(func() bool { return get("/drafts/probe", evProbe).status == http.StatusForbidden }) {
		t.Fatal("v2 never came into force")
	}
	// ReaderBot reads v2, and breaks it (and v1, which it may still
	// hold): a violation; /drafts/, which only v2 disallows, is grace.
	if r := get("/robots.txt", evReader); r.body != evV2 {
		t.Fatalf("GET /robots.txt = %q, want v2", r.body)
	}
	want("/private/report.html?id=7&sessionid=abc", evReader, http.StatusForbidden)
	want("/drafts/new?page=2", evReader, http.StatusForbidden)
	// KeeperBot holds v1, which allows /drafts/: grace.
	want("/drafts/old", evKeeper, http.StatusForbidden)

	recs := c.records(5)
	served := c.linesWhere("robots.log", "http.handlers.robots_enforce", 4, func(rec e2eRecord) bool {
		return rec.str("msg") == "robots.txt served"
	})
	log := filepath.Join(c.dir, "robots.log")
	storage := filepath.Join(c.dir, "storage")
	evWaitBodies(t, storage, evV1, evV2)

	// The report, as JSON.
	var r audit.Report
	evRun(t, []string{"robots", "audit", "--format", "json", "--output", filepath.Join(c.dir, "audit.json"), log}, filepath.Join(c.dir, "audit.json"), &r)
	rows := map[string]*audit.Crawler{}
	for i := range r.Crawlers {
		rows[r.Crawlers[i].Agent] = &r.Crawlers[i]
	}
	reader, keeper := rows["ReaderBot"], rows["KeeperBot"]
	if reader == nil || keeper == nil || reader.Violations != 2 || reader.Grace != 1 || keeper.Violations != 0 || keeper.Grace != 1 {
		t.Fatalf("rows: ReaderBot %+v\nKeeperBot %+v", reader, keeper)
	}
	// Every address, User-Agent, target and rule line of the records, and
	// every version served, is in the report.
	for _, rec := range recs {
		row := rows[rec.str("agent")]
		if row == nil {
			t.Errorf("no row of %s", rec.str("agent"))
			continue
		}
		if !slices.ContainsFunc(row.ClientAddresses, func(a audit.AddressCount) bool { return a.Address == rec.str("client_ip") }) {
			t.Errorf("%s: address %s not in %+v", rec.str("agent"), rec.str("client_ip"), row.ClientAddresses)
		}
		if !slices.ContainsFunc(row.UserAgents, func(u audit.UserAgentCount) bool { return u.UserAgent == rec.str("user_agent") }) {
			t.Errorf("%s: User-Agent %q not in %+v", rec.str("agent"), rec.str("user_agent"), row.UserAgents)
		}
		if rec.str("compliance") != "violation" {
			continue
		}
		line, _ := rec["rule_line"].(float64)
		if !slices.ContainsFunc(row.ViolatingRequests, func(q audit.Request) bool {
			return q.Target == rec.str("uri") && q.RuleLine == int64(line) && q.ClientIP == rec.str("client_ip") && q.Instance != ""
		}) {
			t.Errorf("violation %s (line %v) not in %+v", rec.str("uri"), line, row.ViolatingRequests)
		}
	}
	for _, s := range served {
		tokens, _ := s["agents"].([]any)
		if len(tokens) == 0 || rows[tokens[0].(string)] == nil {
			continue // the browser's fetch
		}
		row := rows[tokens[0].(string)]
		if !slices.ContainsFunc(row.RobotsFetches, func(f audit.Fetch) bool {
			return f.Version == s.str("robots_hash") && f.ClientIP == s.str("client_ip")
		}) {
			t.Errorf("%s: the fetch of %s from %s not in %+v", row.Agent, s.str("robots_hash"), s.str("client_ip"), row.RobotsFetches)
		}
	}

	// The evidence of ReaderBot, with the texts of the storage.
	evHTML := filepath.Join(c.dir, "readerbot.html")
	var ev audit.Evidence
	evRun(t, []string{"robots", "audit", "--evidence", "ReaderBot", "--storage", storage, "--output", evHTML, log}, filepath.Join(c.dir, "readerbot.json"), &ev)
	if len(ev.Sites) != 1 || len(ev.Sites[0].Violations) != 2 || len(ev.Sites[0].Grace) != 1 {
		t.Fatalf("evidence: %+v", ev.Sites)
	}
	site := ev.Sites[0]
	evCheckTexts(t, &ev, map[string]string{e2eHash(evV1): evV1, e2eHash(evV2): evV2})
	// ReaderBot's first violation came before v2: judged against v1. It
	// was then served v2 too; its second is judged against both, at the
	// line each quoted text disallows it by.
	for i, q := range site.Violations {
		got := map[string]int{}
		for _, rd := range q.Readings {
			if rd.Verdict != "deny" {
				t.Errorf("%s under %s: %s", q.Target, rd.Version, rd.Verdict)
			}
			got[rd.Version] = rd.Line
		}
		want := map[string]int{e2eHash(evV1): 2, e2eHash(evV2): 4}
		if i == 0 {
			delete(want, e2eHash(evV2))
		}
		if !equalMaps(got, want) {
			t.Errorf("%s: lines %v, want %v", q.Target, got, want)
		}
	}
	if g := site.Grace[0]; g.Target != "/drafts/new?page=2" || len(g.Readings) != 2 {
		t.Errorf("grace: %+v", g)
	}
	for _, v := range site.Versions {
		if v.Serves == 0 || v.HeldUntil.IsZero() {
			t.Errorf("version %s: not served to ReaderBot: %+v", v.Name, v)
		}
	}
	page, err := os.ReadFile(evHTML)
	if err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(string(page))
	for _, want := range []string{"/private/report.html?id=7&sessionid=abc", "/private/a?sessionid=1", "192.0.2.10", evReader, e2eHash(evV1), e2eHash(evV2), "Disallow: /private/"} {
		if !strings.Contains(text, want) {
			t.Errorf("the evidence page lacks %q", want)
		}
	}
	// Laid out in Chromium where it is installed (CI installs it); the
	// rest of the test does not wait on it.
	if _, err := os.Stat(testchrome.Path); err != nil {
		t.Logf("%s not found: the evidence page's layout is not checked", testchrome.Path)
	} else {
		for _, width := range []int{1300, 800} {
			if cut := testchrome.LayoutCut(t, page, width); cut != testchrome.NothingCut {
				t.Errorf("the evidence at %d px:\n%s", width, cut)
			}
		}
	}

	// KeeperBot's evidence: no violation, its grace by v1, which it held.
	var kev audit.Evidence
	evRun(t, []string{"robots", "audit", "--evidence", "KeeperBot", "--storage", storage, "--output", filepath.Join(c.dir, "keeper.html"), log}, filepath.Join(c.dir, "keeper.json"), &kev)
	if len(kev.Sites) != 1 || len(kev.Sites[0].Violations) != 0 || len(kev.Sites[0].Grace) != 1 {
		t.Fatalf("KeeperBot's evidence: %+v", kev.Sites)
	}
	evCheckTexts(t, &kev, map[string]string{e2eHash(evV1): evV1, e2eHash(evV2): evV2})
	if rd := kev.Sites[0].Grace[0].Readings; len(rd) != 1 || rd[0].Version != e2eHash(evV1) || rd[0].Verdict != "allow" {
		t.Errorf("KeeperBot's grace: %+v", rd)
	}
}

// evWaitBodies waits until the storage holds the bodies: the handler
// saves a version's body when it first has it.
func evWaitBodies(t *testing.T, storage string, bodies ...string) {
	t.Helper()
	if !e2eEventually(func() bool {
		texts, err := audit.OpenTexts(storage)
		if err != nil {
			return false
		}
		for _, b := range bodies {
			if vt, _ := texts.Text(e2eHash(b)); vt == nil {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the storage %s never held the versions' bodies", storage)
	}
}

// evRun runs the caddy command with args and decodes the JSON file out
// into v.
func evRun(t *testing.T, args []string, out string, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hxBinary(t), args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("caddy %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
}

// evCheckTexts checks every claim of the evidence against the texts it
// quotes, with nothing else at hand: each quoted text hashes to its
// SHA-256, whose first 16 hex digits are the version the records name,
// and is the body the site served; each reading's verdict, line and line
// text are those of the quoted text parsed with package rules.
func evCheckTexts(t *testing.T, ev *audit.Evidence, served map[string]string) {
	t.Helper()
	for _, s := range ev.Sites {
		quoted := map[string][]byte{}
		for _, v := range s.Versions {
			body, err := base64.StdEncoding.DecodeString(v.TextBase64)
			if err != nil || len(body) == 0 {
				t.Errorf("version %s: no text (%s): %v", v.Name, v.Missing, err)
				continue
			}
			sum := sha256.Sum256(body)
			if hex.EncodeToString(sum[:]) != v.SHA256 || v.SHA256[:16] != v.Name || string(body) != served[v.Name] || v.Text != string(body) {
				t.Errorf("version %s: the quoted text hashes to %x (SHA-256 given %s)", v.Name, sum, v.SHA256)
			}
			quoted[v.Name] = body
		}
		for _, list := range [][]audit.EvidenceRequest{s.Violations, s.Grace} {
			for _, q := range list {
				for _, rd := range q.Readings {
					body := quoted[rd.Version]
					if body == nil {
						t.Errorf("%s: version %s is not quoted", q.Target, rd.Version)
						continue
					}
					v := rules.Parse(body).Decide(ev.Agent, q.Target)
					if (rd.Verdict == "allow") != v.Allowed || rd.Line != v.Rule.Line {
						t.Errorf("%s under %s: %s at line %d; the quoted text: allowed %v at line %d", q.Target, rd.Version, rd.Verdict, rd.Line, v.Allowed, v.Rule.Line)
					}
					if rd.Line > 0 && rd.LineText != strings.Split(string(body), "\n")[rd.Line-1] {
						t.Errorf("%s under %s: line %d quoted as %q", q.Target, rd.Version, rd.Line, rd.LineText)
					}
				}
			}
		}
	}
}

func equalMaps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
