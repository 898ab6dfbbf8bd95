package rules

import (
	"strings"
	"testing"
	"time"
)

type parseStatsCase struct {
	ID        string `json:"id"`
	Robots    string `json:"robots"`
	RobotsB64 string `json:"robots_b64"`
	Expected  struct {
		Valid    *int    `json:"valid_directives"`
		Unknown  *int    `json:"unknown_directives"`
		LastLine *int    `json:"last_line_seen"`
		Sitemap  *string `json:"sitemap"`
	} `json:"expected"`
}

// TestGoogleParseStats checks line numbering, BOM handling and sitemap
// records against Google's parser-level test cases.
func TestGoogleParseStats(t *testing.T) {
	for _, c := range readJSONL[parseStatsCase](t, "parse_stats.jsonl") {
		r := Parse([]byte(exact(t, c.Robots, c.RobotsB64)))
		valid, unknown, last := 0, 0, 0
		seen := func(line int) { last = max(last, line) }
		for _, g := range r.Groups() {
			valid += len(g.Agents) + len(g.Rules)
			for _, a := range g.Agents {
				seen(a.Line)
			}
			for _, rule := range g.Rules {
				seen(rule.Line)
			}
		}
		valid += len(r.Sitemaps())
		// Allow and disallow lines outside any group are read as such,
		// then ignored (RFC 9309 §2.2.2): Google's count includes them.
		for _, d := range r.Diagnostics() {
			if d.Code == CodeRuleOutsideGroup {
				valid++
				seen(d.Line)
			}
		}
		for _, rec := range r.Records() {
			seen(rec.Line)
			if !strings.EqualFold(rec.Key, "sitemap") {
				unknown++
			}
		}
		e := c.Expected
		if e.Valid != nil && valid != *e.Valid {
			t.Errorf("%s: %d valid directives, want %d", c.ID, valid, *e.Valid)
		}
		if e.Unknown != nil && unknown != *e.Unknown {
			t.Errorf("%s: %d unknown directives, want %d", c.ID, unknown, *e.Unknown)
		}
		if e.LastLine != nil && last != *e.LastLine {
			t.Errorf("%s: last directive on line %d, want %d", c.ID, last, *e.LastLine)
		}
		if e.Sitemap != nil && (len(r.Sitemaps()) != 1 || r.Sitemaps()[0] != *e.Sitemap) {
			t.Errorf("%s: Sitemaps() = %q, want [%q]", c.ID, r.Sitemaps(), *e.Sitemap)
		}
	}
}

// TestDiagnostics checks that each kind of line Parse cannot use, or has to
// interpret, is reported on its line with its code and severity.
func TestDiagnostics(t *testing.T) {
	cases := []struct {
		robots string
		code   string
		line   int
		sev    Severity
	}{
		{"\xEF\xBB\xBFuser-agent: a\n", CodeBOM, 1, Info},
		{"user-agent: a\ndisallow: /caf\xE9\n", CodeInvalidUTF8, 2, Warning},
		{"user-agent: a\ndisallow: /" + strings.Repeat("x", MaxLineLength) + "\n", CodeLineTooLong, 2, Warning},
		{"user-agent: a\nthis line has no record\n", CodeInvalidLine, 2, Error},
		{"user-agent: a\n: /x\n", CodeInvalidLine, 2, Error},
		{"user-agent a\n", CodeMissingColon, 1, Warning},
		{"user-agent: a\ndissallow: /x\n", CodeKeyTypo, 2, Warning},
		{"useragent: a\n", CodeKeyTypo, 1, Warning},
		{"user-agent: a\nfoo: bar\n", CodeUnknownKey, 2, Info},
		{"disallow: /x\nuser-agent: a\n", CodeRuleOutsideGroup, 1, Error},
		{"user-agent: a\ndisallow: x/y\n", CodePatternStart, 2, Warning},
		{"user-agent: Foo Bot/1.0\n", CodeAgentToken, 1, Info},
		{"user-agent: 42\n", CodeAgentInvalid, 1, Error},
		{"user-agent: a\ncrawl-delay: soon\n", CodeCrawlDelay, 2, Warning},
		{"crawl-delay: 5\nuser-agent: a\n", CodeRecordOutside, 1, Warning},
	}
	for _, c := range cases {
		d := findDiag(Parse([]byte(c.robots)), c.code)
		if d == nil {
			t.Errorf("Parse(%.60q): no %s diagnostic; got %v", c.robots, c.code, Parse([]byte(c.robots)).Diagnostics())
			continue
		}
		if d.Line != c.line || d.Severity != c.sev || d.Message == "" {
			t.Errorf("Parse(%.60q): %s diagnostic = %+v, want line %d, %v", c.robots, c.code, *d, c.line, c.sev)
		}
	}
}

// TestCleanFileHasNoDiagnostics guards against reporting noise: a tidy
// file yields nothing.
func TestCleanFileHasNoDiagnostics(t *testing.T) {
	if d := Parse([]byte(rfcSimpleExample)).Diagnostics(); len(d) != 1 || d[0].Code != CodeInvalidLine {
		// The RFC's example ends with the word "EOF", which is no record.
		t.Errorf("Diagnostics() = %v, want only the EOF line", d)
	}
	tidy := "# comment\nuser-agent: *\nallow: /\ncrawl-delay: 1.5\nsitemap: https://e.com/s.xml\nhost: e.com\n"
	if d := Parse([]byte(tidy)).Diagnostics(); len(d) != 0 {
		t.Errorf("Diagnostics() = %v, want none", d)
	}
}

// TestRecords checks what Parse keeps besides groups: sitemaps, crawl-delay
// per group and other records.
func TestRecords(t *testing.T) {
	robots := "sitemap: https://e.com/a.xml\nuser-agent: a\nuser-agent: b\ncrawl-delay: 2.5\ndisallow: /x\n" +
		"host: e.com\nuser-agent: c\ncrawl-delay: 10\nsitemap: https://e.com/b.xml\n"
	r := Parse([]byte(robots))
	if got := r.Sitemaps(); len(got) != 2 || got[0] != "https://e.com/a.xml" || got[1] != "https://e.com/b.xml" {
		t.Errorf("Sitemaps() = %q", got)
	}
	if d := r.Group("B").CrawlDelay(); d != 2500*time.Millisecond {
		t.Errorf("Group(B).CrawlDelay() = %v, want 2.5s", d)
	}
	if d := r.Group("c").CrawlDelay(); d != 10*time.Second {
		t.Errorf("Group(c).CrawlDelay() = %v, want 10s", d)
	}
	if g := r.Group("a"); g != r.Group("b") || g.Line() != 2 || g.Kind() != NamedGroup {
		t.Errorf("groups a and b: %p %p, line %d, kind %v; want one shared group at line 2", g, r.Group("b"), g.Line(), g.Kind())
	}
	recs := r.Records()
	if len(recs) != 5 || recs[3].Key != "crawl-delay" || recs[3].GroupLine != 7 || recs[0].GroupLine != 0 {
		t.Errorf("Records() = %+v", recs)
	}
	if got := r.Tokens(); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("Tokens() = %q, want a,b,c", got)
	}
}

// TestVerdictExplains checks every field of a Verdict.
func TestVerdictExplains(t *testing.T) {
	robots := "user-agent: *\ndisallow: /private\n\nuser-agent: FooBot\nallow: /private/ok\n\nuser-agent: foobot\ndisallow: /private\n"
	r := Parse([]byte(robots))
	cases := []struct {
		agent, target string
		want          Verdict
	}{
		{"FooBot", "/private/x", Verdict{Allowed: false, Reason: ReasonRule, GroupLine: 7, Group: NamedGroup,
			Rule: Rule{Allow: false, Pattern: "/private", Line: 8, GroupLine: 7}}},
		{"FooBot", "/private/ok", Verdict{Allowed: true, Reason: ReasonRule, GroupLine: 4, Group: NamedGroup,
			Rule: Rule{Allow: true, Pattern: "/private/ok", Line: 5, GroupLine: 4}}},
		{"FooBot", "/public", Verdict{Allowed: true, Reason: ReasonNoRule, GroupLine: 4, Group: NamedGroup}},
		{"BarBot", "/private", Verdict{Allowed: false, Reason: ReasonRule, GroupLine: 1, Group: WildcardGroup,
			Rule: Rule{Allow: false, Pattern: "/private", Line: 2, GroupLine: 1}}},
		{"BarBot", "/robots.txt", Verdict{Allowed: true, Reason: ReasonRobotsTxt}},
	}
	for _, c := range cases {
		if got := r.Decide(c.agent, c.target); got != c.want {
			t.Errorf("Decide(%q, %q) = %+v, want %+v", c.agent, c.target, got, c.want)
		}
	}
	if got := Parse([]byte("user-agent: a\ndisallow: /\n")).Decide("b", "/"); got != (Verdict{Allowed: true, Reason: ReasonNoGroup}) {
		t.Errorf("Decide with no group = %+v", got)
	}
}
