package integration

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// e2eBoundSite gives Googlebot and GPTBot what it closes to every other
// crawler, so that a claim judged as made passes and one judged by "*"
// is refused.
const e2eBoundSite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: Googlebot
			User-agent: GPTBot
			Allow: /

			User-agent: *
			Disallow: /private/
			TXT
		body denied
		verify {
			builtin off
			<VERIFY>
		}
	}
	respond "page {path}"
}
`

// A forged Googlebot whose reverse DNS never answers is judged as claimed
// only while its first lookup is an answer on its way, for the verifier's
// bound (2 s): from then on it is "unconfirmed" and judged by "*", though
// the lookup itself runs on to its timeout and fails.
func TestE2EPendingBound(t *testing.T) {
	silent, err := net.ListenPacket("udp", "127.0.0.1:0") // reads nothing, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	c := e2eStart(t, 1, e2eBoundSite, map[string]string{
		"<VERIFY>": "reverse_dns Googlebot googlebot.com\n\t\t\tresolver " + silent.LocalAddr().String(),
	})
	get := func() e2eResponse {
		return c.getWith(0, "", "/private/x", e2eGooglebot, http.Header{"X-Forwarded-For": {"203.0.113.5"}})
	}
	start := time.Now()
	if r := get(); r.status != http.StatusOK {
		t.Fatalf("the first claim = %d, want 200: judged as claimed while its answer is on its way", r.status)
	}
	for time.Since(start) < 3*time.Second {
		time.Sleep(250 * time.Millisecond)
		r := get()
		if since := time.Since(start); since > 2100*time.Millisecond && r.status != http.StatusForbidden {
			t.Fatalf("%v after the first claim = %d, want 403: past the bound, no answer is on its way", since.Round(time.Millisecond), r.status)
		}
	}
	rec := c.records(1)[0]
	if rec.str("identity") != "unconfirmed" || rec.str("identity_method") != "reverse_dns" || rec.str("reason") != "wildcard_group" {
		t.Errorf("record of the unconfirmed claim: %s", e2eDump([]e2eRecord{rec}))
	}
}

// A local range list is read when the configuration loads: from the very
// first request after each start, GPTBot from its range is verified, and
// a forged one judged by "*" (before, the list loaded after the first
// request, which a claim then passed or failed unproved).
func TestE2ERangeFileAtStart(t *testing.T) {
	list := filepath.Join(t.TempDir(), "gptbot.json")
	if err := os.WriteFile(list, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, round := range []string{"first start", "second start"} {
		t.Run(round, func(t *testing.T) { // each start stopped when its test ends
			c := e2eStart(t, 1, e2eBoundSite, map[string]string{"<VERIFY>": "ip_ranges GPTBot " + filepath.ToSlash(list)})
			real := c.getWith(0, "", "/private/x", e2eGPTBot, http.Header{"X-Forwarded-For": {"192.0.2.9"}})
			forged := c.getWith(0, "", "/private/x", e2eGPTBot, http.Header{"X-Forwarded-For": {"198.51.100.9"}})
			if real.status != http.StatusOK || forged.status != http.StatusForbidden {
				t.Errorf("the first request, GPTBot from its range = %d, then a forged one = %d; want 200, 403", real.status, forged.status)
			}
			if rec := c.records(1)[0]; rec.str("identity") != "forged" || rec.str("identity_method") != "ip_ranges" {
				t.Errorf("record of the forged claim: %s", e2eDump([]e2eRecord{rec}))
			}
		})
	}
}

// With no network, a range list that cannot be had is said once, not once
// per handler whose verifier uses it: two sites of different verify
// configurations share one source, and the log holds one warning for it.
func TestE2EListWarningOnce(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	source := "http://" + closed.Addr().String() + "/gptbot.json"
	closed.Close() // nothing answers there
	site := func(port, forged string) string {
		return `
http://:<PORT` + port + `> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: *
			Disallow: /private/
			TXT
		verify {
			builtin off
			ip_ranges GPTBot <SOURCE>
			forged ` + forged + `
		}
	}
	respond "page"
}
`
	}
	c := e2eStart(t, 2, site("0", "wildcard")+site("1", "deny"), map[string]string{"<SOURCE>": source})
	for i := range 2 {
		c.get(i, "", "/", e2eGPTBot) // each handler's verifier starts with its first claim
	}
	warned := func(rec e2eRecord) bool { return rec.str("source") == source && rec.str("level") == "warn" }
	c.linesWhere("caddy.log", "http.robots_enforce.verify", 1, warned)
	time.Sleep(500 * time.Millisecond) // room for a second warning, were there one
	if n := len(c.linesWhere("caddy.log", "http.robots_enforce.verify", 1, warned)); n != 1 {
		t.Errorf("%d warnings about %s, want 1", n, source)
	}
}
