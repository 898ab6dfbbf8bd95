package lint

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// findings returns Check's findings on body as "line code" strings.
func findings(body string) []string {
	var out []string
	for _, f := range Check([]byte(body), Options{}) {
		out = append(out, fmt.Sprintf("%d %s", f.Line, f.Code))
	}
	return out
}

// TestLintShadowed checks which rules lint reports as never deciding (RFC
// 9309 §2.2.2: the longest match wins, allow wins a tie), and that it
// reports none that can decide.
func TestLintShadowed(t *testing.T) {
	const ua = "User-agent: *\n"
	tests := []struct {
		name, rules string
		want        []string // lines 2 and on are the rules
	}{
		{"same pattern, allow first", "Allow: /x\nDisallow: /x\n", []string{"3 shadowed-rule"}},
		{"same pattern, disallow first", "Disallow: /x\nAllow: /x\n", []string{"2 shadowed-rule"}},
		{"allow with a star is longer", "Disallow: /x\nAllow: /x*\n", []string{"2 shadowed-rule"}},
		{"disallow with a star beats allow", "Allow: /fish\nDisallow: /fish*\n", []string{"2 shadowed-rule"}},
		{"double star counts twice", "Allow: /a\nDisallow: /a**\n", []string{"2 shadowed-rule"}},
		{"same once percent-decoded", "Disallow: /%61\nAllow: /a\n", []string{"2 shadowed-rule"}},
		{"same anchored pattern", "Disallow: /*.pdf$\nAllow: /*.pdf$\n", []string{"2 shadowed-rule"}},
		{"allow with a star as long: a tie", "Allow: /a*\nDisallow: /ab\n", []string{"3 shadowed-rule"}},
		{"allow embeds the path", "Disallow: /a/b\nAllow: /a*b*\n", []string{"2 shadowed-rule"}},
		{"exact path matched by allow", "Disallow: /a/b.pdf$\nAllow: /*/b.pdf*\n", []string{"2 shadowed-rule"}},
		{"anchored allow inside anchored disallow", "Disallow: /d/*.pdf$\nAllow: /d*.pdf$\n", nil},
		{"anchored allow, suffix of anchored disallow", "Disallow: /d/*x.pdf$\nAllow: /d/**.pdf$\n", []string{"2 shadowed-rule"}},
		{"duplicate rule", "Disallow: /x\nDisallow: /x\n", []string{"3 duplicate-rule"}},
		{"duplicate once percent-decoded", "Allow: /caf%C3%A9\nAllow: /café\n", []string{"3 duplicate-rule"}},
		{"identical encoded star", "Disallow: /a%2A\nAllow: /a%2A\n", []string{"2 shadowed-rule"}},

		// No finding: the rule decides some path.
		{"anchored disallow is longer", "Disallow: /x$\nAllow: /x\n", nil},
		{"anchored allow covers one path", "Disallow: /x\nAllow: /x$\n", nil},
		{"carve-out", "Disallow: /private/\nAllow: /private/press/\n", nil},
		{"shorter allow", "Disallow: /docs/*.pdf$\nAllow: /*.pdf\n", nil},
		{"shorter allow prefix", "Allow: /a\nDisallow: /ab\n", nil},
		{"allow does not reach", "Disallow: /a\nAllow: /a/\n", nil},
		{"unanchored disallow, anchored allow", "Disallow: /*.pdf\nAllow: /*.pdf$\n", nil},
		{"encoded star is not read", "Disallow: /a%2Ab\nAllow: /a*\n", nil},
		{"index page allows its directory too", "Allow: /d/index.html\nDisallow: /d/index.html*\n", nil},
		{"disallow and allow of different groups", "Disallow: /x\n\nUser-agent: GPTBot\nAllow: /x\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findings(ua + tt.rules)
			if !slices.Equal(got, tt.want) {
				t.Errorf("lint(%q) = %q, want %q", tt.rules, got, tt.want)
			}
		})
	}
}

// TestLintShadowedMerged checks a rule that never decides only in the
// group that merges two groups naming one token (RFC 9309 §2.2.1).
func TestLintShadowedMerged(t *testing.T) {
	body := "User-agent: Googlebot\nUser-agent: Googlebot-News\nDisallow: /x\n\nUser-agent: Googlebot\nAllow: /x\n"
	ds := Check([]byte(body), Options{})
	i := slices.IndexFunc(ds, func(f Finding) bool { return f.Code == CodeShadowedRule })
	if i < 0 {
		t.Fatalf("Check = %v, want a %s finding", ds, CodeShadowedRule)
	}
	d := ds[i]
	if d.Line != 3 || !strings.Contains(d.Message, "never decides for Googlebot:") || strings.Contains(d.Message, "News") {
		t.Errorf("finding = %d %q, want line 3, for Googlebot only", d.Line, d.Message)
	}
}

func TestLintGroupsAndRecords(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"last group without rules", "User-agent: *\nDisallow: /p\n\nUser-agent: Bingbot\nCrawl-delay: 5\n",
			[]string{"4 no-rules"}},
		{"last group without rules nor newline", "User-agent: *\nDisallow: /p\nUser-agent: Bingbot",
			[]string{"3 no-rules"}},
		{"empty disallow allows on purpose", "User-agent: *\nDisallow: /p\n\nUser-agent: Bingbot\nDisallow:\n", nil},
		{"allow everything", "User-agent: *\nDisallow:\n", nil},
		{"star alone", "User-agent: *\n", []string{"1 no-rules"}},
		{"rules from a merged group", "User-agent: Bingbot\nDisallow: /a\n\nUser-agent: *\nDisallow: /p\n\nUser-agent: Bingbot\n",
			[]string{"7 merged-groups"}},
		{"token twice in a group", "User-agent: GPTBot\nUser-agent: gptbot\nDisallow: /\n",
			[]string{"2 duplicate-agent"}},
		{"star in two groups", "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n",
			[]string{"4 merged-groups"}},
		{"disallow all", "User-agent: *\nDisallow: /\n", []string{"2 disallow-all"}},
		{"disallow all with a star", "User-agent: *\nDisallow: /*\nAllow: /public/\n", []string{"2 disallow-all"}},
		{"disallow all, shadowed", "User-agent: *\nAllow: /\nDisallow: /\n", []string{"3 shadowed-rule"}},
		{"disallow all, shadowed for a named agent only", "User-agent: *\nUser-agent: Foo\nDisallow: /\n\nUser-agent: Foo\nAllow: /\n",
			[]string{"3 shadowed-rule", "3 disallow-all", "5 merged-groups"}},
		{"named group disallows all", "User-agent: GPTBot\nDisallow: /\n", nil},
		{"anchored root only", "User-agent: *\nDisallow: /$\n", nil},
		{"sitemaps", "Sitemap: https://example.com/s.xml\nSitemap: /s.xml\nsitemap: example.com/s.xml\n",
			[]string{"0 no-groups", "2 sitemap-url", "3 sitemap-url"}},
		{"empty file", "", []string{"0 no-groups"}},
		{"html page", "\n  <!DOCTYPE html>\n<html><body>x</body></html>\n", []string{"0 html-body"}},
		{"html root element", "\xEF\xBB\xBF<HTML>\n", []string{"0 html-body"}},
		{"binary", "User-agent: *\nDisallow: /\x00\n", []string{"0 binary-body"}},
		{"parser diagnostics kept", "Disallow: /a\nUser-agent: *\nDisallow: a\n",
			[]string{"1 rule-outside-group", "3 pattern-start"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findings(tt.body)
			if !slices.Equal(got, tt.want) {
				t.Errorf("lint(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

// randomPattern returns a random rule pattern or path from pieces that
// exercise wildcards, anchors and percent-encoding.
func randomPattern(r *rand.Rand, pieces []string, wildcards bool) string {
	var b strings.Builder
	if wildcards && r.IntN(5) == 0 {
		b.WriteString("*")
	} else {
		b.WriteString("/")
	}
	for range r.IntN(5) {
		b.WriteString(pieces[r.IntN(len(pieces))])
		if wildcards && r.IntN(4) == 0 {
			b.WriteString("*")
		}
	}
	if wildcards && r.IntN(3) == 0 {
		b.WriteString("$")
	}
	return b.String()
}

// instance returns a path that pattern matches, its wildcards filled
// with random pieces.
func instance(r *rand.Rand, pattern string, pieces []string) string {
	p := strings.TrimSuffix(pattern, "$")
	var b strings.Builder
	for i, part := range strings.Split(p, "*") {
		if i > 0 {
			for range r.IntN(3) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		b.WriteString(part)
	}
	if !strings.HasPrefix(b.String(), "/") {
		return "/" + b.String()
	}
	return b.String()
}

var pieces = []string{"a", "b", "/", "ab", ".pdf", "%61", "%2F", "é", "?q=1"}

// TestPatternAgreesWithRules checks pattern.match against the rules
// package's own matcher, on random patterns and paths.
func TestPatternAgreesWithRules(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		pattern := randomPattern(r, pieces, true)
		p, ok := newPattern(pattern)
		if !ok {
			t.Fatalf("newPattern(%q) failed", pattern)
		}
		g := rules.Parse([]byte("User-agent: *\nDisallow: " + pattern + "\n")).Wildcard()
		for range 20 {
			path := randomPattern(r, pieces, false)
			if r.IntN(2) == 0 {
				path = instance(r, pattern, pieces)
			}
			if path == "/robots.txt" {
				continue
			}
			want := !g.Decide(path).Allowed
			got := p.match(string(rules.AppendCanonical(nil, path)))
			if got != want {
				t.Fatalf("pattern %q, path %q: match = %v, rules say %v", pattern, path, got, want)
			}
		}
	}
}

// TestLintShadowedIsSound checks, on random pairs of rules, that a rule
// lint reports as never deciding does not decide any path it matches.
func TestLintShadowedIsSound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	kinds := []string{"Allow", "Disallow"}
	found := 0
	for range 20000 {
		first := kinds[r.IntN(2)] + ": " + randomPattern(r, pieces[:5], true)
		second := kinds[r.IntN(2)] + ": " + randomPattern(r, pieces[:5], true)
		if r.IntN(4) == 0 { // more pairs of one pattern
			second = kinds[r.IntN(2)] + ": " + first[strings.Index(first, " ")+1:]
		}
		body := "User-agent: *\n" + first + "\n" + second + "\n"
		for _, d := range Check([]byte(body), Options{}) {
			if d.Code != CodeShadowedRule && d.Code != CodeDuplicateRule {
				continue
			}
			found++
			loser := []string{first, second}[d.Line-2]
			pattern := loser[strings.Index(loser, " ")+1:]
			g := rules.Parse([]byte(body)).Wildcard()
			for range 50 {
				path := instance(r, pattern, pieces[:5])
				if v := g.Decide(path); v.Rule.Line == d.Line {
					t.Fatalf("%q: lint says line %d never decides (%s), but it decides %q", body, d.Line, d.Message, path)
				}
			}
		}
	}
	if found < 100 {
		t.Errorf("only %d rules found never deciding: the test exercises too little", found)
	}
}
