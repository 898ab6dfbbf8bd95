package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// e2eChrome is a browser's User-Agent, as an undeclared crawler sends it.
const e2eChrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// With undeclared bind, a browser's User-Agent from GPTBot's published
// range is GPTBot, held to its group (Disallow: /); from elsewhere it is a
// browser; with the default, ignore, it is a browser from the range too.
func TestE2EUndeclaredCrawler(t *testing.T) {
	list := filepath.Join(t.TempDir(), "gptbot.json")
	if err := os.WriteFile(list, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	site := func(port, undeclared string) string {
		return `
http://:<PORT` + port + `> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: GPTBot
			Disallow: /

			User-agent: *
			Disallow: /private/
			TXT
		verify {
			builtin off
			ip_ranges GPTBot <LIST>
		` + undeclared + `
		}
	}
	respond "page"
}
`
	}
	c := e2eStart(t, 2, site("0", "\tundeclared bind")+site("1", ""), map[string]string{"<LIST>": filepath.ToSlash(list)})
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	for _, tc := range []struct {
		port   int
		ip     string
		path   string
		status int
	}{
		{0, "192.0.2.7", "/blog/post", http.StatusForbidden}, // GPTBot's group: Disallow: /
		{0, "192.0.2.7", "/robots.txt", http.StatusOK},
		{0, "198.51.100.7", "/blog/post", http.StatusOK}, // a browser
		{0, "198.51.100.7", "/private/x", http.StatusOK}, // "*" binds crawlers, not browsers
		{1, "192.0.2.7", "/blog/post", http.StatusOK},    // ignore: a browser, whatever its address
	} {
		if r := c.getWith(tc.port, "", tc.path, e2eChrome, from(tc.ip)); r.status != tc.status {
			t.Errorf("port %d: Chrome from %s GET %s = %d, want %d", tc.port, tc.ip, tc.path, r.status, tc.status)
		}
	}
	rec := c.records(1)[0]
	for k, want := range map[string]string{"agent": "GPTBot", "bot_class": "undeclared", "identity": "verified",
		"identity_method": "ip_ranges", "reason": "named_group", "automation": "ip_ranges", "compliance": "violation"} {
		if rec.str(k) != want {
			t.Errorf("record of the undeclared crawler: %s = %q, want %q\n%s", k, rec.str(k), want, e2eDump([]e2eRecord{rec}))
		}
	}
}

// e2eViolatorsSite is a log-mode site whose robots.txt keeps every
// crawler out of /private/, with violators set to MODE.
const e2eViolatorsSite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce log {
		source inline <<TXT
			User-agent: *
			Disallow: /private/
			TXT
		violators <MODE>
	}
	respond "page"
}
http://:<PORT1> {
	bind 127.0.0.1
	metrics
}
`

// With violators enforce, a log-mode site lets a crawler's first
// violation pass, and records it; from then on what its group disallows
// is denied, and what it allows passes; an honest crawler never sees a
// 403; another crawler's address is not escalated by the violator's
// name. All of it outlives a reload and a restart.
func TestE2EViolatorsEnforce(t *testing.T) {
	const rogue, honest = "RogueBot/1.0 (+https://rogue.example)", "ExampleBot/1.0 (+https://example.net/bot)"
	vars := map[string]string{"<MODE>": "enforce"}
	c := e2eStart(t, 2, e2eViolatorsSite, vars)
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	get := func(ua, ip, path string) int { return c.getWith(0, "", path, ua, from(ip)).status }
	expect := func(when, ua, ip, path string, want int) {
		t.Helper()
		if got := get(ua, ip, path); got != want {
			t.Errorf("%s: %s from %s GET %s = %d, want %d", when, ua, ip, path, got, want)
		}
	}
	expect("the first violation", rogue, "198.51.100.1", "/private/a", http.StatusOK)
	expect("escalated", rogue, "198.51.100.1", "/private/b", http.StatusForbidden)
	expect("escalated", rogue, "198.51.100.1", "/public", http.StatusOK)
	expect("the same name, another address", rogue, "198.51.100.2", "/private/b", http.StatusOK)
	expect("an honest crawler", honest, "198.51.100.1", "/public", http.StatusOK)
	recs := c.records(3)
	if recs[0].str("escalation") != "enforce" || recs[0]["escalation_began"] != true || recs[0].str("compliance") != "violation" {
		t.Errorf("the first violation's record:\n%s", e2eDump(recs[:1]))
	}
	if recs[1].str("escalation") != "enforce" || recs[1].str("escalated_by") != "/private/a" || recs[1].str("verdict") != "deny" {
		t.Errorf("the escalated denial's record:\n%s", e2eDump(recs[1:2]))
	}
	if got := e2eMetric(t, c, `caddy_robots_enforce_escalations_total{mode="enforce"}`); got != 2 {
		t.Errorf("escalations_total = %v, want 2 (the rogue from two addresses)", got)
	}

	c.load(e2eViolatorsSite) // a reload
	expect("after a reload", rogue, "198.51.100.1", "/private/c", http.StatusForbidden)
	expect("after a reload", rogue, "198.51.100.1", "/public", http.StatusOK)
	if err := caddy.Stop(); err != nil { // saves the state
		t.Fatal(err)
	}
	c.load(e2eViolatorsSite) // a restart
	expect("after a restart", rogue, "198.51.100.1", "/private/d", http.StatusForbidden)
	expect("after a restart", honest, "198.51.100.1", "/private/d", http.StatusOK) // its first violation
	expect("after a restart", honest, "198.51.100.3", "/public", http.StatusOK)
	c.records(6) // the decisions recorded: the violations and the denials

	// The audit reads the escalations from the records this Caddy wrote,
	// across its reload and restart.
	got := map[string]audit.Escalation{}
	for _, e := range e2eAudit(t, c).Escalations {
		got[e.Agent+" "+e.ClientIP] = e
	}
	for key, want := range map[string]struct {
		by                 string
		denied, violations int64
	}{
		"RogueBot 198.51.100.1":   {"/private/a", 3, 3}, // /private/b, c and d
		"RogueBot 198.51.100.2":   {"/private/b", 0, 0},
		"ExampleBot 198.51.100.1": {"/private/d", 0, 0}, // its own first violation
	} {
		e, ok := got[key]
		if !ok || e.Mode != "enforce" || e.EscalatedBy != want.by || e.Denied != want.denied || e.Violations != want.violations {
			t.Errorf("the audit's escalation of %s: %+v (found %v), want escalated by %s, %d denied, %d violations", key, e, ok, want.by, want.denied, want.violations)
		}
		delete(got, key)
	}
	for key, e := range got {
		t.Errorf("the audit has an escalation of %s nobody began: %+v", key, e)
	}
}

// With violators block, a crawler recorded with a violation is denied
// everything but /robots.txt, and its records say why.
func TestE2EViolatorsBlock(t *testing.T) {
	const rogue = "RogueBot/1.0 (+https://rogue.example)"
	c := e2eStart(t, 2, e2eViolatorsSite, map[string]string{"<MODE>": "block for 1h"})
	get := func(path string) int {
		return c.getWith(0, "", path, rogue, http.Header{"X-Forwarded-For": {"198.51.100.9"}}).status
	}
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/private/a", http.StatusOK}, // the first violation passes: log mode
		{"/public", http.StatusForbidden},
		{"/robots.txt", http.StatusOK},
		{"/private/b", http.StatusForbidden},
	} {
		if got := get(tc.path); got != tc.want {
			t.Errorf("GET %s = %d, want %d", tc.path, got, tc.want)
		}
	}
	recs := c.records(3)
	if r := recs[1]; r.str("uri") != "/public" || r.str("reason") != "escalated" || r.str("compliance") != "protective" || r.str("escalation") != "block" {
		t.Errorf("the blocked allowed request's record:\n%s", e2eDump(recs[1:2]))
	}
}
