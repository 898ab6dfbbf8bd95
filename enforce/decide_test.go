package enforce

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// Headers for the decision tests, besides the real ones in groups_test.go.
const (
	uaCurl = "curl/8.5.0"
	uaBoth = "Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.0)"
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

func inlineSnapshot(t *testing.T, body string) *Snapshot {
	t.Helper()
	src, err := NewInlineSource(InlineConfig{Body: body})
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
	automated := NewDecider(Policy{Wildcard: WildcardAutomated}, nil)
	all := NewDecider(Policy{Wildcard: WildcardAll}, nil)
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
		{"named group denies", bots, uaGPTBot, "/private/x", false, ReasonNamedGroup, "GPTBot", 2, AsSent},
		{"named group allows", bots, uaGPTBot, "/public", true, ReasonNamedGroup, "GPTBot", 0, AsSent},
		{"named group replaces *", bots, uaGooglebot, "/private/x", true, ReasonNamedGroup, "Googlebot", 7, AsSent},
		{"bypass spelling", bots, uaGPTBot, "/pub/..%2Fprivate/x", false, ReasonNamedGroup, "GPTBot", 2, Decoded},
		{"both groups: GPTBot's rule", bots, uaBoth, "/a", false, ReasonNamedGroup, "GPTBot", 3, AsSent},
		{"both groups: Googlebot's rule", bots, uaBoth, "/b", false, ReasonNamedGroup, "Googlebot", 6, AsSent},
		{"both groups: allowed by both", bots, uaBoth, "/c", true, ReasonNamedGroup, "Googlebot", 0, AsSent},
		{"a browser is not bound by *", bots, uaChrome, "/private/x", true, ReasonNotAutomated, "", 0, AsSent},
		{"policy all binds browsers", all, uaChrome, "/private/x", false, ReasonWildcardGroup, "", 10, AsSent},
		{"curl is not a crawler", bots, uaCurl, "/private/x", true, ReasonNotAutomated, "curl", 0, AsSent},
		{"curl is bound by * as automated", automated, uaCurl, "/private/x", false, ReasonWildcardGroup, "curl", 10, AsSent},
		{"* allow carve-out", automated, uaCurl, "/private/press/a", true, ReasonWildcardGroup, "curl", 11, AsSent},
		{"no User-Agent is automated", automated, "", "/private/x", false, ReasonWildcardGroup, "", 10, AsSent},
		{"robots.txt always passes", bots, uaGPTBot, "/robots.txt", true, ReasonRobotsTxt, "", 0, AsSent},
		{"allow-listed agent", bots, "UptimeMonitor/2.0 (+https://example.net)", "/private/x", true, ReasonAllowListed, "UptimeMonitor", 0, AsSent},
		{"no path", bots, uaGPTBot, "*", true, ReasonNoPath, "", 0, AsSent},
	}
	for _, c := range cases {
		var rd Readings
		dec := c.d.Decide(snap, Request{Target: c.target, UserAgent: c.ua, Now: time.Now()}, &rd)
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

// TestDecideWithoutFile checks the decisions when robots.txt could not be
// read (RFC 9309 §2.3.1.3 and §2.3.1.4).
func TestDecideWithoutFile(t *testing.T) {
	d := NewDecider(Policy{}, nil)
	unreachable := &Snapshot{Access: AccessUnreachable, DisallowAll: true}
	unavailable := &Snapshot{Access: AccessUnavailable}
	cases := []struct {
		snap    *Snapshot
		ua      string
		allowed bool
		reason  Reason
	}{
		{unreachable, uaGPTBot, false, ReasonUnreachable},
		{unreachable, uaChrome, true, ReasonNotAutomated},
		{unreachable, "", true, ReasonNotAutomated}, // automated, but no crawler
		{unavailable, uaGPTBot, true, ReasonUnavailable},
	}
	for _, c := range cases {
		var rd Readings
		dec := d.Decide(c.snap, Request{Target: "/x", UserAgent: c.ua}, &rd)
		if dec.Allowed != c.allowed || dec.Reason != c.reason {
			t.Errorf("Decide(%v, %q) = %v, %v; want %v, %v", c.snap.Access, c.ua, dec.Allowed, dec.Reason, c.allowed, c.reason)
		}
	}
	var rd Readings
	if dec := d.Decide(unreachable, Request{Target: "/robots.txt", UserAgent: uaGPTBot}, &rd); !dec.Allowed {
		t.Errorf("Decide(unreachable, /robots.txt) denied: %+v", dec)
	}
}

// TestDecideGrace checks that a denial the previous robots.txt would have
// allowed is marked as grace while the change is under 24 hours old (RFC
// 9309 §2.4), and not after.
func TestDecideGrace(t *testing.T) {
	changed := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	old := inlineSnapshot(t, "User-agent: GPTBot\nDisallow: /old\n")
	cur := inlineSnapshot(t, "User-agent: GPTBot\nDisallow: /new\nDisallow: /old\n")
	withPrev := *cur
	withPrev.Previous, withPrev.ChangedAt = old, changed
	d := NewDecider(Policy{}, nil)
	cases := []struct {
		target string
		at     time.Duration
		grace  bool
	}{
		{"/new", time.Hour, true},
		{"/new", 25 * time.Hour, false},
		{"/old", time.Hour, false}, // denied by both versions
	}
	for _, c := range cases {
		var rd Readings
		dec := d.Decide(&withPrev, Request{Target: c.target, UserAgent: uaGPTBot, Now: changed.Add(c.at)}, &rd)
		if dec.Allowed || dec.Grace != c.grace {
			t.Errorf("Decide(%q) %v after the change: allowed %v, grace %v; want denied, grace %v", c.target, c.at, dec.Allowed, dec.Grace, c.grace)
		}
	}
}

// TestDecideHeaderCache checks that a header read from the cache decides as
// a fresh reading does, that headers too long to cache still decide, and
// that a cached decision holds no memory of the request's header.
func TestDecideHeaderCache(t *testing.T) {
	snap := inlineSnapshot(t, decideRobots)
	d := NewDecider(Policy{}, nil)
	long := uaGPTBot + " " + strings.Repeat("x", MaxCachedHeaderLength)
	for _, ua := range []string{uaGPTBot, uaChrome, uaCurl, "", long} {
		for _, target := range []string{"/private/x", "/a", "/public"} {
			var rd Readings
			fresh := NewDecider(Policy{}, nil).Decide(snap, Request{Target: target, UserAgent: ua}, &rd)
			for round := range 3 {
				// A header built anew each time, as each request brings its own.
				header := string([]byte(ua))
				got := d.Decide(snap, Request{Target: target, UserAgent: header}, &rd)
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
	d := NewDecider(Policy{}, NewClassifier(8))
	d.headers = newHeaderCache[readHeader](8, MaxCachedHeaderLength)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			var rd Readings
			for i := range 300 {
				ua := fmt.Sprintf("%s (variant %d)", uaGPTBot, (g*300+i)%40)
				if dec := d.Decide(snap, Request{Target: "/private/x", UserAgent: ua}, &rd); dec.Allowed || dec.Token != "GPTBot" {
					t.Errorf("Decide(%q) = %v %q, want denied for GPTBot", ua, dec.Allowed, dec.Token)
					return
				}
			}
		})
	}
	wg.Wait()
}
