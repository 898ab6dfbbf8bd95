package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestContentSignalMapping checks how a Content-Signal line
// (contentsignals.org) is read into the vocabulary of
// draft-ietf-aipref-vocab-08: search as search, ai-train as train-ai,
// ai-input as ai-use, yes as y and no as n; use= and unknown keys are not
// carried, and a value that cannot be read leaves its category unknown.
func TestContentSignalMapping(t *testing.T) {
	const ref = "contentsignals.org"
	tests := []struct{ signal, want string }{
		{"search=yes, ai-train=no", "train-ai=n, search=y"},
		{"ai-train=no, search=yes, ai-input=yes", "train-ai=n, ai-use=y, search=y"}, // contentsignals.org's example
		{"search=yes, ai-train=no, ai-input=no", "train-ai=n, ai-use=n, search=y"},
		{"ai-train=yes", "train-ai=y"},
		{"ai-input=no", "ai-use=n"},
		{"Search=Yes, AI-Train=NO", "train-ai=n, search=y"},              // ASCII case is ignored
		{"  ai-train = no ,search=yes,  ", "train-ai=n, search=y"},       // white space, a trailing comma
		{"search=yes,ai-train=no,use=reference", "train-ai=n, search=y"}, // Cloudflare's managed line: use is not carried
		{"ai-train=no, ai-train=yes", "train-ai=n"},                      // a repeated key: no wins
		{"ai-train=n, search=maybe, ai-input=true", ""},                  // only yes and no
		{"foo=yes, search=no", "search=n"},                               // unknown keys are not carried
		{"ai-train=no;search=yes", ""},                                   // ";" separates nothing
		{`ai-train="no", search`, ""},                                    // no quotes, no bare keys
		{"search=yes # and the rest", "search=y"},                        // a comment ends the line
		{"use=immediate", ""},                                            // found, but nothing to say
		{"train-ai=n, ai-use=n", ""},                                     // Content-Usage's labels are unknown keys here
		{"ai-train=no, search=yes, ai-input=no, use=full, ai-train=no", "train-ai=n, ai-use=n, search=y"},
	}
	for _, tt := range tests {
		robots := "User-agent: *\nContent-Signal: " + tt.signal + "\n"
		runUsageCases(t, []usageCase{{ref, robots, "AnyBot", "/a", tt.want, 2}})
		rs := Parse([]byte(robots)).Wildcard().UsageRules()
		if len(rs) != 1 || rs[0].Kind != ContentSignal || rs[0].Line != 2 || rs[0].GroupLine != 1 {
			t.Errorf("[%s] %q: UsageRules() = %+v, want one Content-Signal rule on line 2", ref, tt.signal, rs)
		}
	}
}

// TestContentSignalScope checks the scope of Content-Signal lines: the
// group (RFC 9309 §2.2.1: the named group replaces "*"), and, when the
// value starts with "/", a path, read as a Content-Usage rule's
// (draft-ietf-aipref-attach-05 §3.1, §3.2): the longest matching path
// decides, whole, and lines with the same path combine, no winning.
func TestContentSignalScope(t *testing.T) {
	const ref = "contentsignals.org, attach-05 §3.1"
	paths := "User-agent: *\nDisallow: /private/\nContent-Signal: search=yes, ai-train=no\nContent-Signal: /blog/ ai-train=yes\n" +
		"Content-Signal: /*.pdf$ search=no\n\nUser-agent: GPTBot\nAllow: /\nContent-Signal: ai-input=no\n"
	runUsageCases(t, []usageCase{
		{ref, paths, "AnyBot", "/", "train-ai=n, search=y", 3},
		{ref, paths, "AnyBot", "/blog/post", "train-ai=y", 4},
		{ref, paths, "AnyBot", "/blog", "train-ai=n, search=y", 3},
		{ref, paths, "AnyBot", "/a/b.pdf", "search=n", 5},
		{ref, paths, "AnyBot", "/private/x", "", 0}, // attach-05 §3.1: not for what may not be fetched
		{ref, paths, "GPTBot", "/blog/post", "ai-use=n", 9},
		{ref, paths, "gptbot", "/private/x", "ai-use=n", 9},
	})
	same := "User-agent: *\nContent-Signal: search=yes\nContent-Signal: / ai-train=no\nContent-Signal: search=no, ai-input=yes\n"
	runUsageCases(t, []usageCase{{"vocab-08 §5.1", same, "A", "/x", "train-ai=n, ai-use=y, search=n", 2}})
	rs := Parse([]byte(same)).Decide("A", "/x").Usage.Rules()
	if lines := []int{rs[0].Line, rs[1].Line, rs[2].Line}; len(rs) != 3 || !slices.Equal(lines, []int{2, 3, 4}) {
		t.Errorf("[vocab-08 §5.1] the deciding rules are %+v, want lines 2, 3 and 4", rs)
	}
}

// TestContentSignalWithContentUsage checks how a group's Content-Signal
// and Content-Usage lines combine: each kind is a way of stating a
// preference, whose longest matching rule states it for a path, and the
// two statements combine as draft-ietf-aipref-vocab-08 §5.1 says: any n
// wins, then any y, else unknown. The Usage lists the rules of both, with
// their kind and line, so that a report can say where each part came
// from.
func TestContentSignalWithContentUsage(t *testing.T) {
	const ref = "vocab-08 §5.1"
	both := "User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: train-ai=y, ai-use=y\n"
	scoped := "User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: /research/ train-ai=y, search=y\nContent-Signal: /open/ ai-train=yes\n"
	runUsageCases(t, []usageCase{
		{ref, both, "A", "/x", "train-ai=n, ai-use=y, search=y", 2},
		// A longer Content-Usage rule does not silence a shorter
		// Content-Signal line: the site said both.
		{ref, scoped, "A", "/research/x", "train-ai=n, search=y", 2},
		{ref, scoped, "A", "/other", "train-ai=n", 2},
		{ref, scoped, "A", "/open/x", "train-ai=y", 4},
		// The order of the lines does not matter.
		{ref, "User-agent: *\nContent-Usage: search=n\nContent-Signal: search=yes\n", "A", "/x", "search=n", 2},
		{ref, "User-agent: *\nContent-Signal: search=yes\nContent-Usage: search=n\n", "A", "/x", "search=n", 2},
		// A Content-Usage line in another group is not combined.
		{ref, "User-agent: *\nContent-Usage: train-ai=n\nDisallow: /p/\n\nUser-agent: B\nContent-Signal: ai-train=yes\nAllow: /\n", "B", "/x", "train-ai=y", 6},
	})
	u := Parse([]byte(both)).Decide("A", "/x").Usage
	rs := u.Rules()
	if len(rs) != 2 || rs[0].Kind != ContentSignal || rs[0].Line != 2 || rs[1].Kind != ContentUsage || rs[1].Line != 3 {
		t.Fatalf("[%s] Rules() = %+v, want the Content-Signal line 2 and the Content-Usage line 3", ref, rs)
	}
	if rs[0].TrainAI != PreferenceDisallowed || rs[0].Search != PreferenceAllowed || rs[1].TrainAI != PreferenceAllowed || rs[1].AIUse != PreferenceAllowed {
		t.Errorf("[%s] each rule's own preferences: %+v", ref, rs)
	}
	if got := rs[0].String() + " | " + rs[1].String(); got != "Content-Signal: search=yes, ai-train=no | Content-Usage: train-ai=y, ai-use=y" {
		t.Errorf("UsageRule.String() = %q", got)
	}
	if got := (UsageRule{Kind: ContentSignal, Path: "/a/", Preference: "search=no"}).String(); got != "Content-Signal: /a/ search=no" {
		t.Errorf("UsageRule.String() with a path = %q", got)
	}
	if got := (UsageRule{Kind: ContentUsage, Path: "/a/"}).String(); got != "Content-Usage: /a/" {
		t.Errorf("UsageRule.String() with a path alone = %q", got)
	}
	if got := ContentUsage.String() + " " + ContentSignal.String() + " " + UsageKind(7).String(); got != "Content-Usage Content-Signal UsageKind(7)" {
		t.Errorf("UsageKind names = %q", got)
	}
}

// TestContentSignalCanonical checks the handler's path: UsageCanonical
// combines both kinds without allocating (the pairs are built when the
// file is compiled), as Decide does, and says what Decide says.
func TestContentSignalCanonical(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Signal: /s1/ ai-input=no\n")
	for i := range 20 {
		fmt.Fprintf(&b, "Content-Usage: /s%d/ train-ai=%s\n", i, []string{"y", "n"}[i%2])
	}
	r := Parse([]byte(b.String()))
	g := r.Wildcard()
	for _, tt := range []struct{ target, want string }{
		{"/s1/x", "train-ai=n, ai-use=n"}, // the longer Content-Signal line decides its kind

		{"/s2/x", "train-ai=n, search=y"},
		{"/s4/x?q", "train-ai=n, search=y"},
		{"/none", "train-ai=n, search=y"},
	} {
		path := canonicalTargetString(tt.target)
		if got := g.UsageCanonical(path); got.String() != tt.want || got.String() != r.Decide("A", tt.target).Usage.String() {
			t.Errorf("UsageCanonical(%q) = %q, want %q as Decide", path, got, tt.want)
		}
		if n := testing.AllocsPerRun(100, func() { _ = g.UsageCanonical(path).Line() }); n != 0 {
			t.Errorf("UsageCanonical(%q) allocates %v times, want 0", path, n)
		}
		if n := testing.AllocsPerRun(100, func() { r.Decide("A", tt.target) }); n != 0 {
			t.Errorf("Decide(%q) allocates %v times, want 0", tt.target, n)
		}
	}
}

// TestUsagePairsBudget checks the bound on the combinations of
// Content-Usage and Content-Signal answers a file builds ahead of lookups
// (maxUsagePairs): it holds for the file, not for each group, and lookups
// past it still combine correctly.
func TestUsagePairsBudget(t *testing.T) {
	const n, m = 60, 50 // 3,000 pairs a group: two do not fit
	if 2*n*m <= maxUsagePairs || n*m+1 > maxUsagePairs {
		t.Fatalf("the test needs two groups of %d pairs to overrun %d, and one to fit", n*m, maxUsagePairs)
	}
	var b strings.Builder
	for _, agent := range []string{"A", "B"} {
		fmt.Fprintf(&b, "User-agent: %s\nAllow: /\n", agent)
		for i := range n {
			fmt.Fprintf(&b, "Content-Usage: /u%d/ train-ai=y\n", i)
		}
		for i := range m {
			fmt.Fprintf(&b, "Content-Signal: /u%d/ ai-train=no, search=yes\n", i*2)
		}
	}
	b.WriteString("User-agent: *\nAllow: /\nContent-Usage: train-ai=y\nContent-Signal: ai-input=no\n")
	body := b.String()
	r := Parse([]byte(body))
	built := 0
	for _, agent := range []string{"A", "B"} {
		if r.Group(agent).usage.pairs != nil {
			built++
		}
	}
	if built != 1 || r.Wildcard().usage.pairs == nil {
		t.Errorf("%d of the two big groups built their pairs, and the small one %v; want one, and true: %d pairs a file",
			built, r.Wildcard().usage.pairs != nil, maxUsagePairs)
	}
	group := 2 + n + m // the lines of a big group
	runUsageCases(t, []usageCase{
		{"vocab-08 §5.1", body, "A", "/u4/x", "train-ai=n, search=y", 3 + 4},
		{"vocab-08 §5.1", body, "B", "/u4/x", "train-ai=n, search=y", group + 3 + 4},
		{"vocab-08 §5.1", body, "B", "/u5/x", "train-ai=y", group + 3 + 5},
		{"vocab-08 §5.1", body, "C", "/x", "train-ai=y, ai-use=n", 2*group + 3},
	})
}

// TestContentSignalDiagnostics checks what the parser reports of
// Content-Signal lines.
func TestContentSignalDiagnostics(t *testing.T) {
	tests := []struct {
		body string
		want []string // "line code"
	}{
		{"User-agent: *\nContent-Signal: search=yes, ai-train=no, ai-input=yes\n", nil},
		{"Content-Signal: search=yes\nUser-agent: *\n", []string{"1 signal-outside-group"}},
		{"User-agent: *\nContent-Signal:\nContent-Signal: /a/\n", []string{"2 signal-empty", "3 signal-empty"}},
		{"User-agent: *\nContent-Signal: search, ai-train=no\n", []string{"2 signal-malformed"}},
		{"User-agent: *\nContent-Signal: *.pdf search=no\n", []string{"2 signal-malformed"}},
		{"User-agent: *\nContent-Signal: ai_train=no, train-ai=no\n", []string{"2 signal-unknown-key", "2 signal-unknown-key"}},
		{"User-agent: *\nContent-Signal: ai-train=n, search=true, use=partial\n", []string{"2 signal-bad-value", "2 signal-bad-value", "2 signal-bad-value"}},
		{"User-agent: *\nContent-Signal: ai-train=no, ai-train=yes, search=yes, search=yes\n", []string{"2 signal-repeated"}},
		{"User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\n", []string{"2 signal-use"}},
		{"User-agent: A\nContent-Signal: ai-train=no\nUser-agent: B\nDisallow: /\n", []string{"3 usage-between-agents"}},
		{"User-agent: *\ncontent-signals: search=yes\n", []string{"2 unknown-key"}}, // no typo is read as the key
	}
	for _, tt := range tests {
		var got []string
		for _, d := range Parse([]byte(tt.body)).Diagnostics() {
			got = append(got, fmt.Sprintf("%d %s", d.Line, d.Code))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Diagnostics(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	// What the messages say: the hint for Content-Usage's values, and
	// what becomes of use=.
	for _, tt := range []struct{ body, code, want string }{
		{"User-agent: *\nContent-Signal: ai-train=n\n", CodeSignalBadValue, `ai-train takes yes or no (y and n are Content-Usage's values): "n" leaves its preference unknown`},
		{"User-agent: *\nContent-Signal: use=reference\n", CodeSignalUse, "use=reference (Cloudflare's level of reuse: immediate, reference or full) has no category in draft-ietf-aipref-vocab-08: not carried into Content-Usage"},
		{"User-agent: *\nContent-Signal: *.pdf search=no\n", CodeSignalMalformed, `a path comes first and starts with "/"`},
	} {
		d := findDiag(Parse([]byte(tt.body)), tt.code)
		if d == nil || !strings.Contains(d.Message, tt.want) {
			t.Errorf("Diagnostics(%q) %s = %v, want %q in it", tt.body, tt.code, d, tt.want)
		}
	}
}

// TestCloudflareManagedRobotsTxt reads a robots.txt as Cloudflare's managed
// robots.txt writes it (testdata/aipref, with its provenance): the
// Content-Signal line of the first "*" group gives the preference of every
// crawler no group names, and of browsers, in the "*" groups merged (RFC
// 9309 §2.2.1); the AI crawlers' own groups state none; use= is reported,
// not carried.
func TestCloudflareManagedRobotsTxt(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "testdata", "aipref", "cloudflare-managed.txt"))
	if err != nil {
		t.Fatalf("testdata missing: %v (see testdata/aipref/README.md)", err)
	}
	r := Parse(body)
	var got []string
	for _, d := range r.Diagnostics() {
		got = append(got, fmt.Sprintf("%d %s", d.Line, d.Code))
	}
	// Line 107 is "User-agent: MJ12bot", whose token stops at the digit.
	if !slices.Equal(got, []string{"30 signal-use", "107 agent-token"}) {
		t.Errorf("Diagnostics() = %q, want the use= note on line 30 and MJ12bot's token on line 107", got)
	}
	const ref = "contentsignals.org, RFC 9309 §2.2.1"
	runUsageCases(t, []usageCase{
		{ref, string(body), "ExampleBot", "/page", "train-ai=n, search=y", 30},
		{ref, string(body), "ExampleBot", "/admin/x", "", 0},
		{ref, string(body), "GPTBot", "/page", "", 0},
		{ref, string(body), "Googlebot", "/", "train-ai=n, search=y", 30},
	})
	if r.Allowed("GPTBot", "/page") || r.Allowed("ExampleBot", "/api/x") || !r.Allowed("ExampleBot", "/page") {
		t.Errorf("[RFC 9309 §2.2.1] access: GPTBot /page %v, ExampleBot /api/x %v, ExampleBot /page %v; want false, false, true",
			r.Allowed("GPTBot", "/page"), r.Allowed("ExampleBot", "/api/x"), r.Allowed("ExampleBot", "/page"))
	}
}
