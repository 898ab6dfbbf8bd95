package audit

import (
	"testing"
)

// v3Logs are the version 3 logs of two instances, written by hand until a
// handler of version 3 can write them (see testdata/audit/README.md).
var v3Logs = []string{"v3-a.log", "v3-b.log"}

// TestV3Log checks every row of the version 3 logs against what each
// record of testdata/audit/README.md illustrates: a fetch counts for the
// client that made it, and for a token only where the fetching client
// proved it, or no method could.
func TestV3Log(t *testing.T) {
	r := v2Report(t, Options{}, v3Logs...)
	type want struct {
		requests, violations, protective, afterFetch int64
		fetched                                      string
		ips                                          int
	}
	wants := map[string]want{
		// Fetched robots.txt from one address (credited: no method can
		// verify its token) and crawled from another: both violations
		// after the fetch, the one on instance a by its record's own link.
		"ExampleBot (unverified) at https://www.example.com": {2, 2, 0, 2, "yes (client)", 2},
		// Behind the same address as ExampleBot, never fetched robots.txt:
		// ExampleBot's fetch is not CCBot's.
		"CCBot (unverified) at https://www.example.com": {2, 2, 0, 0, "no", 1},
		// Fetched robots.txt on instance a from one address, verified,
		// and crawled on b from another: linked by its token.
		"GPTBot (verified) at https://www.example.com": {2, 1, 0, 1, "yes (token)", 1},
		// Never fetched robots.txt: a forger's fetch as Googlebot is not
		// the real Googlebot's.
		"Googlebot (verified) at https://www.example.com": {2, 1, 0, 0, "no", 1},
		// An unconfirmed claim is not credited the verified ClaudeBot's
		// fetch.
		"ClaudeBot (unconfirmed) at https://www.example.com": {1, 1, 0, 0, "no", 1},
		// No User-Agent: linked by its address and its (empty) User-Agent.
		"(none) at https://www.example.com": {1, 1, 0, 1, "yes (client)", 1},
		// A protective denial: neither reading disallows the path as sent.
		"bingbot (verified) at https://www.example.com": {1, 0, 1, 0, "no", 1},
	}
	got := map[string]want{}
	for i := range r.Crawlers {
		c := &r.Crawlers[i]
		got[c.String()] = want{c.Requests, c.Violations, c.Protective, c.ViolationsAfterFetch, c.Fetched(), c.ClientIPs}
	}
	for k, w := range wants {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("rows %v, want %d", got, len(wants))
	}
	// The forger is linked to its own fetch, by its address and the token
	// it claimed.
	if len(r.Forgeries) != 1 {
		t.Fatalf("forgeries: %+v", r.Forgeries)
	}
	if f := &r.Forgeries[0]; f.String() != "forged Googlebot at https://www.example.com" || f.Violations != 1 || f.Fetched() != "yes (client)" || f.ViolationsAfterFetch != 1 {
		t.Errorf("forged Googlebot: %s, %d violations, fetched %q, %d after", f.String(), f.Violations, f.Fetched(), f.ViolationsAfterFetch)
	}
	if r.Total.Records != 12 || r.Total.Fetches != 5 || r.Fetches.Serves != 5 || r.Fetches.Dropped != 0 || r.Total.Skipped["other_logger"] != 1 || len(r.Notes()) != 0 {
		t.Errorf("total %+v, fetches %+v, notes %q", r.Total, r.Fetches, r.Notes())
	}
}
