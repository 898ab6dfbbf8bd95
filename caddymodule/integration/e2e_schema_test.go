package integration

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// The handler writes its log lines and the audit reads them with one
// schema (package record): every line a real handler writes of each kind
// (a violation, a protective denial, an allowed request, a verified and a
// forged claim, a robots.txt served) is read back by the audit, none
// skipped or short of a field, and the audit's rows say what the records
// say.
func TestE2ERecordSchemaRoundTrip(t *testing.T) {
	list := filepath.Join(t.TempDir(), "gptbot.json")
	if err := os.WriteFile(list, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce log {
		source inline <<TXT
			User-agent: GPTBot
			Disallow: /

			User-agent: *
			Disallow: /private/
			TXT
		log_allowed
		verify {
			builtin off
			ip_ranges GPTBot <LIST>
		}
	}
	respond "page"
}
`, map[string]string{"<LIST>": filepath.ToSlash(list)})
	const honest = "ExampleBot/1.0 (+https://example.net/bot)"
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	c.getWith(0, "", "/robots.txt", honest, from("198.51.100.1"))
	c.getWith(0, "", "/private/a", honest, from("198.51.100.1"))   // violation, after its own fetch
	c.getWith(0, "", "//private/b", honest, from("198.51.100.1"))  // protective: only the cleaned reading denies
	c.getWith(0, "", "/public", honest, from("198.51.100.1"))      // allowed
	c.getWith(0, "", "/x", e2eGPTBot, from("192.0.2.7"))           // verified, a violation
	c.getWith(0, "", "/private/c", e2eGPTBot, from("203.0.113.9")) // forged, judged by "*": a violation
	c.getWith(0, "", "/public", e2eGPTBot, from("203.0.113.9"))    // forged, allowed
	c.records(6)

	// What the handler wrote, counted from the raw lines.
	var decisions, serves int
	for _, rec := range c.readLog("robots.log", record.Logger) {
		switch rec.str(record.Msg) {
		case record.MsgDecision:
			decisions++
			if v, _ := rec[record.RecordVersion].(float64); int(v) != record.Version {
				t.Errorf("record_version %v, want %d", rec[record.RecordVersion], record.Version)
			}
		case record.MsgServed:
			serves++
		}
	}
	if decisions != 6 || serves != 1 {
		t.Fatalf("the handler wrote %d records and %d serves, want 6 and 1", decisions, serves)
	}

	rep := e2eAudit(t, c)
	if rep.Total.Records != int64(decisions) || rep.Total.Fetches != int64(serves) {
		t.Errorf("the audit read %d records and %d serves, want %d and %d", rep.Total.Records, rep.Total.Fetches, decisions, serves)
	}
	// The log of the records' logger holds records only: the handler's
	// warnings, and what it learns of robots.txt files and claims, go to
	// a logger its include does not catch.
	for kind, n := range rep.Total.Skipped {
		t.Errorf("the audit skipped %d lines as %s", n, kind)
	}
	if m, _ := json.Marshal(rep.Missing); strings.Contains(string(m), ":1") || strings.Contains(string(m), ":2") {
		t.Errorf("records short of fields the audit reads: %s", m)
	}
	type row struct {
		agent, identity                           string
		requests, violations, protective, allowed int64
		fetched                                   string
	}
	var got []row
	for _, cr := range append(rep.Crawlers, rep.Forgeries...) {
		fetched := "no"
		if cr.FetchedRobots {
			fetched = cr.FetchedLink
		}
		got = append(got, row{cr.Agent, cr.Identity, cr.Requests, cr.Violations, cr.Protective, cr.Allowed, fetched})
	}
	want := map[row]bool{
		// Its own fetch: the audit names the closer link, the client.
		{"ExampleBot", "unverified", 3, 1, 1, 1, record.LinkClient}: true,
		{"GPTBot", "verified", 1, 1, 0, 0, "no"}:                    true,
		{"GPTBot", "forged", 2, 1, 0, 1, "no"}:                      true,
	}
	for _, r := range got {
		if !want[r] {
			t.Errorf("audit row %+v, not one of %v", r, want)
		}
		delete(want, r)
	}
	for r := range want {
		t.Errorf("no audit row %+v", r)
	}
}
