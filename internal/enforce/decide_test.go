package enforce

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
)

// testEpoch is when the tests' clocks start, and testRobotsURL the
// robots.txt their versions are read from.
var testEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const testRobotsURL = "https://a.example/robots.txt"

// Headers for the decision tests, besides the real ones in package testua.
const (
	uaFooCrawler = "FooCrawler/1.0 (+https://foo.example/crawler)"
	uaCurl       = "curl/8.5.0"
	uaBoth       = "Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.0)"
)

const decideRobots = `User-agent: GPTBot
Disallow: /private/
Disallow: /a

User-agent: Googlebot
Disallow: /b
Allow: /private/

User-agent: *
Disallow: /private/
Allow: /private/press/
`

func inlineSnapshot(t *testing.T, body string) *robotstxt.Snapshot {
	t.Helper()
	src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return src.Snapshot(t.Context(), "example.com")
}

// TestDecide checks each reason a decision can have, with the facts each
// decision must carry.
func TestDecide(t *testing.T) {
	snap := inlineSnapshot(t, decideRobots)
	bots := NewDecider(Policy{AllowAgents: []string{"UptimeMonitor"}}, nil)
	automated := NewDecider(Policy{Wildcard: agent.WildcardAutomated}, nil)
	all := NewDecider(Policy{Wildcard: agent.WildcardAll}, nil)
	cases := []struct {
		name    string
		d       *Decider
		ua      string
		target  string
		allowed bool
		reason  Reason
		token   string
		rule    int // line of the deciding rule, 0 for none
		reading Reading
	}{
		{"named group denies", bots, testua.GPTBot, "/private/x", false, ReasonNamedGroup, "GPTBot", 2, AsSent},
		{"named group allows", bots, testua.GPTBot, "/public", true, ReasonNamedGroup, "GPTBot", 0, AsSent},
		{"named group replaces *", bots, testua.Googlebot, "/private/x", true, ReasonNamedGroup, "Googlebot", 7, AsSent},
		{"bypass spelling", bots, testua.GPTBot, "/pub/..%2Fprivate/x", false, ReasonNamedGroup, "GPTBot", 2, Decoded},
		// A client naming two groups may obey either (RFC 9309 §2.2.1):
		// allowed when one of them allows.
		{"both groups: only GPTBot's disallows", bots, uaBoth, "/a", true, ReasonNamedGroup, "Googlebot", 0, AsSent},
		{"both groups: only Googlebot's disallows", bots, uaBoth, "/b", true, ReasonNamedGroup, "GPTBot", 0, AsSent},
		{"both groups: allowed by both", bots, uaBoth, "/c", true, ReasonNamedGroup, "Googlebot", 0, AsSent},
		{"both groups: one allows what the other disallows", bots, uaBoth, "/private/x", true, ReasonNamedGroup, "Googlebot", 7, AsSent},
		{"a browser is not bound by *", bots, testua.Chrome, "/private/x", true, ReasonNotAutomated, "", 0, AsSent},
		{"policy all binds browsers", all, testua.Chrome, "/private/x", false, ReasonWildcardGroup, "", 10, AsSent},
		{"curl is not a crawler", bots, uaCurl, "/private/x", true, ReasonNotAutomated, "curl", 0, AsSent},
		{"curl is bound by * as automated", automated, uaCurl, "/private/x", false, ReasonWildcardGroup, "curl", 10, AsSent},
		{"* allow carve-out", automated, uaCurl, "/private/press/a", true, ReasonWildcardGroup, "curl", 11, AsSent},
		{"no User-Agent is automated", automated, "", "/private/x", false, ReasonWildcardGroup, "", 10, AsSent},
		{"robots.txt always passes", bots, testua.GPTBot, "/robots.txt", true, ReasonRobotsTxt, "", 0, AsSent},
		{"allow-listed agent", bots, "UptimeMonitor/2.0 (+https://example.net)", "/private/x", true, ReasonAllowListed, "UptimeMonitor", 0, AsSent},
		{"no path", bots, testua.GPTBot, "*", true, ReasonNoPath, "", 0, AsSent},
		// A "#" is part of the path, as Go's server reads it: never a
		// fragment that hides the rest, never /robots.txt with a tail.
		{"raw # then dot segments", bots, uaFooCrawler, "/x%23/../private/secret.html", false, ReasonWildcardGroup, "FooCrawler", 10, Cleaned},
		{"raw # kept as sent", bots, uaFooCrawler, "/x#/../private/secret.html", false, ReasonWildcardGroup, "FooCrawler", 10, Cleaned},
		{"robots.txt with a # tail", bots, testua.GPTBot, "/robots.txt#/../private/x", false, ReasonNamedGroup, "GPTBot", 2, Cleaned},
		{"robots.txt with an escaped # tail", bots, testua.GPTBot, "/robots.txt%23/../private/x", false, ReasonNamedGroup, "GPTBot", 2, Cleaned},
	}
	for _, c := range cases {
		var rd Readings
		dec := c.d.Decide(snap, Query{Target: c.target, UserAgent: c.ua}, &rd)
		if dec.Allowed != c.allowed || dec.Reason != c.reason || dec.Verdict.Rule.Line != c.rule ||
			dec.Reading != c.reading || c.token != "" && dec.Token != c.token {
			t.Errorf("%s: Decide(%q, %q) = allowed %v, %v, token %q, rule line %d, reading %v; want %v, %v, %q, %d, %v",
				c.name, c.ua, c.target, dec.Allowed, dec.Reason, dec.Token, dec.Verdict.Rule.Line, dec.Reading,
				c.allowed, c.reason, c.token, c.rule, c.reading)
		}
		if dec.Snapshot != snap {
			t.Errorf("%s: decision names snapshot %p, want %p", c.name, dec.Snapshot, snap)
		}
	}
}

// A request that every group naming the client disallows is denied, and
// the decision names the first group's rule.
func TestDecideTwoGroupsBothDeny(t *testing.T) {
	snap := inlineSnapshot(t, "User-agent: ExampleBot\nDisallow: /drafts/\n\nUser-agent: Scrapy\nDisallow: /\n")
	d := NewDecider(Policy{}, nil)
	ua := "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.net) Scrapy/2.8.0"
	for _, c := range []struct {
		target  string
		allowed bool
		token   string
		line    int
	}{
		{"/drafts/x", false, "ExampleBot", 2},
		{"/page", true, "ExampleBot", 0},
	} {
		var rd Readings
		dec := d.Decide(snap, Query{Target: c.target, UserAgent: ua}, &rd)
		if dec.Allowed != c.allowed || dec.Token != c.token || dec.Verdict.Rule.Line != c.line {
			t.Errorf("Decide(%s) = %v by %q line %d; want %v by %q line %d", c.target, dec.Allowed, dec.Token, dec.Verdict.Rule.Line, c.allowed, c.token, c.line)
		}
	}
}

// A client whose claimed token was found forged is judged as if its
// header did not name it: by the "*" group, as the crawler it still says
// it is.
func TestDecideForged(t *testing.T) {
	snap := inlineSnapshot(t, decideRobots)
	d := NewDecider(Policy{}, nil)
	for _, c := range []struct {
		forged  string
		allowed bool
		reason  Reason
		token   string
	}{
		{"", true, ReasonNamedGroup, "Googlebot"},              // Googlebot's group allows /private/
		{"Googlebot", false, ReasonWildcardGroup, "Googlebot"}, // the "*" group does not
		{"googlebot", false, ReasonWildcardGroup, "Googlebot"},
		{"GPTBot", true, ReasonNamedGroup, "Googlebot"}, // a token the header does not name changes nothing
	} {
		var rd Readings
		dec := d.Decide(snap, Query{Target: "/private/x", UserAgent: testua.Googlebot, Forged: c.forged}, &rd)
		if dec.Allowed != c.allowed || dec.Reason != c.reason || dec.Token != c.token {
			t.Errorf("Decide(forged %q) = %v, %v, %q; want %v, %v, %q", c.forged, dec.Allowed, dec.Reason, dec.Token, c.allowed, c.reason, c.token)
		}
	}
}

// TestDecideWithoutFile checks the decisions when robots.txt could not be
// read (RFC 9309 §2.3.1.3 and §2.3.1.4).
func TestDecideWithoutFile(t *testing.T) {
	d := NewDecider(Policy{}, nil)
	unreachable := &robotstxt.Snapshot{Access: robotstxt.AccessUnreachable, DisallowAll: true}
	unavailable := &robotstxt.Snapshot{Access: robotstxt.AccessUnavailable}
	cases := []struct {
		snap    *robotstxt.Snapshot
		ua      string
		allowed bool
		reason  Reason
	}{
		{unreachable, testua.GPTBot, false, ReasonUnreachable},
		{unreachable, testua.Chrome, true, ReasonNotAutomated},
		{unreachable, "", true, ReasonNotAutomated}, // automated, but no crawler
		{unavailable, testua.GPTBot, true, ReasonUnavailable},
	}
	for _, c := range cases {
		var rd Readings
		dec := d.Decide(c.snap, Query{Target: "/x", UserAgent: c.ua}, &rd)
		if dec.Allowed != c.allowed || dec.Reason != c.reason {
			t.Errorf("Decide(%v, %q) = %v, %v; want %v, %v", c.snap.Access, c.ua, dec.Allowed, dec.Reason, c.allowed, c.reason)
		}
	}
	var rd Readings
	if dec := d.Decide(unreachable, Query{Target: "/robots.txt", UserAgent: testua.GPTBot}, &rd); !dec.Allowed {
		t.Errorf("Decide(unreachable, /robots.txt) denied: %+v", dec)
	}
}

// A target the server could not read as a path is disallowed for every
// client the rules bind, unless its group disallows nothing; a store's
// refusal is complete disallow for them, whatever the unreachable policy.
func TestDecideFailsClosed(t *testing.T) {
	snap := inlineSnapshot(t, decideRobots+"\nUser-agent: FriendlyBot\nAllow: /\n")
	d := NewDecider(Policy{}, nil)
	cases := []struct {
		name    string
		snap    *robotstxt.Snapshot
		req     Query
		allowed bool
		reason  Reason
	}{
		{"unreadable, named", snap, Query{Unreadable: true, UserAgent: testua.GPTBot}, false, ReasonUnreadableTarget},
		{"unreadable, *", snap, Query{Unreadable: true, UserAgent: uaFooCrawler}, false, ReasonUnreadableTarget},
		{"unreadable, browser", snap, Query{Unreadable: true, UserAgent: testua.Chrome}, true, ReasonNotAutomated},
		{"unreadable, a group that disallows nothing", snap, Query{Unreadable: true, UserAgent: "FriendlyBot/1.0"}, true, ReasonNamedGroup},
		{"unreadable, no rules", &robotstxt.Snapshot{Access: robotstxt.AccessUnavailable}, Query{Unreadable: true, UserAgent: testua.GPTBot}, true, ReasonUnavailable},
		{"host budget", &robotstxt.Snapshot{Access: robotstxt.AccessUnreachable, DisallowAll: true, Refusal: robotstxt.RefusalHostBudget},
			Query{Target: "/x", UserAgent: testua.GPTBot}, false, ReasonHostBudget},
		{"invalid host", &robotstxt.Snapshot{Access: robotstxt.AccessUnreachable, DisallowAll: true, Refusal: robotstxt.RefusalInvalidHost},
			Query{Target: "/x", UserAgent: uaFooCrawler}, false, ReasonInvalidHost},
		{"refused, browser", &robotstxt.Snapshot{Access: robotstxt.AccessUnreachable, DisallowAll: true, Refusal: robotstxt.RefusalHostBudget},
			Query{Target: "/x", UserAgent: testua.Chrome}, true, ReasonNotAutomated},
	}
	for _, c := range cases {
		var rd Readings
		dec := d.Decide(c.snap, c.req, &rd)
		if dec.Allowed != c.allowed || dec.Reason != c.reason {
			t.Errorf("%s: Decide() = %v, %v; want %v, %v", c.name, dec.Allowed, dec.Reason, c.allowed, c.reason)
		}
	}
}

// assessed returns the evidence of dec, made on q, for a crawler served
// served.
func assessed(d *Decider, dec *Decision, q *Query, served []ServedVersion, now time.Time) Evidence {
	ev := Evidence{Served: served}
	d.assess(&ev, new(evidenceRooms), dec, q, nil, now)
	return ev
}

// TestAssess checks the compliance of decisions: a violation only when
// every version the crawler was served, or when it was served none every
// version in force within 24 hours, disallows the request as sent (RFC
// 9309 §2.4) by both conforming readings; grace when one of those
// versions allows it; protective for denials a conforming reading of the
// request as sent does not make.
func TestAssess(t *testing.T) {
	t0 := testEpoch
	v1 := robotstxt.NewVersion(nil, testRobotsURL, []byte("User-agent: GPTBot\nDisallow: /old\n"), t0)
	v2 := robotstxt.NewVersion(v1, testRobotsURL, []byte("User-agent: GPTBot\nDisallow: /old\nDisallow: /v2\n"), t0.Add(time.Minute))
	v3 := robotstxt.NewVersion(v2, testRobotsURL, []byte("User-agent: GPTBot\nDisallow: /old\nDisallow: /v2\nDisallow: /v3\n"), t0.Add(2*time.Minute))
	d := NewDecider(Policy{}, nil)
	served := func(vs ...*robotstxt.Snapshot) []ServedVersion {
		var out []ServedVersion
		for _, v := range vs {
			out = append(out, ServedVersion{Hash: v.VersionName(), At: t0})
		}
		return out
	}
	cases := []struct {
		name     string
		target   string
		at       time.Duration
		served   []ServedVersion
		want     Compliance
		versions int
	}{
		{"allowed", "/public", time.Hour, nil, ComplianceAllowed, 0},
		{"denied by every version in force, none served", "/old", time.Hour, nil, ComplianceViolation, 3},
		{"allowed by an earlier version in force, none served", "/v3", time.Hour, nil, ComplianceGrace, 3},
		{"served only v1, which allows it", "/v3", time.Hour, served(v1), ComplianceGrace, 1},
		{"served v1 then v2 and v3 within minutes: v1 allows /v2", "/v2", time.Hour, served(v3, v2, v1), ComplianceGrace, 3},
		{"served only the newest: no grace for what it disallows", "/v3", time.Hour, served(v3), ComplianceViolation, 1},
		{"served only the newest, an old rule", "/old", time.Hour, served(v3), ComplianceViolation, 1},
		// A version the site never answered the store with is not the
		// site's: a 4xx the client provoked, a variant made for it.
		{"served a 404 the site never answered the store with", "/old", time.Hour, []ServedVersion{{Hash: robotstxt.VersionUnavailable, At: t0}}, ComplianceViolation, 3},
		{"served a variant never fetched", "/old", time.Hour, []ServedVersion{{Hash: "0123456789abcdef", At: t0}}, ComplianceViolation, 3},
		{"a day after the changes, only the newest is in force", "/v3", 25 * time.Hour, nil, ComplianceViolation, 1},
		// Google's reading compares the path as sent: "/%6Fld" is not
		// under "/old" there, so the denial says nothing of the crawler.
		{"an encoded unreserved octet", "/%6Fld", time.Hour, nil, ComplianceProtective, 3},
		{"a cleaned reading only", "/x/../old", time.Hour, nil, ComplianceProtective, 0},
		{"a decoded reading only", "/x%2F..%2Fold", time.Hour, nil, ComplianceProtective, 0},
	}
	for _, c := range cases {
		var rd Readings
		req := Query{Target: c.target, UserAgent: testua.GPTBot}
		dec := d.Decide(v3, req, &rd)
		ev := assessed(d, &dec, &req, c.served, t0.Add(2*time.Minute+c.at))
		if ev.Compliance != c.want || len(ev.Versions) != c.versions {
			t.Errorf("%s: Assess(%s) = %v judged against %v; want %v against %d versions", c.name, c.target, ev.Compliance, ev.Versions, c.want, c.versions)
		}
	}
	// A 404 the store saw too: no rules applied, everything allowed.
	gone := robotstxt.NewUnavailable(v3, testRobotsURL, 404, t0.Add(3*time.Minute))
	back := robotstxt.NewVersion(gone, testRobotsURL, []byte("User-agent: GPTBot\nDisallow: /old\n"), t0.Add(4*time.Minute))
	var rd Readings
	q := Query{Target: "/old", UserAgent: testua.GPTBot}
	dec := d.Decide(back, q, &rd)
	if ev := assessed(d, &dec, &q, []ServedVersion{{Hash: robotstxt.VersionUnavailable, At: t0.Add(3 * time.Minute)}}, t0.Add(time.Hour)); ev.Compliance != ComplianceGrace {
		t.Errorf("served the 404 the store saw: %v against %v, want grace", ev.Compliance, ev.Versions)
	}
	// Fail-closed denials are protective.
	for _, snap := range []*robotstxt.Snapshot{
		{Access: robotstxt.AccessUnreachable, DisallowAll: true},
		{Access: robotstxt.AccessUnreachable, DisallowAll: true, Refusal: robotstxt.RefusalHostBudget},
	} {
		var rd Readings
		req := Query{Target: "/x", UserAgent: testua.GPTBot}
		dec := d.Decide(snap, req, &rd)
		if ev := assessed(d, &dec, &req, nil, t0); dec.Allowed || ev.Compliance != ComplianceProtective {
			t.Errorf("%v: allowed %v, %v; want a protective denial", dec.Reason, dec.Allowed, ev.Compliance)
		}
	}
}

// TestDecideHeaderCache checks that a header read from the cache decides as
// a fresh reading does, that headers too long to cache still decide, and
// that a cached decision holds no memory of the request's header.
func TestDecideHeaderCache(t *testing.T) {
	snap := inlineSnapshot(t, decideRobots)
	d := NewDecider(Policy{}, nil)
	long := testua.GPTBot + " " + strings.Repeat("x", MaxCachedHeaderLength)
	for _, ua := range []string{testua.GPTBot, testua.Chrome, uaCurl, "", long} {
		for _, target := range []string{"/private/x", "/a", "/public"} {
			var rd Readings
			fresh := NewDecider(Policy{}, nil).Decide(snap, Query{Target: target, UserAgent: ua}, &rd)
			for round := range 3 {
				// A header built anew each time, as each request brings its own.
				header := string([]byte(ua))
				got := d.Decide(snap, Query{Target: target, UserAgent: header}, &rd)
				if got.Allowed != fresh.Allowed || got.Reason != fresh.Reason || got.Token != fresh.Token ||
					got.Classification.Automation != fresh.Classification.Automation {
					t.Errorf("round %d: Decide(%.40q, %q) = %v %v %q, fresh decider says %v %v %q",
						round, ua, target, got.Allowed, got.Reason, got.Token, fresh.Allowed, fresh.Reason, fresh.Token)
				}
				if round > 0 && len(ua) <= MaxCachedHeaderLength && got.Token != "" && within(got.Token, header) {
					t.Errorf("Decide(%.40q): cached decision's token points into the request's header", ua)
				}
			}
		}
	}
}

// within reports whether sub's octets lie inside s's memory.
func within(sub, s string) bool {
	p, b := uintptr(unsafe.Pointer(unsafe.StringData(sub))), uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return p >= b && p < b+uintptr(len(s))
}

// TestDecideConcurrent runs decisions from many goroutines on one Decider,
// with more distinct headers than its cache holds, for the race detector.
func TestDecideConcurrent(t *testing.T) {
	snap := inlineSnapshot(t, decideRobots)
	d := NewDecider(Policy{}, agent.NewClassifier(8))
	d.headers = agent.NewHeaderCache[readHeader](8, MaxCachedHeaderLength)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			var rd Readings
			for i := range 300 {
				ua := fmt.Sprintf("%s (variant %d)", testua.GPTBot, (g*300+i)%40)
				if dec := d.Decide(snap, Query{Target: "/private/x", UserAgent: ua}, &rd); dec.Allowed || dec.Token != "GPTBot" {
					t.Errorf("Decide(%q) = %v %q, want denied for GPTBot", ua, dec.Allowed, dec.Token)
					return
				}
			}
		})
	}
	wg.Wait()
}
