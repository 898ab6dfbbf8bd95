package enforce

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// judgeRobots is the robots.txt the judgement tests are judged by: a
// named group with an Allow carve-out, groups for a signature agent and
// for one of the tokens a list proves, and a "*" group.
const judgeRobots = `User-agent: GPTBot
Disallow: /private/
Allow: /private/open/

User-agent: *
Disallow: /admin/

User-agent: ExampleSigner
Disallow: /signer/

User-agent: Google-CloudVertexBot
Disallow: /
`

// Client addresses, each with what fakeIdentity answers for it.
const (
	ipVerified    = "192.0.2.1"    // proves GPTBot
	ipForged      = "198.51.100.1" // fails to prove GPTBot
	ipUnconfirmed = "198.51.100.2" // no answer will come in time
	ipPending     = "198.51.100.3" // an answer is on its way
	ipListed      = "203.0.113.5"  // in GPTBot's published range list
	ipEscalated   = "203.0.113.9"  // a crawler escalated before the request
	ipGoogle      = "66.249.66.1"  // in a list that proves Googlebot and Google-CloudVertexBot
)

// fakeIdentity answers claims of GPTBot, the one token it has a method
// for, by the client's address, as a verifier with GPTBot's range list
// would.
type fakeIdentity struct{}

func (fakeIdentity) Verify(token string, addr netip.Addr, _ *http.Request) verify.Result {
	if token == "ExampleSigner" {
		return verify.Result{Outcome: verify.Forged, Method: verify.WebBotAuth} // never signed here
	}
	if token != "GPTBot" && token != "Google-CloudVertexBot" && token != "Googlebot" {
		return verify.Result{Outcome: verify.Unverified}
	}
	switch addr.String() {
	case ipVerified, ipListed:
		if token == "GPTBot" {
			return verify.Result{Outcome: verify.Verified, Method: verify.IPRanges}
		}
	case ipGoogle:
		if token != "GPTBot" {
			return verify.Result{Outcome: verify.Verified, Method: verify.IPRanges}
		}
	case ipUnconfirmed:
		return verify.Result{Outcome: verify.Unconfirmed, Method: verify.ReverseDNS}
	case ipPending:
		return verify.Result{Outcome: verify.Pending, Method: verify.ReverseDNS}
	}
	return verify.Result{Outcome: verify.Forged, Method: verify.IPRanges}
}

func (fakeIdentity) HasMethod(token string) bool {
	switch token {
	case "GPTBot", "ExampleSigner", "Googlebot", "Google-CloudVertexBot":
		return true
	}
	return false
}

// ProvenTokens answers by the lists, and proves GPTBot at ipVerified, as
// its reverse DNS would.
func (f fakeIdentity) ProvenTokens(addr netip.Addr, _ *http.Request) []string {
	if addr.String() == ipVerified {
		return []string{"GPTBot"}
	}
	return f.ListedTokens(addr)
}

// ListedTokens answers as lists that prove several tokens do (Google's
// prove Googlebot and Google-CloudVertexBot alike).
func (fakeIdentity) ListedTokens(addr netip.Addr) []string {
	switch addr.String() {
	case ipListed:
		return []string{"GPTBot"}
	case ipGoogle:
		return []string{"Googlebot", "Google-CloudVertexBot"}
	}
	return nil
}

// judged is what a test expects of a judgement; record is nil when no
// record is due.
type judged struct {
	allowed, deny bool
	reason        Reason
	token         string
	reading       Reading
	identity      verify.Outcome
	unproven      string
	escalated     bool
	record        *judgedRecord
}

// judgedRecord is what a test expects of a judgement's record.
type judgedRecord struct {
	verdict, reason, compliance, botClass, identity, escalation string
	ruleLine                                                    int
}

// newTestJudge returns a Judge of judgeRobots in enforce mode, with
// fakeIdentity, a Served table and a Violators table in which the client
// at ipEscalated is escalated as ExampleBot, changed by opts.
func newTestJudge(t *testing.T, opts ...func(*JudgeConfig)) *Judge {
	t.Helper()
	src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{Body: judgeRobots})
	if err != nil {
		t.Fatal(err)
	}
	cfg := JudgeConfig{Source: src, FixedKey: "inline", Identity: fakeIdentity{}, Served: NewServed(0),
		Enforce: true, Usage: true, Violators: testViolators(), Escalation: EscalateEnforce}
	for _, o := range opts {
		o(&cfg)
	}
	return NewJudge(cfg)
}

const testSite = "https://example.com"

// testViolators returns a Violators table in which the client at
// ipEscalated is escalated as ExampleBot since an hour before testEpoch.
func testViolators() *Violators {
	v := NewViolators(0)
	v.Begin(testSite, "ExampleBot", netip.MustParseAddr(ipEscalated), false, testEpoch.Add(-time.Hour), DefaultEscalation, Escalation{Site: testSite, URI: "/admin/x"})
	return v
}

// testRequest returns a request for target by a client at ip sending ua
// and the header fields hdr (name, value pairs), as Go's server would
// parse it.
func testRequest(t *testing.T, ua, target, ip string, hdr ...string) *Request {
	t.Helper()
	u, err := url.ParseRequestURI(target)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Add(hdr[i], hdr[i+1])
	}
	return &Request{Method: http.MethodGet, URL: u, URI: target, Host: "example.com", UserAgent: ua,
		ClientIP: ip, RemoteIP: ip, Header: h, Site: testSite, Now: testEpoch}
}

// TestJudge judges requests through the whole judgement, with each
// outcome of a claim under each policy, named and "*" groups, rewrite
// headers, undeclared crawlers, escalation and both modes, and checks
// the judgement and its record.
func TestJudge(t *testing.T) {
	const exampleBot = "ExampleBot/1.0 (+https://example.net/bot)"
	logMode := func(c *JudgeConfig) { c.Enforce = false }
	forgedDeny := func(c *JudgeConfig) { c.IdentityPolicy.Forged = ForgedDeny }
	forgedIgnore := func(c *JudgeConfig) { c.IdentityPolicy.Forged = ForgedIgnore }
	pendingWildcard := func(c *JudgeConfig) { c.IdentityPolicy.PendingWildcard = true }
	undeclared := func(c *JudgeConfig) { c.Undeclared = true }
	block := func(c *JudgeConfig) { c.Escalation = EscalateBlock }
	noEscalation := func(c *JudgeConfig) { c.Escalation = EscalateOff }
	logAllowed := func(c *JudgeConfig) { c.LogAllowed = true }
	gptbotEscalated := func(c *JudgeConfig) {
		c.Violators.Begin(testSite, "GPTBot", netip.Addr{}, true, testEpoch.Add(-time.Hour), DefaultEscalation, Escalation{Site: testSite, URI: "/private/x"})
	}

	denyNamed := &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "named", ruleLine: 2}
	tests := []struct {
		name   string
		opts   []func(*JudgeConfig)
		req    func(t *testing.T) *Request
		want   judged
		record *judgedRecord
	}{
		{name: "verified crawler, disallowed", opts: []func(*JudgeConfig){noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipVerified) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "named", identity: "verified", ruleLine: 2}}},
		{name: "verified crawler, the Allow carve-out",
			req:  func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/open/a", ipVerified) },
			want: judged{allowed: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified}},
		{name: "verified crawler, allowed and recorded under log_allowed", opts: []func(*JudgeConfig){logAllowed},
			req: func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/blog", ipVerified) },
			want: judged{allowed: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Allow, reason: "named_group", compliance: record.Allowed, botClass: "named", identity: "verified"}}},
		{name: "log mode records and passes", opts: []func(*JudgeConfig){logMode, noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipVerified) },
			want: judged{reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "named", identity: "verified", ruleLine: 2}}},
		{name: "forged claim, wildcard policy: judged by *, which allows",
			req:  func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipForged) },
			want: judged{allowed: true, reason: ReasonWildcardGroup, token: "GPTBot", identity: verify.Forged, unproven: "GPTBot"}},
		{name: "forged claim, wildcard policy: judged by *, which disallows", opts: []func(*JudgeConfig){noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/admin/a", ipForged) },
			want: judged{deny: true, reason: ReasonWildcardGroup, token: "GPTBot", identity: verify.Forged, unproven: "GPTBot",
				record: &judgedRecord{verdict: record.Deny, reason: "wildcard_group", compliance: record.Violation, botClass: "crawler", identity: "forged", ruleLine: 6}}},
		{name: "forged claim, deny policy", opts: []func(*JudgeConfig){forgedDeny, noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/blog", ipForged) },
			want: judged{deny: true, reason: ReasonForged, token: "GPTBot", identity: verify.Forged,
				record: &judgedRecord{verdict: record.Deny, reason: "forged", compliance: record.Protective, botClass: "named", identity: "forged"}}},
		{name: "forged claim, ignore policy: judged as claimed", opts: []func(*JudgeConfig){forgedIgnore, noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipForged) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Forged,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "named", identity: "forged", ruleLine: 2}}},
		{name: "unconfirmed claim: judged without its token",
			req:  func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipUnconfirmed) },
			want: judged{allowed: true, reason: ReasonWildcardGroup, token: "GPTBot", identity: verify.Unconfirmed, unproven: "GPTBot"}},
		{name: "pending claim: judged as claimed", opts: []func(*JudgeConfig){noEscalation},
			req:  func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipPending) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Pending, record: withIdentity(denyNamed, "pending")}},
		{name: "pending claim, pending_wildcard policy", opts: []func(*JudgeConfig){pendingWildcard},
			req:  func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipPending) },
			want: judged{allowed: true, reason: ReasonWildcardGroup, token: "GPTBot", identity: verify.Pending, unproven: "GPTBot"}},
		{name: "a token no method can prove, held to *", opts: []func(*JudgeConfig){noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, exampleBot, "/admin/a", ipForged) },
			want: judged{deny: true, reason: ReasonWildcardGroup, token: "ExampleBot", identity: verify.Unverified,
				record: &judgedRecord{verdict: record.Deny, reason: "wildcard_group", compliance: record.Violation, botClass: "crawler", identity: "unverified", ruleLine: 6}}},
		{name: "a browser is not bound by *",
			req:  func(t *testing.T) *Request { return testRequest(t, testua.Chrome, "/admin/a", ipForged) },
			want: judged{allowed: true, reason: ReasonNotAutomated, token: "Mozilla"}},
		{name: "a rewrite header leads to a disallowed path", opts: []func(*JudgeConfig){noEscalation},
			req: func(t *testing.T) *Request {
				return testRequest(t, testua.GPTBot, "/blog", ipVerified, "X-Original-URL", "/private/a")
			},
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", reading: RewriteHeader, identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Protective, botClass: "named", identity: "verified", ruleLine: 2}}},
		{name: "a rewrite header on /robots.txt", opts: []func(*JudgeConfig){noEscalation},
			req: func(t *testing.T) *Request {
				return testRequest(t, testua.GPTBot, "/robots.txt", ipVerified, "X-Rewrite-URL", "/private/a")
			},
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", reading: RewriteHeader, identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Protective, botClass: "named", identity: "verified", ruleLine: 2}}},
		{name: "robots.txt always passes",
			req:  func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/robots.txt", ipForged) },
			want: judged{allowed: true, reason: ReasonRobotsTxt}},
		{name: "an unreadable target fails closed", opts: []func(*JudgeConfig){noEscalation},
			req: func(t *testing.T) *Request {
				r := testRequest(t, testua.GPTBot, "/x", ipVerified)
				r.URL = &url.URL{Scheme: "x", Opaque: "private"}
				return r
			},
			want: judged{deny: true, reason: ReasonUnreadableTarget, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "unreadable_target", compliance: record.Protective, botClass: "named", identity: "verified"}}},
		{name: "undeclared crawler bound by its range list", opts: []func(*JudgeConfig){undeclared, noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, testua.Chrome, "/private/a", ipListed) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "undeclared", identity: "verified", ruleLine: 2}}},
		{name: "undeclared bind: a crawler that names a token its list proves is that crawler", opts: []func(*JudgeConfig){undeclared, noEscalation},
			req:  func(t *testing.T) *Request { return testRequest(t, testua.Googlebot, "/private/a", ipGoogle) },
			want: judged{allowed: true, reason: ReasonWildcardGroup, token: "Googlebot", identity: verify.Verified}},
		{name: "undeclared bind: a browser from that list is bound as the list's crawlers", opts: []func(*JudgeConfig){undeclared, noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, testua.Chrome, "/private/a", ipGoogle) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "Google-CloudVertexBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "undeclared", identity: "verified", ruleLine: 12}}},
		{name: "a forged claim of a token the site names, shaped like no crawler, is a crawler", opts: []func(*JudgeConfig){noEscalation},
			req: func(t *testing.T) *Request { return testRequest(t, "ExampleSigner/1.0", "/admin/a", ipForged) },
			want: judged{deny: true, reason: ReasonWildcardGroup, token: "ExampleSigner", identity: verify.Forged, unproven: "ExampleSigner",
				record: &judgedRecord{verdict: record.Deny, reason: "wildcard_group", compliance: record.Violation, botClass: "crawler", identity: "forged", ruleLine: 6}}},
		{name: "undeclared off: a browser from a listed address is a browser",
			req:  func(t *testing.T) *Request { return testRequest(t, testua.Chrome, "/private/a", ipListed) },
			want: judged{allowed: true, reason: ReasonNotAutomated, token: "Mozilla"}},
		{name: "a violation begins an escalation",
			req: func(t *testing.T) *Request { return testRequest(t, testua.GPTBot, "/private/a", ipVerified) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified, escalated: true,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "named", identity: "verified", escalation: "enforce", ruleLine: 2}}},
		{name: "escalated, enforce: what the group disallows is denied in log mode", opts: []func(*JudgeConfig){logMode},
			req: func(t *testing.T) *Request { return testRequest(t, exampleBot, "/admin/b", ipEscalated) },
			want: judged{deny: true, reason: ReasonWildcardGroup, token: "ExampleBot", identity: verify.Unverified,
				record: &judgedRecord{verdict: record.Deny, reason: "wildcard_group", compliance: record.Violation, botClass: "crawler", identity: "unverified", escalation: "enforce", ruleLine: 6}}},
		{name: "escalated, enforce: what it allows passes",
			req:  func(t *testing.T) *Request { return testRequest(t, exampleBot, "/blog", ipEscalated) },
			want: judged{allowed: true, reason: ReasonWildcardGroup, token: "ExampleBot", identity: verify.Unverified}},
		{name: "escalated, block: everything is denied", opts: []func(*JudgeConfig){block, logMode},
			req: func(t *testing.T) *Request { return testRequest(t, exampleBot, "/blog", ipEscalated) },
			want: judged{deny: true, reason: ReasonEscalated, token: "ExampleBot", identity: verify.Unverified,
				record: &judgedRecord{verdict: record.Deny, reason: "escalated", compliance: record.Protective, botClass: "crawler", identity: "unverified", escalation: "block"}}},
		{name: "a proven crawler, escalated, renamed: still the crawler its address proves", opts: []func(*JudgeConfig){gptbotEscalated, logMode},
			req: func(t *testing.T) *Request { return testRequest(t, "ExampleBot/1.0", "/private/a", ipVerified) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "undeclared", identity: "verified", escalation: "enforce", ruleLine: 2}}},
		{name: "a proven crawler, escalated, as a forged user-triggered fetcher", opts: []func(*JudgeConfig){gptbotEscalated, logMode},
			req: func(t *testing.T) *Request { return testRequest(t, "ChatGPT-User/1.0", "/private/a", ipVerified) },
			want: judged{deny: true, reason: ReasonNamedGroup, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "named_group", compliance: record.Violation, botClass: "undeclared", identity: "verified", escalation: "enforce", ruleLine: 2}}},
		{name: "a proven crawler, escalated, as a browser: blocked", opts: []func(*JudgeConfig){gptbotEscalated, block, logMode},
			req: func(t *testing.T) *Request { return testRequest(t, testua.Chrome, "/blog", ipVerified) },
			want: judged{deny: true, reason: ReasonEscalated, token: "GPTBot", identity: verify.Verified,
				record: &judgedRecord{verdict: record.Deny, reason: "escalated", compliance: record.Protective, botClass: "undeclared", identity: "verified", escalation: "block"}}},
		{name: "another crawler's address is not the escalated crawler's", opts: []func(*JudgeConfig){gptbotEscalated, block, logMode},
			req:  func(t *testing.T) *Request { return testRequest(t, testua.Chrome, "/blog", ipForged) },
			want: judged{allowed: true, reason: ReasonNotAutomated, token: "Mozilla"}},
		{name: "a user-triggered fetcher's violation never escalates",
			req: func(t *testing.T) *Request { return testRequest(t, "ChatGPT-User/1.0", "/admin/a", ipForged) },
			want: judged{deny: true, reason: ReasonWildcardGroup, token: "ChatGPT-User", identity: verify.Unverified,
				record: &judgedRecord{verdict: record.Deny, reason: "wildcard_group", compliance: record.Violation, botClass: "crawler", identity: "unverified", ruleLine: 6}}},
		{name: "escalated, block: robots.txt still passes", opts: []func(*JudgeConfig){block},
			req:  func(t *testing.T) *Request { return testRequest(t, exampleBot, "/robots.txt", ipEscalated) },
			want: judged{allowed: true, reason: ReasonRobotsTxt}},
	}
	for _, tt := range tests {
		j := newTestJudge(t, tt.opts...)
		jd := j.Judge(t.Context(), tt.req(t))
		got := judged{allowed: jd.Allowed, deny: jd.Deny, reason: jd.Reason, token: jd.Token, reading: jd.Reading,
			identity: jd.Identity.Outcome, unproven: jd.Unproven, escalated: jd.Escalated}
		if jd.Record != nil {
			got.record = &judgedRecord{verdict: jd.Record.Verdict, reason: jd.Record.Reason, compliance: jd.Record.Compliance,
				botClass: jd.Record.BotClass, identity: jd.Record.Identity, escalation: jd.Record.Escalation, ruleLine: jd.Record.RuleLine}
			if jd.Record.Site != testSite || jd.Record.Mode != j.Mode() || jd.Record.Agent != jd.Token {
				t.Errorf("%s: record of site %q, mode %q, agent %q; want %q, %q, %q", tt.name,
					jd.Record.Site, jd.Record.Mode, jd.Record.Agent, testSite, j.Mode(), jd.Token)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: judged\n\t%s\nwant\n\t%s", tt.name, describeJudged(got), describeJudged(tt.want))
		}
		jd.Release()
	}
}

// withIdentity returns r with its identity set to id.
func withIdentity(r *judgedRecord, id string) *judgedRecord {
	c := *r
	c.identity = id
	return &c
}

// describeJudged writes j for a failure message.
func describeJudged(j judged) string {
	r := "no record"
	if j.record != nil {
		r = fmt.Sprintf("record %+v", *j.record)
	}
	j.record = nil
	return fmt.Sprintf("%+v, %s", j, r)
}

// TestJudgeInvariants judges every combination of claim, policy, group,
// rewrite header, undeclared binding, escalation and mode, and checks
// what holds for each: a request is denied exactly when it is disallowed
// and enforced or escalated; a record is due exactly for a denial, or an
// allowed request under log_allowed, of a client the rules bind; the
// record says what the judgement says.
func TestJudgeInvariants(t *testing.T) {
	uas := []string{testua.GPTBot, "ExampleBot/1.0", testua.Chrome, ""}
	ips := []string{ipVerified, ipForged, ipUnconfirmed, ipPending, ipListed, ipEscalated}
	targets := []string{"/private/a", "/private/open/a", "/admin/a", "/blog", "/robots.txt"}
	headers := [][]string{nil, {"X-Original-URL", "/private/a"}}
	n := 0
	for mask := range 1 << 6 {
		opt := func(c *JudgeConfig) {
			c.Enforce = mask&1 != 0
			c.LogAllowed = mask&2 != 0
			c.Undeclared = mask&4 != 0
			c.IdentityPolicy.Forged = ForgedPolicy(mask >> 3 & 1) // wildcard, deny
			c.IdentityPolicy.PendingWildcard = mask&16 != 0
			c.Escalation = [...]EscalationMode{EscalateEnforce, EscalateBlock}[mask>>5&1]
		}
		j := newTestJudge(t, opt)
		var cfg JudgeConfig
		opt(&cfg)
		for _, ua := range uas {
			for _, ip := range ips {
				for _, target := range targets {
					for _, hdr := range headers {
						n++
						jd := j.Judge(t.Context(), testRequest(t, ua, target, ip, hdr...))
						name := ua + " " + ip + " " + target
						if want := !jd.Allowed && (cfg.Enforce || jd.Escalation != nil); jd.Deny != want {
							t.Fatalf("mask %b, %s: deny %v, want %v (allowed %v, escalation %v)", mask, name, jd.Deny, want, jd.Allowed, jd.Escalation != nil)
						}
						if due := jd.Bound && (!jd.Allowed || cfg.LogAllowed); (jd.Record != nil) != due {
							t.Fatalf("mask %b, %s: record %v, want %v", mask, name, jd.Record != nil, due)
						}
						if r := jd.Record; r != nil && (r.Verdict != VerdictName(jd.Allowed) || r.Reason != jd.Reason.String() ||
							r.Agent != jd.Token || r.Compliance != jd.Evidence.Compliance.String() || r.URI != target) {
							t.Fatalf("mask %b, %s: record %+v does not say what the judgement says", mask, name, *r)
						}
						if jd.RobotsTxt && hdr == nil && !jd.Allowed {
							t.Fatalf("mask %b, %s: /robots.txt denied", mask, name)
						}
						if jd.Unproven != "" && jd.Identity.Outcome == verify.Verified {
							t.Fatalf("mask %b, %s: a verified claim judged without its token", mask, name)
						}
						jd.Release()
					}
				}
			}
		}
	}
	if n != 64*len(uas)*len(ips)*len(targets)*len(headers) {
		t.Fatalf("judged %d requests", n)
	}
}

// TestJudgementPooled checks that a pooled Judgement, reused after
// another request, comes back as a fresh one judging the same request.
func TestJudgementPooled(t *testing.T) {
	reqs := []*Request{
		testRequest(t, testua.GPTBot, "/private/a", ipVerified, "X-Original-URL", "/private/b"),
		testRequest(t, testua.GPTBot, "/private/a", ipForged),
		testRequest(t, testua.Chrome, "/admin/%2e%2e/private/a?q=1", ipListed),
		testRequest(t, "ExampleBot/1.0", "/admin/b", ipEscalated),
		testRequest(t, "", "/robots.txt", ipPending),
	}
	undeclared := func(c *JudgeConfig) { c.Undeclared, c.LogAllowed = true, true }
	pooled := newTestJudge(t, undeclared)
	for _, first := range reqs {
		for _, then := range reqs {
			jd := pooled.Judge(t.Context(), first)
			jd.Release()
			// The tables as new, so that only the pool can carry what
			// the first request left.
			pooled.cfg.Served, pooled.cfg.Violators = NewServed(0), testViolators()
			reused := pooled.Judge(t.Context(), then)
			cfg := pooled.cfg
			cfg.Served, cfg.Violators = NewServed(0), testViolators()
			fresh := NewJudge(cfg).Judge(t.Context(), then)
			if a, b := comparableJudgement(reused), comparableJudgement(fresh); !reflect.DeepEqual(a, b) {
				t.Errorf("%s after %s: a pooled judgement\n\t%+v\nwant, as a fresh one,\n\t%+v", then.URI, first.URI, a, b)
			}
			reused.Release()
		}
	}
}

// comparableJudgement returns jd as a value two judgements of one request by two
// Judges of one configuration share: without the Judge and the scratch
// memory, the record copied out of the latter.
func comparableJudgement(jd *Judgement) Judgement {
	c := *jd
	c.judge, c.scratch = nil, nil
	if c.Record != nil {
		rec := *c.Record
		c.Record = &rec
	}
	return c
}
