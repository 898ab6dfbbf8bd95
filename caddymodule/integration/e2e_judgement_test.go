package integration

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// End-to-end tests of how the handler judges one request: each proves a
// defect of the judgement against a real Caddy (and, where the defect
// needs one, a real origin behind it), by what an operator sees: the
// status, the body the origin served, the compliance record and the
// audit's verdict. The served versions of robots.txt (defects 2 and 3)
// are in e2e_judgement_served_test.go.

// jdCrawler is an honest crawler that no group names: "*" binds it.
const jdCrawler = "ExampleBot/1.0 (+https://example.net/bot)"

// The marker crawler's requests mark a place in the records (see jdMark),
// from an address of their own, so that no other client is tied to them.
const (
	jdMarkerUA = "MarkerBot/1.0 (+https://marker.example/bot)"
	jdMarkerIP = "192.0.2.250"
)

// jdNoField, as a value of a jdCheck want, says the field must be absent.
type jdNoField struct{}

// jdFrom is the header by which the test, a trusted proxy, speaks for a
// client at ip.
func jdFrom(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }

// jdMark sends the marker crawler's request for a path under prefix,
// which the site's robots.txt must disallow to "*", to the port with Host
// host, waits for its record, and returns the records written since the
// previous marker's: those of the requests sent in between, in order, and
// no more. Compliance records are written before the response, so no
// record of an earlier request can follow the marker's, and a missing
// record costs no wait for a time limit.
func jdMark(c *e2eCaddy, port int, host, prefix string) []e2eRecord {
	c.t.Helper()
	isMarker := func(r e2eRecord) bool { return r.str("user_agent") == jdMarkerUA }
	n := 0
	for _, r := range c.records(0) {
		if isMarker(r) {
			n++
		}
	}
	path := fmt.Sprintf("%smarker-%d", prefix, n+1)
	c.getWith(port, host, path, jdMarkerUA, jdFrom(jdMarkerIP))
	c.linesWhere("robots.log", "http.handlers.robots_enforce", 1, func(r e2eRecord) bool {
		return r.str("msg") == record.MsgDecision && isMarker(r) && r.str("uri") == path
	})
	all := c.records(0)
	start, end := 0, len(all)
	for i, r := range all {
		if !isMarker(r) {
			continue
		}
		if r.str("uri") == path {
			end = i
			break
		}
		start = i + 1
	}
	return all[start:end]
}

// jdCheck reports, in one error naming what, each field of want that rec
// does not hold with that value (jdNoField: holds at all).
func jdCheck(t *testing.T, what string, rec e2eRecord, want e2eRecord) {
	t.Helper()
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		w := want[k]
		got, ok := rec[k]
		switch _, absent := w.(jdNoField); {
		case absent && ok:
			bad = append(bad, fmt.Sprintf("%s = %v, want no such field", k, got))
		case !absent && (!ok || !reflect.DeepEqual(got, w)):
			bad = append(bad, fmt.Sprintf("%s = %v, want %v", k, got, w))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s: %s\n%s", what, strings.Join(bad, "; "), e2eDump([]e2eRecord{rec}))
	}
}

// jdSecret is the body of the page robots.txt disallows.
const jdSecret = "SECRET-7f3a: the private page"

// jdRewritingOrigin starts an origin that serves the path an
// X-Original-URL or X-Rewrite-URL header names instead of the request's
// own (its query dropped), as IIS and Symfony do, and returns its address
// and a count of the times it served jdSecret.
func jdRewritingOrigin(t *testing.T, robots string) (string, *atomic.Int64) {
	secrets := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		for _, name := range []string{"X-Original-Url", "X-Rewrite-Url"} {
			if v := r.Header.Get(name); v != "" {
				p, _, _ = strings.Cut(v, "?")
				break
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch p {
		case "/robots.txt":
			fmt.Fprint(w, robots)
		case "/private/secret.html":
			secrets.Add(1)
			fmt.Fprint(w, jdSecret)
		default:
			fmt.Fprint(w, "page "+p)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), secrets
}

// Defect 1: /robots.txt returned before the rewrite headers were judged,
// so GET or HEAD /robots.txt with X-Original-URL or X-Rewrite-URL naming a
// disallowed page read that page from an origin that honours the header,
// for any crawler. The request is judged as any other with such a header:
// denied in enforce mode (the origin never serves the page), passed in
// log mode, and recorded either way as a protective denial by the
// rewrite header. A plain GET /robots.txt still passes, unrecorded.
func TestE2EJudgementRobotsTxtRewriteHeaders(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /private/\n"
	origin, secrets := jdRewritingOrigin(t, robots)
	c := e2eStart(t, 2, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce enforce {
		body denied
	}
	reverse_proxy <ORIGIN>
}
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce log
	reverse_proxy <ORIGIN>
}
`, map[string]string{"<ORIGIN>": origin})
	// The setup: the origin honours the header for a browser, which
	// robots.txt does not bind.
	if r := c.raw(0, "GET", "/robots.txt", e2eBrowser, "X-Original-URL: /private/secret.html"); r.status != http.StatusOK || r.body != jdSecret {
		t.Fatalf("GET /robots.txt with X-Original-URL by a browser = %d %q, want 200 and the secret page", r.status, r.body)
	}
	requests := []struct{ method, target, header string }{
		{"GET", "/robots.txt", "X-Original-URL: /private/secret.html"},
		{"GET", "/robots.txt", "X-Rewrite-URL: /private/secret.html"},
		{"GET", "/robots.txt", "X-Original-URL: /private/secret.html?x"},
		{"GET", "/robots.txt?x", "X-Original-URL: /private/secret.html"},
		{"HEAD", "/robots.txt", "X-Original-URL: /private/secret.html"},
		{"HEAD", "/robots.txt", "X-Rewrite-URL: /private/secret.html"},
	}
	for port, mode := range []string{"enforce", "log"} {
		jdMark(c, port, "example.test", "/private/")
		before := secrets.Load()
		for _, rq := range requests {
			r := c.raw(port, rq.method, rq.target, jdCrawler, rq.header)
			switch {
			case mode == "enforce" && (r.status != http.StatusForbidden || strings.Contains(r.body, jdSecret)):
				t.Errorf("enforce: %s %s with %q by a crawler = %d %q, want 403 without the page", rq.method, rq.target, rq.header, r.status, r.body)
			case mode == "log" && r.status != http.StatusOK:
				t.Errorf("log: %s %s with %q by a crawler = %d, want 200: log mode passes", rq.method, rq.target, rq.header, r.status)
			}
		}
		if n := secrets.Load() - before; mode == "enforce" && n != 0 {
			t.Errorf("enforce: the origin served the secret page %d times to a crawler, want never", n)
		}
		// A plain fetch of robots.txt passes, and is no decision.
		if r := c.raw(port, "GET", "/robots.txt", jdCrawler); r.status != http.StatusOK || r.body != robots {
			t.Errorf("%s: GET /robots.txt by a crawler = %d %q, want 200 and the file", mode, r.status, r.body)
		}
		recs := jdMark(c, port, "example.test", "/private/")
		if len(recs) != len(requests) {
			t.Errorf("%s: %d compliance records, want %d: one per request with a rewrite header, none for the plain fetch:\n%s",
				mode, len(recs), len(requests), e2eDump(recs))
		}
		for i, rec := range recs[:min(len(recs), len(requests))] {
			rq := requests[i]
			jdCheck(t, fmt.Sprintf("%s: record of %s %s with %q", mode, rq.method, rq.target, rq.header), rec, e2eRecord{
				"method": rq.method, "uri": rq.target, "verdict": "deny", "mode": mode,
				"reading": "rewrite_header", "compliance": "protective",
			})
		}
	}
}

// Defect 4: a robots.txt fetch was credited to every client at its
// address. GPTBot and ExampleBot come from one address; GPTBot fetches
// robots.txt, ExampleBot, which never did, asks for a disallowed path: its
// record says it was served none, and the audit says it never fetched
// robots.txt. Once ExampleBot fetches robots.txt itself, its next
// denial says it was served it, as the same client: a token no method
// can prove is proven by nobody.
func TestE2EJudgementServedByOwnFetchOnly(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText("User-agent: *\nDisallow: /private/\n")})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied"})
	const shared = "192.0.2.50"
	get := func(path, ua string) e2eResponse { return c.getWith(0, "site.test", path, ua, jdFrom(shared)) }

	if r := get("/robots.txt", e2eGPTBot); r.status != http.StatusOK {
		t.Fatalf("GET /robots.txt by GPTBot = %d, want 200", r.status)
	}
	if r := get("/private/a", jdCrawler); r.status != http.StatusForbidden {
		t.Fatalf("GET /private/a by ExampleBot = %d, want 403", r.status)
	}
	recs := jdMark(c, 0, "site.test", "/private/")
	if len(recs) != 1 {
		t.Fatalf("records of ExampleBot's request: %d, want 1:\n%s", len(recs), e2eDump(recs))
	}
	jdCheck(t, "ExampleBot, after GPTBot's fetch from its address", recs[0], e2eRecord{
		"agent": "ExampleBot", "client_ip": shared, "compliance": "violation",
		"served_robots": false, "agent_fetched_robots": false, "served_link": jdNoField{},
	})
	found := false
	for _, row := range e2eAudit(t, c).Crawlers {
		if row.Agent == "ExampleBot" {
			found = true
			if row.FetchedRobots {
				t.Errorf("audit: ExampleBot fetched robots.txt: %v (by %q), want false: only GPTBot did", row.FetchedRobots, row.FetchedLink)
			}
		}
	}
	if !found {
		t.Errorf("audit: no row for ExampleBot")
	}

	// Its own fetch counts.
	if r := get("/robots.txt", jdCrawler); r.status != http.StatusOK {
		t.Fatalf("GET /robots.txt by ExampleBot = %d, want 200", r.status)
	}
	get("/private/b", jdCrawler)
	recs = jdMark(c, 0, "site.test", "/private/")
	if len(recs) != 1 {
		t.Fatalf("records of ExampleBot's second request: %d, want 1:\n%s", len(recs), e2eDump(recs))
	}
	jdCheck(t, "ExampleBot, after its own fetch", recs[0], e2eRecord{
		"agent": "ExampleBot", "compliance": "violation", "served_robots": true, "served_link": "client",
	})
}

// Defect 5: what Google's parser allows was recorded as a violation. RFC
// 9309 decodes unreserved octets and compares percent-encodings without
// regard to case, so "/~staff/" and "/caf%C3%A9/" disallow "/%7Estaff/x",
// "/%7estaff/x" and "/caf%c3%a9/x"; Google's robots.cc compares the path
// as sent with the pattern's own encoding (upper-case hex, non-ASCII
// escaped), so it allows them. They are still denied (fail closed), as a
// protective denial; the spellings both read alike stay violations. Both
// verdicts are recorded.
func TestE2EJudgementGoogleReading(t *testing.T) {
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: *
			Disallow: /~staff/
			Disallow: /caf%C3%A9/
			TXT
		body denied
	}
	respond "page {path}"
}
`, nil)
	cases := []struct{ target, compliance, google string }{
		{"/%7Estaff/x", "protective", "allow"},
		{"/%7estaff/x", "protective", "allow"},
		{"/caf%c3%a9/x", "protective", "allow"},
		{"/~staff/x", "violation", "deny"},
		{"/caf%C3%A9/x", "violation", "deny"},
	}
	jdMark(c, 0, "example.test", "/~staff/")
	for _, tc := range cases {
		if r := c.raw(0, "GET", tc.target, jdCrawler); r.status != http.StatusForbidden {
			t.Errorf("GET %s by a crawler = %d, want 403", tc.target, r.status)
		}
	}
	recs := jdMark(c, 0, "example.test", "/~staff/")
	if len(recs) != len(cases) {
		t.Fatalf("%d records, want %d:\n%s", len(recs), len(cases), e2eDump(recs))
	}
	for i, tc := range cases {
		jdCheck(t, "GET "+tc.target, recs[i], e2eRecord{
			"uri": tc.target, "verdict": "deny", "compliance": tc.compliance,
			"rfc9309_verdict": "deny", "google_verdict": tc.google,
		})
	}
}

// jdLongUserAgent returns a browser's User-Agent header padded with more
// browser words to exactly n octets.
func jdLongUserAgent(n int) string {
	ua := e2eBrowser
	for len(ua) < n {
		ua += " Safari/537.36"
	}
	ua = ua[:n]
	if strings.HasSuffix(ua, " ") { // servers trim it
		ua = ua[:n-1] + "6"
	}
	return ua
}

// Defect 6: a crawler's token after 1,024 octets of padding was not read,
// and the client passed as a browser. A User-Agent longer than the
// handler reads (agent.MaxUserAgentLength) is a crawler, bound by "*"
// under the default policy, with automation "user_agent_too_long"; a
// browser's header of ordinary length, or of exactly the limit, passes.
func TestE2EJudgementUserAgentTooLong(t *testing.T) {
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText("User-agent: *\nDisallow: /private/\n")})
	c := e2eStart(t, 1, e2eProxySite, map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce", "<OPTIONS>": "body denied"})
	limit := agent.MaxUserAgentLength
	padded := jdLongUserAgent(limit + 100)
	jdMark(c, 0, "site.test", "/private/")
	for _, tc := range []struct {
		name, ua string
		status   int
	}{
		{"browser words, then GPTBot past the limit", padded + " GPTBot/1.0", http.StatusForbidden},
		{"browser words past the limit", padded, http.StatusForbidden},
		{"browser words, one octet past the limit", jdLongUserAgent(limit + 1), http.StatusForbidden},
		{"filler past the limit", strings.Repeat("a", limit+100), http.StatusForbidden},
		{"browser words up to the limit", jdLongUserAgent(limit), http.StatusOK},
		{"a browser", e2eBrowser, http.StatusOK},
	} {
		if r := c.get(0, "site.test", "/private/x", tc.ua); r.status != tc.status {
			t.Errorf("%s (%d octets): GET /private/x = %d, want %d", tc.name, len(tc.ua), r.status, tc.status)
		}
		recs := jdMark(c, 0, "site.test", "/private/")
		switch {
		case tc.status == http.StatusOK && len(recs) != 0:
			t.Errorf("%s: records %s, want none", tc.name, e2eDump(recs))
		case tc.status == http.StatusOK:
		case len(recs) != 1:
			t.Errorf("%s: %d records, want 1:\n%s", tc.name, len(recs), e2eDump(recs))
		default:
			jdCheck(t, tc.name, recs[0], e2eRecord{
				"verdict": "deny", "automation": "user_agent_too_long", "bot_class": "crawler",
			})
		}
	}
}
