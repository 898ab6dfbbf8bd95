package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
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
	for _, ua := range []string{e2eGPTBot, e2eCurl, e2eBrowser, ""} {
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

	const denied = "Disallowed by this site's robots.txt."
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
		{0, e2eCurl, "/private/x", 403, denied},
		{0, e2eCurl, "/private/open", 200, "page /private/open"},
		{0, "Bytespider", "/public", 403, denied},
		{0, "", "/private/x", 403, denied}, // no User-Agent: automated
		{1, e2eGPTBot, "/private/x", 403, "shaped 403 named_group GPTBot 2"},
		{1, e2eCurl, "/private/x", 403, "shaped 403 wildcard_group curl 5"},
		{1, e2eBrowser, "/private/x", 200, "page /private/x"},
		{2, e2eGPTBot, "/private/x", 403, ""},
		{2, e2eBrowser, "/private/x", 200, "page /private/x"},
		{3, e2eBrowser, "/private/x", 403, ""}, // wildcard all binds browsers too
		{3, e2eBrowser, "/public", 200, "page /public"},
		{4, e2eCurl, "/private/x", 200, "page /private/x"}, // wildcard none binds nobody
		{4, e2eGPTBot, "/private/x", 451, ""},              // but named groups still do
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

// e2eRecordFields are the fields of a compliance record, a contract.
var e2eRecordFields = []string{
	"level", "ts", "logger", "msg",
	"host", "method", "uri", "user_agent", "agent", "bot_class", "verdict", "mode", "reason",
	"reading", "group_line", "rule", "rule_line", "grace", "robots_hash", "robots_source",
	"remote_ip", "agent_fetched_robots", "automation", "robots_fetched_at",
}

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
		{e2eCurl, "/private/c", true},
		{e2eCurl, "/private/open", true}, // allowed, by a rule
		{e2eCurl, "/elsewhere", true},    // allowed, by no rule
	}
	hash := e2eHash(e2eRobots)
	want := []e2eRecord{
		{"uri": "/private/a?x=1", "user_agent": e2eGPTBot, "agent": "GPTBot", "bot_class": "named", "verdict": "deny",
			"reason": "named_group", "reading": "as_sent", "group_line": 1.0, "rule": "/private/", "rule_line": 2.0,
			"agent_fetched_robots": false, "automation": "catalogue"},
		{"uri": "/private/b", "user_agent": e2eGPTBot, "agent": "GPTBot", "bot_class": "named", "verdict": "deny",
			"reason": "named_group", "reading": "as_sent", "group_line": 1.0, "rule": "/private/", "rule_line": 2.0,
			"agent_fetched_robots": true, "automation": "catalogue"},
		{"uri": "/private/c", "user_agent": e2eCurl, "agent": "curl", "bot_class": "wildcard", "verdict": "deny",
			"reason": "wildcard_group", "reading": "as_sent", "group_line": 4.0, "rule": "/private/", "rule_line": 5.0,
			"agent_fetched_robots": false, "automation": "catalogue"},
		{"uri": "/private/open", "user_agent": e2eCurl, "agent": "curl", "bot_class": "wildcard", "verdict": "allow",
			"reason": "wildcard_group", "reading": "as_sent", "group_line": 4.0, "rule": "/private/open", "rule_line": 6.0,
			"agent_fetched_robots": false, "automation": "catalogue"},
		{"uri": "/elsewhere", "user_agent": e2eCurl, "agent": "curl", "bot_class": "wildcard", "verdict": "allow",
			"reason": "wildcard_group", "reading": "as_sent", "group_line": 4.0, "rule": "", "rule_line": 0.0,
			"agent_fetched_robots": false, "automation": "catalogue"},
	}
	for _, w := range want {
		maps.Copy(w, e2eRecord{"level": "info", "logger": "http.handlers.robots_enforce", "msg": "robots.txt decision",
			"host": "site.test", "method": "GET", "grace": false, "robots_hash": hash,
			"robots_source": "http://site.test/robots.txt", "remote_ip": "127.0.0.1"})
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
			if keys := slices.Sorted(maps.Keys(rec)); !slices.Equal(keys, slices.Sorted(slices.Values(e2eRecordFields))) {
				t.Errorf("%s mode: record %d has fields %v, want %v", mode, i, keys, slices.Sorted(slices.Values(e2eRecordFields)))
			}
			for _, k := range []string{"ts", "robots_fetched_at"} {
				sec, _ := rec[k].(float64)
				if at := time.Unix(0, int64(sec*1e9)); at.Before(start.Add(-time.Second)) || at.After(end.Add(time.Second)) {
					t.Errorf("%s mode: record %d: %s %v, want a time between %v and %v", mode, i, k, rec[k], start, end)
				}
			}
			if rec.str("mode") != mode {
				t.Errorf("%s mode: record %d: mode %q", mode, i, rec.str("mode"))
			}
			got := maps.Clone(rec)
			for _, k := range []string{"ts", "robots_fetched_at", "mode"} {
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
	}
	respond "verdict={http.robots_enforce.verdict} reason={http.robots_enforce.reason} agent={http.robots_enforce.agent} rule={http.robots_enforce.rule} line={http.robots_enforce.rule_line}"
}
`, nil)
	for _, tc := range []struct{ ua, path, want string }{
		{e2eGPTBot, "/private/x", "verdict=deny reason=named_group agent=GPTBot rule=/private/ line=2"},
		{e2eGPTBot, "/public", "verdict=allow reason=named_group agent=GPTBot rule= line="},
		{e2eCurl, "/private/x", "verdict=deny reason=wildcard_group agent=curl rule=/private/ line=5"},
		{e2eCurl, "/private/open/y", "verdict=allow reason=wildcard_group agent=curl rule=/private/open line=6"},
		{e2eBrowser, "/private/x", "verdict=allow reason=not_automated agent= rule= line="},
		{e2eGPTBot, "/robots.txt", "verdict=allow reason=robots_txt agent= rule= line="},
	} {
		if r := c.get(0, "", tc.path, tc.ua); r.status != http.StatusOK || r.body != tc.want {
			t.Errorf("GET %s by %q = %d %q, want 200 %q", tc.path, tc.ua, r.status, r.body, tc.want)
		}
	}
}

// Besides the site's own file, robots.txt can come from a file, a URL or
// the configuration itself, and the site's own can be served by
// file_server: each is in force. (The denials have a body, so that the
// handler writes them and the deferred header applies; handle_errors
// answers with a writer of its own.)
func TestE2ESources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(file, []byte("# from a file\nUser-agent: GPTBot\nDisallow: /private/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dir, "site")
	if err := os.MkdirAll(filepath.Join(site, "private"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"robots.txt":     "#\n#\n#\n#\nUser-agent: GPTBot\nDisallow: /private/\n",
		"private/x.html": "private page",
		"public.html":    "public page",
	} {
		if err := os.WriteFile(filepath.Join(site, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	remote := e2eNewUpstream(t, map[string]e2eRoute{"/rules.txt": e2eText("#\n#\nUser-agent: GPTBot\nDisallow: /private/\n")})
	c := e2eStart(t, 4, `
(answer) {
	header >X-Robots "{http.robots_enforce.verdict} {http.robots_enforce.rule_line}"
	respond "page {path}"
}
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source file <FILE>
		body denied
	}
	import answer
}
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<EOF
			User-agent: GPTBot
			Disallow: /private/
			EOF
		body denied
	}
	import answer
}
http://:<PORT2> {
	bind 127.0.0.1
	robots_enforce {
		source url <URL>
		body denied
	}
	import answer
}
http://:<PORT3> {
	bind 127.0.0.1
	header >X-Robots "{http.robots_enforce.verdict} {http.robots_enforce.rule_line}"
	root * <SITE>
	robots_enforce {
		body denied
	}
	file_server
}
`, map[string]string{"<FILE>": filepath.ToSlash(file), "<URL>": remote.URL + "/rules.txt", "<SITE>": filepath.ToSlash(site)})

	for port, tc := range []struct {
		line, source, public string
	}{
		{"3", "file:" + filepath.ToSlash(file), "page /public.html"},
		{"2", "inline", "page /public.html"},
		{"4", remote.URL + "/rules.txt", "page /public.html"},
		{"6", "http://" + c.addr(3) + "/robots.txt", "public page"}, // the site's scheme
	} {
		r := c.get(port, "", "/private/x.html", e2eGPTBot)
		if r.status != http.StatusForbidden || r.header.Get("X-Robots") != "deny "+tc.line {
			t.Errorf("port %d: GET /private/x.html by GPTBot = %d, X-Robots %q; want 403, %q", port, r.status, r.header.Get("X-Robots"), "deny "+tc.line)
		}
		if r := c.get(port, "", "/public.html", e2eGPTBot); r.status != http.StatusOK || r.body != tc.public {
			t.Errorf("port %d: GET /public.html by GPTBot = %d %q, want 200 %q", port, r.status, r.body, tc.public)
		}
		if r := c.get(port, "", "/private/x.html", e2eBrowser); r.status != http.StatusOK {
			t.Errorf("port %d: GET /private/x.html by a browser = %d, want 200", port, r.status)
		}
		recs := c.records(port + 1)
		if got := recs[port].str("robots_source"); got != tc.source {
			t.Errorf("port %d: robots_source %q, want %q", port, got, tc.source)
		}
	}
	if n, ua := remote.count(remote.Listener.Addr().String(), "/rules.txt"), remote.agent(remote.Listener.Addr().String(), "/rules.txt"); n != 1 || ua != e2eInternal {
		t.Errorf("the url source was fetched %d times by %q, want once by %q", n, ua, e2eInternal)
	}
	if r := c.get(3, "", "/robots.txt", e2eGPTBot); r.status != http.StatusOK || r.body != "#\n#\n#\n#\nUser-agent: GPTBot\nDisallow: /private/\n" {
		t.Errorf("file_server site: GET /robots.txt = %d %q, want 200 and the file", r.status, r.body)
	}
}

// How the upstream answers the handler's robots.txt request decides what is
// in force (RFC 9309 §2.3.1), per host: one site serves every host below
// from one upstream, which answers each differently.
func TestE2EUpstreamOutcomes(t *testing.T) {
	const gptbotPrivate = "User-agent: GPTBot\nDisallow: /private/\n"
	routes := map[string]e2eRoute{
		"notfound.test /robots.txt": e2eStatus(http.StatusNotFound),
		"error.test /robots.txt":    e2eStatus(http.StatusInternalServerError),
		"slow.test /robots.txt":     e2eSlow(3*time.Second, e2eText(gptbotPrivate)),
		"html.test /robots.txt": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!doctype html><html><body>Welcome!</body></html>")
		},
		"redirect.test /robots.txt":  e2eRedirect(http.StatusMovedPermanently, "/moved1"),
		"redirect.test /moved1":      e2eRedirect(http.StatusFound, "/moved2"),
		"redirect.test /moved2":      e2eText(gptbotPrivate),
		"redirect5.test /robots.txt": e2eRedirect(http.StatusMovedPermanently, "/r1"),
		"redirect6.test /robots.txt": e2eRedirect(http.StatusMovedPermanently, "/r1"),
		"a.test /robots.txt":         e2eText("User-agent: GPTBot\nDisallow: /a-only/\n"),
		"b.test /robots.txt":         e2eText("User-agent: GPTBot\nDisallow: /b-only/\n"),
	}
	// Chains of 5 and 6 redirects (RFC 9309 §2.3.1.2: follow at least
	// five), each ending in a file that disallows /private/ to GPTBot.
	for i := 1; i <= 6; i++ {
		next := e2eRedirect(http.StatusMovedPermanently, fmt.Sprintf("/r%d", i+1))
		if i == 5 {
			routes["redirect5.test /r5"] = e2eText(gptbotPrivate)
		} else if i < 5 {
			routes[fmt.Sprintf("redirect5.test /r%d", i)] = next
		}
		if i == 6 {
			next = e2eText(gptbotPrivate)
		}
		routes[fmt.Sprintf("redirect6.test /r%d", i)] = next
	}
	up := e2eNewUpstream(t, routes)
	c := e2eStart(t, 1, e2eProxySite, map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "fetch_timeout 300ms\n\t\tbody denied",
	})

	for _, tc := range []struct {
		host, ua, path string
		status         int
		robots         string // X-Robots: verdict|reason|agent|rule|rule_line
	}{
		// 4xx: unavailable, everything allowed (§2.3.1.3).
		{"notfound.test", e2eGPTBot, "/private/x", 200, "allow|unavailable|GPTBot||"},
		{"notfound.test", e2eBrowser, "/private/x", 200, "allow|unavailable|||"},
		// 5xx, a timeout, an HTML page: unreachable, complete disallow
		// for crawlers (§2.3.1.4), browsers pass.
		{"error.test", e2eGPTBot, "/private/x", 403, "deny|unreachable|GPTBot||"},
		{"error.test", e2eGPTBot, "/public", 403, "deny|unreachable|GPTBot||"},
		{"error.test", e2eBrowser, "/private/x", 200, "allow|not_automated|||"},
		{"slow.test", e2eGPTBot, "/public", 403, "deny|unreachable|GPTBot||"},
		{"slow.test", e2eBrowser, "/public", 200, "allow|not_automated|||"},
		{"html.test", e2eGPTBot, "/public", 403, "deny|unreachable|GPTBot||"},
		{"html.test", e2eBrowser, "/public", 200, "allow|not_automated|||"},
		// Redirects on the same upstream are followed, up to five.
		{"redirect.test", e2eGPTBot, "/private/x", 403, "deny|named_group|GPTBot|/private/|2"},
		{"redirect.test", e2eGPTBot, "/public", 200, "allow|named_group|GPTBot||"},
		{"redirect5.test", e2eGPTBot, "/private/x", 403, "deny|named_group|GPTBot|/private/|2"},
		{"redirect6.test", e2eGPTBot, "/private/x", 200, "allow|unavailable|GPTBot||"},
		// Each host has its own robots.txt.
		{"a.test", e2eGPTBot, "/a-only/x", 403, "deny|named_group|GPTBot|/a-only/|2"},
		{"a.test", e2eGPTBot, "/b-only/x", 200, "allow|named_group|GPTBot||"},
		{"b.test", e2eGPTBot, "/a-only/x", 200, "allow|named_group|GPTBot||"},
		{"b.test", e2eGPTBot, "/b-only/x", 403, "deny|named_group|GPTBot|/b-only/|2"},
		{"b.test", e2eCurl, "/b-only/x", 200, "allow|no_group|curl||"},
	} {
		r := c.get(0, tc.host, tc.path, tc.ua)
		if r.status != tc.status || r.header.Get("X-Robots") != tc.robots {
			t.Errorf("GET %s%s by %q = %d, X-Robots %q; want %d, %q", tc.host, tc.path, tc.ua, r.status, r.header.Get("X-Robots"), tc.status, tc.robots)
		}
	}
	// One fetch per host, by the handler, whatever the number of requests;
	// a failed one is not retried at once.
	for _, hp := range []string{
		"notfound.test /robots.txt", "error.test /robots.txt", "slow.test /robots.txt", "html.test /robots.txt",
		"redirect.test /robots.txt", "redirect.test /moved1", "redirect.test /moved2",
		"redirect5.test /r5", "redirect6.test /r5", "a.test /robots.txt", "b.test /robots.txt",
	} {
		host, path, _ := strings.Cut(hp, " ")
		if n, ua := up.count(host, path), up.agent(host, path); n != 1 || ua != e2eInternal {
			t.Errorf("upstream: %d requests for %s by %q, want 1 by %q", n, hp, ua, e2eInternal)
		}
	}
	if n := up.count("redirect6.test", "/r6"); n != 0 {
		t.Errorf("upstream: %d requests for redirect6.test/r6, the sixth redirect's target, want 0", n)
	}
}

// A crawler cannot reach a disallowed path by spelling it differently: each
// spelling below, sent as written, is denied. Go's server and Caddy accept
// every one of them (none is refused with 400 before the handler), and
// "OPTIONS *" is answered by Go's server itself.
func TestE2EBypassSpellings(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText("User-agent: *\nDisallow: /private/\n")})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied",
	})
	for _, target := range []string{
		"/private/x",
		"/%70rivate/x",
		"//private/x",
		"/./private/x",
		"/pub/../private/x",
		"/pub/..%2Fprivate/x",
		"/pub/%2e%2e/private/x",
		"/private%2Fx",
		"/private;a=b/x",
		`/pub\..\private/x`,
		"http://example.test/private/x", // absolute form
	} {
		r := c.raw(0, "GET", target, "GPTBot/1.2")
		if r.status != http.StatusForbidden || r.body != "denied" {
			t.Errorf("GET %s by GPTBot = %d %q, want 403", target, r.status, r.body)
		}
		if r := c.raw(0, "HEAD", target, "GPTBot/1.2"); r.status != http.StatusForbidden {
			t.Errorf("HEAD %s by GPTBot = %d, want 403", target, r.status)
		}
		if r := c.raw(0, "GET", target, e2eBrowser); r.status != http.StatusOK {
			t.Errorf("GET %s by a browser = %d, want 200", target, r.status)
		}
	}
	for _, tc := range []struct {
		method, target string
		status         int
		robots         string
	}{
		{"GET", "/public/x", 200, "allow|wildcard_group|GPTBot||"},
		{"OPTIONS", "*", 200, ""},                               // Go's server answers
		{"GET", "*", 200, "allow|no_path|||"},                   // reaches the handler
		{"CONNECT", "example.test:80", 200, "allow|no_path|||"}, // authority form
	} {
		r := c.raw(0, tc.method, tc.target, "GPTBot/1.2")
		if r.status != tc.status || r.header.Get("X-Robots") != tc.robots {
			t.Errorf("%s %s by GPTBot = %d, X-Robots %q; want %d, %q", tc.method, tc.target, r.status, r.header.Get("X-Robots"), tc.status, tc.robots)
		}
	}
}
