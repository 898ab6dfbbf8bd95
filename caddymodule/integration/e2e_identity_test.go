package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// e2eGooglebot is Googlebot's User-Agent header.
const e2eGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// A Googlebot request from an address in the operator's list (IPv4 or
// IPv6) is judged by the Googlebot group; the same claim from any other
// address is judged by the "*" group, or refused with "forged deny"; the
// records say verified and forged. The client address is Caddy's, after
// trusted_proxies: the test speaks for clients as a trusted proxy.
func TestE2EVerifiedIdentity(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "googlebot.json")
	if err := os.WriteFile(list, []byte(`{"creationTime": "2026-11-20T00:00:00Z", "prefixes": [
		{"ipv4Prefix": "192.0.2.0/24"}, {"ipv6Prefix": "2001:db8:1::/48"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The robots.txt gives Googlebot what it closes to every other
	// crawler, as 5 of the 39 real files of testdata/robots do.
	site := func(forged string) string {
		return `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: Googlebot
			Allow: /

			User-agent: *
			Disallow: /private/
			TXT
		body denied
		verify {
			builtin off
			ip_ranges Googlebot <LIST>
			forged ` + forged + `
		}
	}
	respond "page {path}"
}
`
	}
	c := e2eStart(t, 1, site("wildcard"), map[string]string{"<LIST>": filepath.ToSlash(list)})
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	get := func(ip string) e2eResponse { return c.getWith(0, "", "/private/x", e2eGooglebot, from(ip)) }
	// The list is read in the background after the first request.
	if !e2eEventually(func() bool { return get("192.0.2.7").status == http.StatusOK }) {
		t.Fatal("Googlebot from an address in its list was never judged by its group")
	}
	for _, tc := range []struct {
		ip       string
		status   int
		identity string
	}{
		{"192.0.2.7", http.StatusOK, "verified"},
		{"2001:db8:1::42", http.StatusOK, "verified"},
		{"198.51.100.9", http.StatusForbidden, "forged"},
		{"2001:db8:2::1", http.StatusForbidden, "forged"},
	} {
		if r := get(tc.ip); r.status != tc.status {
			t.Errorf("Googlebot from %s = %d, want %d", tc.ip, r.status, tc.status)
		}
	}
	recs := c.records(2)
	for _, rec := range recs {
		if rec.str("identity") != "forged" || rec.str("identity_method") != "ip_ranges" || rec.str("agent") != "Googlebot" ||
			rec.str("reason") != "wildcard_group" {
			t.Errorf("record of a forged claim: %s", e2eDump([]e2eRecord{rec}))
		}
	}
	if recs[0].str("client_ip") != "198.51.100.9" || recs[1].str("client_ip") != "2001:db8:2::1" {
		t.Errorf("client_ip of the records: %q, %q", recs[0].str("client_ip"), recs[1].str("client_ip"))
	}

	// "forged deny": refused outright, even where "*" allows.
	c.load(site("deny"))
	if !e2eEventually(func() bool {
		return c.getWith(0, "", "/public", e2eGooglebot, from("198.51.100.9")).status == http.StatusForbidden
	}) {
		t.Error("forged deny: a forged Googlebot was let through to /public")
	}
	if r := c.getWith(0, "", "/public", e2eGooglebot, from("192.0.2.8")); r.status != http.StatusOK {
		t.Errorf("forged deny: the real Googlebot got %d", r.status)
	}
	last := c.records(3)
	if rec := last[len(last)-1]; rec.str("reason") != "forged" || rec.str("compliance") != "protective" {
		t.Errorf("record of a refused forgery: %s", e2eDump(last[len(last)-1:]))
	}
}
