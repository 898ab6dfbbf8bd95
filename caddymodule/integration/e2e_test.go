package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// e2eRobots is the robots.txt of most tests: GPTBot is named, everyone
// else automated falls to "*".
const e2eRobots = `User-agent: GPTBot
Disallow: /private/

User-agent: *
Disallow: /private/
Allow: /private/open
`

// e2eProxySite is a site on <PORT0> guarding <UPSTREAM> with the options
// in <OPTIONS>, which reports the decision in X-Robots.
const e2eProxySite = `
http://:<PORT0> {
	bind 127.0.0.1
	log {
		output file <DIR>/access.log
		format json
	}
	header >X-Robots "{http.robots_enforce.verdict}|{http.robots_enforce.reason}|{http.robots_enforce.agent}|{http.robots_enforce.rule}|{http.robots_enforce.rule_line}"
	robots_enforce <MODE> {
		<OPTIONS>
	}
	reverse_proxy <UPSTREAM>
}
`

// e2eHash is the robots_hash of a body: the first 16 hex digits of its
// SHA-256.
func e2eHash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])[:16]
}

// RFC 9309 §2.2.2: /robots.txt is always allowed. It reaches the site as
// it was sent, whatever robots.txt says, for every client and in enforce
// mode, without a compliance record.
func TestE2ERobotsTxtPassesThrough(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /robots.txt\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /robots.txt\nDisallow: /\n"
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Origin", "robots")
		e2eText(robots)(w, r)
	}})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "wildcard all",
	})
	for _, ua := range []string{e2eGPTBot, e2eCrawler, e2eBrowser, ""} {
		for _, target := range []string{"/robots.txt", "/robots.txt?from=test"} {
			r := c.get(0, "site.test", target, ua)
			if r.status != http.StatusOK || r.body != robots || r.header.Get("X-Origin") != "robots" {
				t.Errorf("GET %s by %q = %d, X-Origin %q, body %q; want 200, robots, the upstream's file",
					target, ua, r.status, r.header.Get("X-Origin"), r.body)
			}
			if got, want := r.header.Get("X-Robots"), "allow|robots_txt|||"; got != want {
				t.Errorf("GET %s by %q: placeholders %q, want %q", target, ua, got, want)
			}
		}
	}
	// The rules are in force: everything else is denied, to everyone.
	for _, ua := range []string{e2eGPTBot, e2eBrowser} {
		if r := c.get(0, "site.test", "/page", ua); r.status != http.StatusForbidden {
			t.Errorf("GET /page by %q = %d, want 403", ua, r.status)
		}
	}
	// 8 requests of the clients, and one fetch of the handler's own.
	if n := up.count("site.test", "/robots.txt"); n != 9 {
		t.Errorf("upstream saw %d requests for /robots.txt, want 9", n)
	}
	if recs := c.records(2); len(recs) != 2 || recs[0].str("uri") != "/page" || recs[1].str("uri") != "/page" {
		t.Errorf("compliance records: want the two denials of /page only, got\n%s", e2eDump(recs))
	}
}

// Enforce mode answers a crawler's disallowed request with 403: with the
// body option's text, through handle_errors, or with Caddy's empty error
// response. Whom "*" binds follows the wildcard option.
func TestE2EEnforcement(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText(e2eRobots + "\nUser-agent: Bytespider\nDisallow: /\n")})
	c := e2eStart(t, 5, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		body "Disallowed by this site's robots.txt."
	}
	reverse_proxy <UPSTREAM>
}
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce
	reverse_proxy <UPSTREAM>
	handle_errors {
		respond "shaped {err.status_code} {http.robots_enforce.reason} {http.robots_enforce.agent} {http.robots_enforce.rule_line}"
	}
}
http://:<PORT2> {
	bind 127.0.0.1
	robots_enforce
	reverse_proxy <UPSTREAM>
}
http://:<PORT3> {
	bind 127.0.0.1
	robots_enforce {
		wildcard all
	}
	reverse_proxy <UPSTREAM>
}
http://:<PORT4> {
	bind 127.0.0.1
	robots_enforce {
		wildcard none
		status 451
	}
	reverse_proxy <UPSTREAM>
}
`, map[string]string{"<UPSTREAM>": up.hostPort()})

	const denied = "Disallowed by this site's robots.txt.\n" // the body option's text, ended by a line break
	for _, tc := range []struct {
		port   int
		ua     string
		path   string
		status int
		body   string
	}{
		{0, e2eGPTBot, "/private/x", 403, denied},
		{0, e2eGPTBot, "/private/open", 403, denied}, // GPTBot's own group has no Allow
		{0, e2eGPTBot, "/public", 200, "page /public"},
		{0, e2eBrowser, "/private/x", 200, "page /private/x"},
		{0, e2eCrawler, "/private/x", 403, denied},
		{0, e2eCrawler, "/private/open", 200, "page /private/open"},
		{0, "Bytespider", "/public", 403, denied},
		{0, "", "/private/x", 200, "page /private/x"},      // no User-Agent: automated, not a crawler
		{0, e2eCurl, "/private/x", 200, "page /private/x"}, // an HTTP tool, not a crawler
		{3, "", "/private/x", 403, ""},                     // wildcard all binds every client
		{1, e2eGPTBot, "/private/x", 403, "shaped 403 named_group GPTBot 2"},
		{1, e2eCrawler, "/private/x", 403, "shaped 403 wildcard_group ExampleCrawler 5"},
		{1, e2eBrowser, "/private/x", 200, "page /private/x"},
		{2, e2eGPTBot, "/private/x", 403, ""},
		{2, e2eBrowser, "/private/x", 200, "page /private/x"},
		{3, e2eBrowser, "/private/x", 403, ""}, // wildcard all binds browsers too
		{3, e2eBrowser, "/public", 200, "page /public"},
		{4, e2eCrawler, "/private/x", 200, "page /private/x"}, // wildcard none binds nobody
		{4, e2eGPTBot, "/private/x", 451, ""},                 // but named groups still do
	} {
		r := c.get(tc.port, "", tc.path, tc.ua)
		if r.status != tc.status || r.body != tc.body {
			t.Errorf("port %d: GET %s by %q = %d %q, want %d %q", tc.port, tc.path, tc.ua, r.status, r.body, tc.status, tc.body)
		}
		if tc.body == denied && r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("port %d: GET %s by %q: Content-Type %q, want text/plain", tc.port, tc.path, tc.ua, r.header.Get("Content-Type"))
		}
	}
}

// e2eRecordFields are the fields of every compliance record, a contract;
// e2eServedFields those of a record about a crawler that was served
// robots.txt; e2eAssessedFields those of a denial judged by both readings
// of the request as sent.
var (
	e2eRecordFields = []string{
		"level", "ts", "logger", "msg", "record_version", "site",
		"host", "method", "uri", "user_agent", "agent", "bot_class", "verdict", "mode", "reason",
		"reading", "group_line", "rule", "rule_line", "compliance", "grace", "judged_versions",
		"robots_hash", "robots_source", "remote_ip", "client_ip", "agent_fetched_robots", "served_robots",
		"automation", "robots_fetched_at", "fetcher_class",
	}
	e2eServedFields   = []string{"served_at", "served_hash", "served_link"}
	e2eAssessedFields = []string{"rfc9309_verdict", "google_verdict"}
)

// Both modes write the same compliance record for each decision about an
// automated client (denials, and allowed ones with log_allowed), and add
// the decision to the access log; only "mode" differs. Enforce mode denies,
// log mode lets the request pass.
func TestE2EComplianceRecords(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText(e2eRobots)})
	type request struct {
		ua, path string
		recorded bool
	}
	requests := []request{
		{e2eGPTBot, "/private/a?x=1", true},
		{e2eBrowser, "/private/a", false},
		{e2eGPTBot, "/robots.txt", false},
		{e2eGPTBot, "/private/b", true}, // now after GPTBot fetched robots.txt
		{e2eCrawler, "/private/c", true},
		{e2eCrawler, "/private/open", true}, // allowed, by a rule
		{e2eCrawler, "/elsewhere", true},    // allowed, by no rule
	}
	hash := e2eHash(e2eRobots)
	judged := []any{hash}
	want := []e2eRecord{
		{"uri": "/private/a?x=1", "user_agent": e2eGPTBot, "agent": "GPTBot", "bot_class": "named", "verdict": "deny",
			"reason": "named_group", "reading": "as_sent", "group_line": 1.0, "rule": "/private/", "rule_line": 2.0,
			"compliance": "violation", "judged_versions": judged,
			"agent_fetched_robots": false, "served_robots": false, "automation": "catalogue"},
		// GPTBot fetched robots.txt through the handler, from its own
		// address: a fetch it proved nothing by (verification is off)
		// counts for that client alone.
		{"uri": "/private/b", "user_agent": e2eGPTBot, "agent": "GPTBot", "bot_class": "named", "verdict": "deny",
			"reason": "named_group", "reading": "as_sent", "group_line": 1.0, "rule": "/private/", "rule_line": 2.0,
			"compliance": "violation", "judged_versions": judged,
			"agent_fetched_robots": true, "served_robots": true, "served_hash": hash, "served_link": "client", "automation": "catalogue"},
		// ExampleCrawler comes from the same address, and never fetched
		// robots.txt: GPTBot's fetch says nothing of it.
		{"uri": "/private/c", "user_agent": e2eCrawler, "agent": "ExampleCrawler", "bot_class": "crawler", "verdict": "deny",
			"reason": "wildcard_group", "reading": "as_sent", "group_line": 4.0, "rule": "/private/", "rule_line": 5.0,
			"compliance": "violation", "judged_versions": judged,
			"agent_fetched_robots": false, "served_robots": false, "automation": "keyword"},
		{"uri": "/private/open", "user_agent": e2eCrawler, "agent": "ExampleCrawler", "bot_class": "crawler", "verdict": "allow",
			"reason": "wildcard_group", "reading": "as_sent", "group_line": 4.0, "rule": "/private/open", "rule_line": 6.0,
			"compliance": "allowed", "judged_versions": []any{},
			"agent_fetched_robots": false, "served_robots": false, "automation": "keyword"},
		{"uri": "/elsewhere", "user_agent": e2eCrawler, "agent": "ExampleCrawler", "bot_class": "crawler", "verdict": "allow",
			"reason": "wildcard_group", "reading": "as_sent", "group_line": 4.0, "rule": "", "rule_line": 0.0,
			"compliance": "allowed", "judged_versions": []any{},
			"agent_fetched_robots": false, "served_robots": false, "automation": "keyword"},
	}
	for _, w := range want {
		if w["verdict"] == "deny" { // both readings deny these paths as sent
			maps.Copy(w, e2eRecord{"rfc9309_verdict": "deny", "google_verdict": "deny"})
		}
		maps.Copy(w, e2eRecord{"level": "info", "logger": "http.handlers.robots_enforce", "msg": "robots.txt decision",
			"record_version": 3.0, "site": "http://site.test", "host": "site.test", "method": "GET", "grace": false, "fetcher_class": "crawler",
			"robots_hash": hash, "robots_source": "http://site.test/robots.txt", "remote_ip": "127.0.0.1", "client_ip": "127.0.0.1"})
	}

	byMode := make(map[string][]e2eRecord)
	for _, mode := range []string{"enforce", "log"} {
		start := time.Now()
		c := e2eStart(t, 1, e2eProxySite, map[string]string{
			"<UPSTREAM>": up.hostPort(), "<MODE>": mode, "<OPTIONS>": "log_allowed",
		})
		for _, rq := range requests {
			r := c.get(0, "site.test", rq.path, rq.ua)
			status := http.StatusOK
			if mode == "enforce" && rq.recorded && rq.path != "/private/open" && rq.path != "/elsewhere" {
				status = http.StatusForbidden
			}
			if r.status != status {
				t.Errorf("%s mode: GET %s by %q = %d, want %d", mode, rq.path, rq.ua, r.status, status)
			}
		}
		recs := c.records(len(want))
		if len(recs) != len(want) {
			t.Fatalf("%s mode: %d records, want %d:\n%s", mode, len(recs), len(want), e2eDump(recs))
		}
		end := time.Now()
		for i, rec := range recs {
			fields := e2eRecordFields
			if want[i]["served_robots"] == true {
				fields = slices.Concat(fields, e2eServedFields)
			}
			if want[i]["verdict"] == "deny" {
				fields = slices.Concat(fields, e2eAssessedFields)
			}
			if keys := slices.Sorted(maps.Keys(rec)); !slices.Equal(keys, slices.Sorted(slices.Values(fields))) {
				t.Errorf("%s mode: record %d has fields %v, want %v", mode, i, keys, slices.Sorted(slices.Values(fields)))
			}
			times := []string{"ts", "robots_fetched_at"}
			if want[i]["served_robots"] == true {
				times = append(times, "served_at")
			}
			for _, k := range times {
				sec, _ := rec[k].(float64)
				if at := time.Unix(0, int64(sec*1e9)); at.Before(start.Add(-time.Second)) || at.After(end.Add(time.Second)) {
					t.Errorf("%s mode: record %d: %s %v, want a time between %v and %v", mode, i, k, rec[k], start, end)
				}
			}
			if rec.str("mode") != mode {
				t.Errorf("%s mode: record %d: mode %q", mode, i, rec.str("mode"))
			}
			got := maps.Clone(rec)
			for _, k := range []string{"ts", "robots_fetched_at", "served_at", "mode"} {
				delete(got, k)
			}
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("%s mode: record %d:\n got %s\nwant %s", mode, i, e2eDump([]e2eRecord{got}), e2eDump(want[i:i+1]))
			}
			byMode[mode] = append(byMode[mode], got)
		}

		// The access log entry of each request has the decision exactly
		// when a record was written.
		access := c.lines("access.log", "http.log.access", len(requests))
		for i, rq := range requests {
			entry := access[i]
			_, has := entry["robots_verdict"]
			if has != rq.recorded {
				t.Errorf("%s mode: access log of GET %s by %q: robots fields %v, want %v:\n%s", mode, rq.path, rq.ua, has, rq.recorded, e2eDump(access[i:i+1]))
			}
		}
		if e := access[0]; e.str("robots_verdict") != "deny" || e.str("robots_reason") != "named_group" ||
			e.str("robots_agent") != "GPTBot" || e["robots_rule_line"] != 2.0 {
			t.Errorf("%s mode: access log of the first request: %s", mode, e2eDump(access[:1]))
		}
		// Each mode from a fresh start: what the handler remembers (who
		// fetched robots.txt) outlives a reload, not a stop.
		if err := caddy.Stop(); err != nil {
			t.Fatalf("stopping caddy: %v", err)
		}
	}
	if !reflect.DeepEqual(byMode["enforce"], byMode["log"]) {
		t.Errorf("records differ between modes beyond mode:\nenforce:\n%slog:\n%s", e2eDump(byMode["enforce"]), e2eDump(byMode["log"]))
	}
}

// The placeholders reach the handlers after robots_enforce (respond) and
// the deferred header operations; values that do not apply are empty.
func TestE2EPlaceholders(t *testing.T) {
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce log {
		source inline <<TXT
			User-agent: GPTBot
			Disallow: /private/

			User-agent: *
			Disallow: /private/
			Allow: /private/open
			TXT
		serve_robots origin
	}
	respond "verdict={http.robots_enforce.verdict} reason={http.robots_enforce.reason} agent={http.robots_enforce.agent} rule={http.robots_enforce.rule} line={http.robots_enforce.rule_line}"
}
`, nil)
	for _, tc := range []struct{ ua, path, want string }{
		{e2eGPTBot, "/private/x", "verdict=deny reason=named_group agent=GPTBot rule=/private/ line=2"},
		{e2eGPTBot, "/public", "verdict=allow reason=named_group agent=GPTBot rule= line="},
		{e2eCrawler, "/private/x", "verdict=deny reason=wildcard_group agent=ExampleCrawler rule=/private/ line=5"},
		{e2eCrawler, "/private/open/y", "verdict=allow reason=wildcard_group agent=ExampleCrawler rule=/private/open line=6"},
		{e2eBrowser, "/private/x", "verdict=allow reason=not_automated agent= rule= line="},
		{e2eGPTBot, "/robots.txt", "verdict=allow reason=robots_txt agent= rule= line="},
	} {
		if r := c.get(0, "", tc.path, tc.ua); r.status != http.StatusOK || r.body != tc.want {
			t.Errorf("GET %s by %q = %d %q, want 200 %q", tc.path, tc.ua, r.status, r.body, tc.want)
		}
	}
}
