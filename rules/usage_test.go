package rules

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// usageCase is one row of a Content-Usage table test: a robots.txt, an
// agent, a target, and the preference Decide must attach ("" for none),
// with the line of the first deciding rule.
type usageCase struct {
	ref    string
	robots string
	agent  string
	target string
	want   string
	line   int
}

func runUsageCases(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		v := Parse([]byte(c.robots)).Decide(c.agent, c.target)
		if got := v.Usage.String(); got != c.want || v.Usage.Line() != c.line {
			t.Errorf("[%s] Decide(%q, %q).Usage = %q line %d, want %q line %d\nrobots.txt:\n%s",
				c.ref, c.agent, c.target, got, v.Usage.Line(), c.want, c.line, c.robots)
		}
	}
}

// attachExample is the robots.txt of draft-ietf-aipref-attach-05 §3.4.
const attachExample = `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`

// TestAttachExample checks draft-ietf-aipref-attach-05 §3.4, its table
// and its prose: ExampleBot's group says train-ai=y everywhere; for others
// /ai-ok/ says y, the rest n, and /never/ is not crawled, so has none.
func TestAttachExample(t *testing.T) {
	const ref = "attach-05 §3.4"
	runUsageCases(t, []usageCase{
		{ref, attachExample, "OtherBot", "/test", "train-ai=n", 4},
		{ref, attachExample, "OtherBot", "/never/test", "", 0},
		{ref, attachExample, "OtherBot", "/ai-ok/test", "train-ai=y", 5},
		{ref, attachExample, "ExampleBot", "/never/test", "train-ai=y", 9},
		{ref, attachExample, "examplebot", "/ai-ok/test", "train-ai=y", 9},
	})
	// attach-05 §1.2: the same directive as a header and in robots.txt.
	runUsageCases(t, []usageCase{
		{"attach-05 §1.2", "User-Agent: *\nAllow: /\nContent-Usage: train-ai=n\n", "AnyBot", "/any", "train-ai=n", 3},
	})
}

// seedExample is the example of this package's brief: a path-less rule
// for the site, and a longer one for /research/.
const seedExample = `User-agent: *
Allow: /
Disallow: /private/
Content-Usage: train-ai=n, search=y
Content-Usage: /research/ train-ai=y
`

// TestUsageLongestMatch checks that the rule with the longest matching
// path pattern decides, as allow and disallow rules are chosen
// (draft-ietf-aipref-attach-05 §3.1, RFC 9309 §2.2.2), and that it
// replaces shorter rules whole: /research/ says nothing of search, so
// search is unknown there (the draft's §3.4 table reads the same way).
func TestUsageLongestMatch(t *testing.T) {
	const ref = "attach-05 §3.1"
	pdf := "User-agent: *\nContent-Usage: search=y\nContent-Usage: /*.pdf$ search=n\nContent-Usage: /docs/ train-ai=y\nContent-Usage: /documents/ train-ai=y\n"
	runUsageCases(t, []usageCase{
		{ref, seedExample, "AnyBot", "/", "train-ai=n, search=y", 4},
		{ref, seedExample, "AnyBot", "/blog/post", "train-ai=n, search=y", 4},
		{ref, seedExample, "AnyBot", "/research/paper.html", "train-ai=y", 5},
		{ref, seedExample, "AnyBot", "/research", "train-ai=n, search=y", 4},
		{ref, seedExample, "AnyBot", "https://example.com/research/?q=1", "train-ai=y", 5},
		{ref, seedExample, "AnyBot", "/%72esearch/x", "train-ai=y", 5}, // RFC 9309 §2.2.2 encodings
		// attach-05 §3.1: no preference for what may not be crawled.
		{ref, seedExample, "AnyBot", "/private/report", "", 0},
		// "*" and "$" count in a pattern's length, as RFC 9309 §2.2.2.
		{ref, pdf, "AnyBot", "/a.pdf", "search=n", 3},
		{ref, pdf, "AnyBot", "/a.pdf?x", "search=y", 2},
		{ref, pdf, "AnyBot", "/docs/a.pdf", "search=n", 3}, // 7 octets against 6
		{ref, pdf, "AnyBot", "/docs/a.html", "train-ai=y", 4},
		{ref, pdf, "AnyBot", "/documents/a.pdf", "train-ai=y", 5}, // 11 against 7
		// No rule matches: no preference.
		{ref, "User-agent: *\nContent-Usage: /a/ train-ai=n\n", "AnyBot", "/b", "", 0},
		// A group without Content-Usage rules, and no group at all.
		{ref, "User-agent: *\nDisallow: /x\n", "AnyBot", "/a", "", 0},
		{ref, "User-agent: FooBot\nContent-Usage: train-ai=n\n", "AnyBot", "/a", "", 0},
		// attach-05 §3: the rules of the group that applies, and only those.
		{"RFC 9309 §2.2.1", "User-agent: *\nDisallow: /p/\nContent-Usage: train-ai=n\n\nUser-agent: FooBot\nAllow: /\n", "FooBot", "/a", "", 0},
		// RFC 9309 §2.2.2: /robots.txt is always allowed, so a
		// preference applies to it too.
		{ref, "User-agent: *\nDisallow: /\nContent-Usage: train-ai=n\n", "AnyBot", "/robots.txt", "train-ai=n", 3},
	})
}

// TestUsageCombination checks that rules with identical paths combine,
// the most restrictive preference winning (draft-ietf-aipref-attach-05
// §3.1 citing draft-ietf-aipref-vocab-08 §5.1), unlike allow and disallow
// ties; that a rule without a path is one for "/"; and that patterns as
// long that match at once combine the same way.
func TestUsageCombination(t *testing.T) {
	const ref = "attach-05 §3.1"
	runUsageCases(t, []usageCase{
		{ref, "User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: train-ai=n, search=y\n", "A", "/x", "train-ai=n, search=y", 2},
		{ref, "User-agent: *\nContent-Usage: train-ai=n, search=y\nContent-Usage: train-ai=y\n", "A", "/x", "train-ai=n, search=y", 2},
		{ref, "User-agent: *\nContent-Usage: search=y\nContent-Usage: search=n\n", "A", "/x", "search=n", 2},
		{ref, "User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: / train-ai=n\n", "A", "/x", "train-ai=n", 2},
		{ref, "User-agent: *\nContent-Usage: /a/ train-ai=y\nContent-Usage: /%61/ search=n\n", "A", "/a/x", "train-ai=y, search=n", 2},
		{ref, "User-agent: *\nContent-Usage: /a/ train-ai=y\n\nUser-agent: *\nContent-Usage: /a/ train-ai=n\n", "A", "/a/x", "train-ai=n", 2},
		// Patterns of one length that both match.
		{ref, "User-agent: *\nContent-Usage: /a* train-ai=y\nContent-Usage: /ab search=n\n", "A", "/abc", "train-ai=y, search=n", 2},
		{ref, "User-agent: *\nContent-Usage: /a* train-ai=y\nContent-Usage: /ab search=n\n", "A", "/acc", "train-ai=y", 2},
		// A pattern filed by its prefix ties with a floating one, in
		// either order (see usageIndex.lookup).
		{ref, "User-agent: *\nContent-Usage: /abcde train-ai=y\nContent-Usage: /*bcde search=n\n", "A", "/abcdef", "train-ai=y, search=n", 2},
		{ref, "User-agent: *\nContent-Usage: /*bcde search=n\nContent-Usage: /abcde train-ai=y\n", "A", "/abcdef", "train-ai=y, search=n", 2},
		{ref, "User-agent: *\nContent-Usage: /*bcde search=n\nContent-Usage: /abcde train-ai=y\nContent-Usage: /*cdef train-ai=n\n", "A", "/abcdef", "train-ai=n, search=n", 2},
		// A malformed rule still decides its path, with every category
		// unknown (draft-ietf-aipref-vocab-08 §6.5.1).
		{ref, "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a/ Train-AI=y\n", "A", "/a/x", "", 3},
		{ref, "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a/ Train-AI=y\n", "A", "/b", "train-ai=n", 2},
		// Same path, one malformed: unknown adds nothing to n.
		{ref, "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: train-ai=yes\n", "A", "/b", "train-ai=n", 2},
	})
	v := Parse([]byte("User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: /x train-ai=n\nContent-Usage: / search=n\n")).Decide("A", "/a")
	lines := []int{}
	for _, r := range v.Usage.Rules() {
		lines = append(lines, r.Line)
	}
	if !slices.Equal(lines, []int{2, 4}) {
		t.Errorf("[%s] the deciding rules of a combined preference are on lines %v, want [2 4]", ref, lines)
	}
}

// TestUsageRuleSyntax checks how a Content-Usage line is read
// (draft-ietf-aipref-attach-05 §3.2), through the rules it yields.
func TestUsageRuleSyntax(t *testing.T) {
	tests := []struct {
		line       string
		path, pref string
	}{
		{"Content-Usage: train-ai=n", "", "train-ai=n"},
		{"content-usage:/a/ train-ai=n", "/a/", "train-ai=n"},
		{"CONTENT-USAGE :\t/a/\t \ttrain-ai=n, search=y  ", "/a/", "train-ai=n, search=y"},
		{"Content-Usage: /a/*.pdf$ search=n # pdfs", "/a/*.pdf$", "search=n"},
		{"Content-Usage: /a/#b train-ai=n", "/a/", ""},                 // "#" ends the value
		{`Content-Usage: x="a#b"`, "", `x="a`},                         // even inside a string
		{"Content-Usage: *.pdf$ search=n", "", "*.pdf$ search=n"},      // a path starts with "/"
		{"Content-Usage: /only-a-path", "/only-a-path", ""},            // no preference
		{"Content-Usage:", "", ""},                                     // empty
		{"Content-Usage train-ai=n", "", "train-ai=n"},                 // missing colon, Google-compatible
		{"Content-Usage: /a%20b/ train-ai=n", "/a%20b/", "train-ai=n"}, // SP in a path is encoded
	}
	for _, tt := range tests {
		r := Parse([]byte("User-agent: *\n" + tt.line + "\n"))
		g := r.Groups()[0]
		if len(g.Usage) != 1 || g.Usage[0].Path != tt.path || g.Usage[0].Preference != tt.pref || g.Usage[0].Line != 2 || g.Usage[0].GroupLine != 1 {
			t.Errorf("[attach-05 §3.2] %q read as %+v, want path %q, preference %q on line 2", tt.line, g.Usage, tt.path, tt.pref)
		}
	}
	// Content-Usage-ish keys are not Content-Usage: no typo is accepted.
	for _, line := range []string{"Content-Usages: train-ai=n", "ContentUsage: train-ai=n", "Content-Use: train-ai=n"} {
		r := Parse([]byte("User-agent: *\n" + line + "\n"))
		if len(r.Groups()[0].Usage) != 0 || findDiag(r, CodeUnknownKey) == nil {
			t.Errorf("[attach-05 §3.2] %q read as a Content-Usage rule, want an unknown key", line)
		}
	}
}

// TestUsageDiagnostics checks the diagnostics of Content-Usage lines, and
// that a clean Content-Signal line beside them draws none.
func TestUsageDiagnostics(t *testing.T) {
	tests := []struct {
		body string
		want []string // "line code"
	}{
		{"Content-Usage: train-ai=n\nUser-agent: *\n", []string{"1 usage-outside-group"}},
		{"User-agent: *\nContent-Usage: Train-AI=n\n", []string{"2 usage-malformed"}},
		{"User-agent: *\nContent-Usage: *.pdf search=n\n", []string{"2 usage-malformed"}},
		{"User-agent: *\nContent-Usage: /a/\nContent-Usage:\n", []string{"2 usage-empty", "3 usage-empty"}},
		{"User-agent: *\nContent-Usage: ai-train=n, train-ai=n, x\n", []string{"2 usage-unknown-key", "2 usage-unknown-key"}},
		{"User-agent: *\nContent-Usage: train-ai=no, search=\"y\"\n", []string{"2 usage-bad-value", "2 usage-bad-value"}},
		{"User-agent: A\nContent-Usage: train-ai=n\nUser-agent: B\nDisallow: /\n", []string{"3 usage-between-agents"}},
		{"User-agent: A\nContent-Usage: train-ai=n\nUser-agent: B\nUser-agent: C\nDisallow: /\n", []string{"3 usage-between-agents"}},
		{"User-agent: A\nDisallow:\nContent-Usage: train-ai=n\nUser-agent: B\nDisallow: /\n", nil},
		{"User-agent: *\nContent-Usage: train-ai=n, search=y\nContent-Signal: search=yes, ai-train=no\n", nil},
		{"Content-Signal: search=yes\n", []string{"1 signal-outside-group"}},
	}
	for _, tt := range tests {
		var got []string
		for _, d := range Parse([]byte(tt.body)).Diagnostics() {
			got = append(got, itoa(d.Line)+" "+d.Code)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Diagnostics(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	r := Parse([]byte("User-agent: *\nContent-Signal: search=yes, ai-train=no\n"))
	if recs := r.Records(); len(recs) != 0 {
		t.Errorf("Records() = %+v, want none: a Content-Signal line is a usage rule", recs)
	}
}

func itoa(n int) string {
	return string(rune('0' + n)) // diagnostics in these tables are on lines 0-9
}

// TestUsageGroups checks how Content-Usage rules follow groups: merged
// with the groups naming one token (RFC 9309 §2.2.1), and, unlike allow
// and disallow, not ending a run of user-agent lines (see
// TestPreferenceLinesJoinAgents).
func TestUsageGroups(t *testing.T) {
	merged := "User-agent: A\nContent-Usage: /a/ train-ai=n\nDisallow: /p/\n\nUser-agent: B\nDisallow: /x\n\nUser-agent: A\nContent-Usage: /b/ search=n\n"
	runUsageCases(t, []usageCase{
		{"RFC 9309 §2.2.1", merged, "A", "/a/1", "train-ai=n", 2},
		{"RFC 9309 §2.2.1", merged, "A", "/b/1", "search=n", 9},
		{"RFC 9309 §2.2.1", merged, "B", "/a/1", "", 0},
	})
	r := Parse([]byte(merged))
	if !r.Group("A").HasUsage() || r.Group("B").HasUsage() {
		t.Errorf("HasUsage: A %v, B %v; want true, false", r.Group("A").HasUsage(), r.Group("B").HasUsage())
	}
	if rs := r.Group("A").UsageRules(); len(rs) != 2 || rs[0].TrainAI != PreferenceDisallowed || rs[0].Search != PreferenceUnknown || rs[1].Line != 9 {
		t.Errorf("UsageRules of A = %+v, want the rules of lines 2 and 9", rs)
	}
	// RuleLines counts allow and disallow lines, empty ones too, and no
	// Content-Usage line.
	gs := Parse([]byte("User-agent: A\nDisallow:\nContent-Usage: train-ai=n\nAllow: /x\n\nUser-agent: B\nContent-Usage: train-ai=n\n")).Groups()
	if len(gs) != 2 || gs[0].RuleLines != 2 || len(gs[0].Rules) != 1 || gs[1].RuleLines != 0 {
		t.Errorf("RuleLines = %d and %d, want 2 and 0", gs[0].RuleLines, gs[len(gs)-1].RuleLines)
	}
}

// TestUsageCanonical checks the fast path: UsageCanonical reads a
// canonical target as DecideCanonical does, without allocating, and
// attaches the preference whatever allow and disallow say, while
// DecideCanonical leaves Verdict.Usage empty.
func TestUsageCanonical(t *testing.T) {
	r := Parse([]byte(seedExample))
	g := r.Wildcard()
	tests := []struct{ target, want string }{
		{"/research/x?y=%7e", "train-ai=y"},
		{"/private/x", "train-ai=n, search=y"}, // disallowed: the caller's to drop
		{"/", "train-ai=n, search=y"},
	}
	for _, tt := range tests {
		path := canonicalTargetString(tt.target)
		if got := g.UsageCanonical(path).String(); got != tt.want {
			t.Errorf("UsageCanonical(%q) = %q, want %q", path, got, tt.want)
		}
		if v := g.DecideCanonical(path); v.Usage.Found() {
			t.Errorf("DecideCanonical(%q).Usage = %q, want none", path, v.Usage)
		}
		if n := testing.AllocsPerRun(100, func() { _ = g.UsageCanonical(path).String() }); n != 0 {
			t.Errorf("UsageCanonical(%q) allocates %v times, want 0", path, n)
		}
		if n := testing.AllocsPerRun(100, func() { r.Decide("AnyBot", tt.target) }); n != 0 {
			t.Errorf("Decide(%q) allocates %v times, want 0", tt.target, n)
		}
	}
	if u := Parse([]byte("User-agent: *\nDisallow: /\n")).Wildcard().UsageCanonical("/"); u.Found() || u.Line() != 0 || u.Rules() != nil {
		t.Errorf("UsageCanonical without Content-Usage rules = %+v, want nothing", u)
	}
}

// TestUsageLimits checks the bounds on what a Usage describes: the first
// 16 deciding rules and the first 16 members outside the vocabulary, while
// the preferences come from every rule.
func TestUsageLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 20 {
		fmt.Fprintf(&b, "Content-Usage: x%d=?1, search=y\n", i)
	}
	b.WriteString("Content-Usage: train-ai=n\n")
	u := Parse([]byte(b.String())).Decide("A", "/").Usage
	if rs := u.Rules(); len(rs) != maxUsageRulesListed || rs[0].Line != 2 || rs[15].Line != 17 {
		t.Errorf("Rules() lists %d rules, want the first %d", len(rs), maxUsageRulesListed)
	}
	want := "train-ai=n, search=y, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15"
	if u.String() != want {
		t.Errorf("String() = %q, want %q", u.String(), want)
	}
}
