package rules

import (
	"strings"
	"testing"
)

// The tests in this file check each point of the matching profile: RFC 9309
// where it is explicit, Google's parser where the RFC is silent. Each row
// names its source.

func TestProfileRobotsTxtAlwaysAllowed(t *testing.T) {
	const ref = "RFC 9309 §2.2.2: /robots.txt is implicitly allowed"
	robots := "user-agent: *\ndisallow: /\ndisallow: /robots.txt\n"
	runDecideCases(t, []decideCase{
		{ref, robots, "AnyBot", "/robots.txt", true},
		{ref, robots, "AnyBot", "https://example.com/robots.txt", true},
		{ref, robots, "AnyBot", "/robots.txt?v=2", true},
		{ref, robots, "AnyBot", "/robots%2Etxt", true}, // "." is unreserved: decoded first
		{ref, robots, "AnyBot", "/robots.txt2", false},
		{ref, robots, "AnyBot", "/sub/robots.txt", false},
	})
	if v := Parse([]byte(robots)).Decide("AnyBot", "/robots.txt"); v.Reason != ReasonRobotsTxt {
		t.Errorf("Decide(/robots.txt).Reason = %v, want %v", v.Reason, ReasonRobotsTxt)
	}
}

func TestProfilePercentEncoding(t *testing.T) {
	const ref = "RFC 9309 §2.2.2: percent-encoding"
	runDecideCases(t, []decideCase{
		// Unreserved characters are decoded in both the rule and the target.
		{ref, "user-agent: *\ndisallow: /%61bc\n", "A", "/abc", false},
		{ref, "user-agent: *\ndisallow: /abc\n", "A", "/%61bc", false},
		{ref, "user-agent: *\ndisallow: /%7Euser\n", "A", "/~user", false},
		// Octets outside ASCII are encoded in both.
		{ref, "user-agent: *\ndisallow: /café\n", "A", "/caf%C3%A9", false},
		{ref, "user-agent: *\ndisallow: /caf%C3%A9\n", "A", "/café", false},
		{ref, "user-agent: *\ndisallow: /caf%c3%a9\n", "A", "/café", false},
		// Reserved characters stay encoded: %2F is not "/".
		{ref, "user-agent: *\ndisallow: /a/b\n", "A", "/a%2Fb", true},
		{ref, "user-agent: *\ndisallow: /a%2Fb\n", "A", "/a/b", true},
		{ref, "user-agent: *\ndisallow: /a%2Fb\n", "A", "/a%2Fb", false},
		{ref, "user-agent: *\ndisallow: /a?b=c\n", "A", "/a%3Fb=c", true},
		// Hex digits compare case-insensitively.
		{ref, "user-agent: *\ndisallow: /a%2fb\n", "A", "/a%2Fb", false},
		{ref, "user-agent: *\ndisallow: /a%2Fb\n", "A", "/a%2fb", false},
		// A "%" that starts no escape is an ordinary octet.
		{ref, "user-agent: *\ndisallow: /100%x\n", "A", "/100%x", false},
		{ref, "user-agent: *\ndisallow: /100%x\n", "A", "/100%25x", true},
		// RFC 9309 §2.2.3: "%2A" and "%24" are the octets "*" and "$", not
		// a wildcard or an anchor.
		{ref, "user-agent: *\ndisallow: /a%2Ab\n", "A", "/a*b", false},
		{ref, "user-agent: *\ndisallow: /a%2Ab\n", "A", "/a%2ab", false},
		{ref, "user-agent: *\ndisallow: /a%2Ab\n", "A", "/axb", true},
		{ref, "user-agent: *\ndisallow: /a%24\n", "A", "/a$", false},
		{ref, "user-agent: *\ndisallow: /a%24\n", "A", "/a$b", false}, // not an anchor
	})
}

func TestProfileGroups(t *testing.T) {
	runDecideCases(t, []decideCase{
		{"RFC 9309 §2.2.1: a named group replaces * entirely",
			"user-agent: *\ndisallow: /a\n\nuser-agent: FooBot\ndisallow: /b\n", "FooBot", "/a", true},
		{"RFC 9309 §2.2.1: a named group with no rules still replaces *",
			"user-agent: FooBot\n\nuser-agent: BarBot\ndisallow: /\n\nuser-agent: *\ndisallow: /\n", "FooBot", "/x", false},
		{"RFC 9309 §2.2.1: agents compare case-insensitively",
			"USER-AGENT: FOOBOT\ndisallow: /\n", "foobot", "/x", false},
		{"RFC 9309 §2.2.2: rules before the first user-agent line are ignored",
			"disallow: /\nuser-agent: FooBot\ndisallow: /b\n", "FooBot", "/a", true},
		{"RFC 9309 §2.2.2: an empty disallow is no rule",
			"user-agent: *\ndisallow:\n", "A", "/", true},
		{"RFC 9309 §2.2.2: an empty disallow does not end the group's reach",
			"user-agent: FooBot\ndisallow:\n\nuser-agent: *\ndisallow: /\n", "FooBot", "/", true},
		{"RFC 9309 §2.2.2: paths are case-sensitive",
			"user-agent: *\ndisallow: /Private\n", "A", "/private", true},
		{"RFC 9309 §2.2.2: paths are case-sensitive",
			"user-agent: *\ndisallow: /Private\n", "A", "/Private/x", false},
		{"RFC 9309 §2.2: keys are case-insensitive",
			"USER-AGENT: *\nDISALLOW: /a\nAlLoW: /a/b\n", "A", "/a/c", false},
		{"RFC 9309 §2.2: keys are case-insensitive",
			"USER-AGENT: *\nDISALLOW: /a\nAlLoW: /a/b\n", "A", "/a/b", true},
		{"RFC 9309 §2.2.2: allow wins a tie",
			"user-agent: *\ndisallow: /a\nallow: /a\n", "A", "/a", true},
		{"RFC 9309 §2.2.2: allow wins a tie, in either order",
			"user-agent: *\nallow: /a\ndisallow: /a\n", "A", "/a", true},
		{"RFC 9309 §2.2.2: allow wins a tie of equal length",
			"user-agent: *\ndisallow: /a*\nallow: /a$\n", "A", "/a", true},
	})
}

func TestProfileGoogleLineSyntax(t *testing.T) {
	const ref = "Google-compatible: line syntax"
	var cases []decideCase
	for _, k := range []string{"user-agent", "useragent", "user agent", "User-Agent", "user-agents"} {
		cases = append(cases, decideCase{ref + ": user-agent spelling " + k, k + ": FooBot\ndisallow: /\n", "FooBot", "/x", false})
	}
	for _, k := range []string{"disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw", "DISALLOW"} {
		cases = append(cases, decideCase{ref + ": disallow spelling " + k, "user-agent: FooBot\n" + k + ": /\n", "FooBot", "/x", false})
	}
	cases = append(cases,
		decideCase{ref + ": a misspelling that is not accepted", "user-agent: FooBot\ndisalloww /\n", "FooBot", "/x", false},
		decideCase{ref + ": unknown typo is ignored", "user-agent: FooBot\ndsallow: /\n", "FooBot", "/x", true},
		decideCase{ref + ": missing colon", "user-agent FooBot\ndisallow /\n", "FooBot", "/x", false},
		decideCase{ref + ": missing colon only between exactly two words", "user-agent: FooBot\ndisallow / x\n", "FooBot", "/x", true},
		decideCase{ref + ": comment after a value", "user-agent: FooBot # our bot\ndisallow: /a # private\n", "FooBot", "/a", false},
		decideCase{ref + ": white space around the colon", "user-agent   :   FooBot\ndisallow \t: /a\n", "FooBot", "/a", false},
	)
	runDecideCases(t, cases)
}

func TestProfileGoogleUserAgentValue(t *testing.T) {
	const ref = "Google-compatible: user-agent value"
	runDecideCases(t, []decideCase{
		{ref + ": leading [A-Za-z_-] run", "user-agent: Foo Bot/1.0\ndisallow: /\n", "Foo", "/x", false},
		{ref + ": leading [A-Za-z_-] run", "user-agent: Foo Bot/1.0\ndisallow: /\n", "FooBot", "/x", true},
		{ref + ": leading [A-Za-z_-] run", "user-agent: FooBot/2.1\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": digits end the token", "user-agent: AB42bot\ndisallow: /\n", "AB", "/x", false},
		{ref + ": hyphen and underscore are token octets", "user-agent: Foo-Bar_Bot\ndisallow: /\n", "foo-bar_bot", "/x", false},
		{ref + ": * alone is global", "user-agent: *\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": * then white space is global", "user-agent: * # all\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": * then white space is global", "user-agent: * everyone\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": *Bot is not global", "user-agent: *Bot\ndisallow: /\n", "FooBot", "/x", true},
		{ref + ": a value with no token names nobody", "user-agent: 123\ndisallow: /\n", "", "/x", true},
	})
}

func TestProfileGoogleGroupBoundaries(t *testing.T) {
	const ref = "Google-compatible: what does not split a group"
	runDecideCases(t, []decideCase{
		{ref + ": blank lines", "user-agent: FooBot\n\n\nuser-agent: BarBot\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": comments", "user-agent: FooBot\n# note\nuser-agent: BarBot\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": sitemap", "user-agent: FooBot\nsitemap: https://e.com/s.xml\nuser-agent: BarBot\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": crawl-delay", "user-agent: FooBot\ncrawl-delay: 5\nuser-agent: BarBot\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": unknown record", "user-agent: FooBot\nfoo: bar\nuser-agent: BarBot\ndisallow: /\n", "FooBot", "/x", false},
		{ref + ": a rule line does split", "user-agent: FooBot\ndisallow: /a\nuser-agent: BarBot\ndisallow: /\n", "FooBot", "/x", true},
		{ref + ": an empty rule line splits too", "user-agent: FooBot\ndisallow:\nuser-agent: BarBot\ndisallow: /\n", "FooBot", "/x", true},
	})
}

// TestPreferenceLinesJoinAgents checks the deviation docs/rfc9309.md lists
// under "Deviations": a Content-Usage or Content-Signal line between
// user-agent lines does not end the group, although
// draft-ietf-aipref-attach-05 §3 makes Content-Usage a rule. RFC 9309 §2.2
// has no place for other records in a group and §2.2.4 leaves them to the
// crawler; Google's parser skips both lines, so the file below makes one
// group that keeps FooBot out of /x. Access must not depend on whether the
// reader knows AIPREF; the preference then applies to every agent of the
// group, and the parser warns.
func TestPreferenceLinesJoinAgents(t *testing.T) {
	const ref = "docs/rfc9309.md, Deviations: a usage preference line does not end a run of user-agent lines"
	for _, line := range []string{"Content-Usage: train-ai=n", "Content-Signal: ai-train=no", "content-usage: /a/ train-ai=n"} {
		robots := "User-agent: FooBot\n" + line + "\nUser-agent: *\nDisallow: /x\n"
		runDecideCases(t, []decideCase{
			{ref, robots, "FooBot", "/x", false},
			{ref, robots, "OtherBot", "/x", false},
			{ref, robots, "FooBot", "/a/y", true},
		})
		r := Parse([]byte(robots))
		if len(r.Groups()) != 1 || r.Group("FooBot").Line() != 1 || r.Wildcard().Line() != 1 {
			t.Errorf("[%s] %q: %d groups, want one naming FooBot and *", ref, robots, len(r.Groups()))
		}
		if u := r.Decide("OtherBot", "/a/y").Usage; u.TrainAI != PreferenceDisallowed || u.Line() != 2 {
			t.Errorf("[%s] %q: OtherBot's preference = %q line %d, want train-ai=n from line 2", ref, robots, u, u.Line())
		}
		if d := findDiag(r, CodeUsageBetweenAgents); d == nil || d.Line != 3 || d.Severity != Warning {
			t.Errorf("[%s] %q: diagnostics %v, want a %s warning on line 3", ref, robots, r.Diagnostics(), CodeUsageBetweenAgents)
		}
	}
	// After an allow or disallow line, a user-agent line starts a new
	// group as always, and nothing is reported.
	robots := "User-agent: FooBot\nContent-Usage: train-ai=n\nAllow: /\nUser-agent: *\nDisallow: /x\n"
	runDecideCases(t, []decideCase{{"RFC 9309 §2.2", robots, "FooBot", "/x", true}, {"RFC 9309 §2.2", robots, "OtherBot", "/x", false}})
	if d := Parse([]byte(robots)).Diagnostics(); len(d) != 0 {
		t.Errorf("[RFC 9309 §2.2] %q: diagnostics %v, want none", robots, d)
	}
}

func TestProfileGoogleLineEnds(t *testing.T) {
	const ref = "Google-compatible: line ends and byte order mark"
	var cases []decideCase
	for name, eol := range map[string]string{"LF": "\n", "CR": "\r", "CRLF": "\r\n"} {
		robots := "user-agent: FooBot" + eol + "disallow: /a" + eol + "allow: /a/b" + eol
		cases = append(cases,
			decideCase{ref + ": " + name, robots, "FooBot", "/a/c", false},
			decideCase{ref + ": " + name, robots, "FooBot", "/a/b", true})
	}
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF"} {
		cases = append(cases, decideCase{ref + ": BOM prefix", bom + "user-agent: FooBot\ndisallow: /\n", "FooBot", "/x", false})
	}
	// A BOM anywhere but at the start spoils the key it stands before.
	cases = append(cases, decideCase{ref + ": BOM later", "user-agent: FooBot\n\xEF\xBB\xBFdisallow: /\n", "FooBot", "/x", true})
	runDecideCases(t, cases)

	// Line numbers follow Google's count: CRLF is one line end.
	r := Parse([]byte("user-agent: a\r\n\r\ndisallow: /x\rallow: /y\n"))
	rules := r.GroupFor("a").Rules()
	if len(rules) != 2 || rules[0].Line != 3 || rules[1].Line != 4 {
		t.Errorf("rule lines = %+v, want lines 3 and 4", rules)
	}
}

func TestProfileGoogleWildcardsAndPriority(t *testing.T) {
	const ref = "Google-compatible: patterns"
	runDecideCases(t, []decideCase{
		{ref + ": $ is special only at the end", "user-agent: *\ndisallow: /a$b\n", "A", "/a$b", false},
		{ref + ": $ is special only at the end", "user-agent: *\ndisallow: /a$b\n", "A", "/a", true},
		{ref + ": $ at the end anchors", "user-agent: *\ndisallow: /a$\n", "A", "/ab", true},
		{ref + ": $ at the end anchors", "user-agent: *\ndisallow: /a$\n", "A", "/a", false},
		{"RFC 9309 §2.2.3: * matches any octets, / included", "user-agent: *\ndisallow: /a*c\n", "A", "/ab/b/c", false},
		{"RFC 9309 §2.2.3: * matches zero octets", "user-agent: *\ndisallow: /a*c\n", "A", "/ac", false},
		{"RFC 9309 §2.2.3: * then $", "user-agent: *\ndisallow: /*.pdf$\n", "A", "/x/y.pdf", false},
		{"RFC 9309 §2.2.3: * then $", "user-agent: *\ndisallow: /*.pdf$\n", "A", "/x/y.pdf?z", true},
		{ref + ": priority is the pattern's length, * included", "user-agent: *\nallow: /fish\ndisallow: /fish*\n", "A", "/fish", false},
		{ref + ": priority is the normalised length", "user-agent: *\nallow: /abc\ndisallow: /%61b\n", "A", "/abc", true},
		{ref + ": priority counts an encoded octet as three", "user-agent: *\nallow: /caf\ndisallow: /é\n", "A", "/é", false},
		{ref + ": index.html allows the directory", "user-agent: *\ndisallow: /\nallow: /dir/index.html\n", "A", "/dir/", true},
		{ref + ": index.htm allows the directory", "user-agent: *\ndisallow: /\nallow: /dir/index.htm\n", "A", "/dir/", true},
		{ref + ": only the directory itself", "user-agent: *\ndisallow: /\nallow: /dir/index.html\n", "A", "/dir/other", false},
		{ref + ": only for allow", "user-agent: *\ndisallow: /dir/index.html\n", "A", "/dir/", true},
	})
}

func TestProfileGoogleLongLine(t *testing.T) {
	const ref = "Google-compatible: a line is cut at 16,663 octets"
	long := "/" + strings.Repeat("a", MaxLineLength)
	prefix := "disallow: "
	kept := long[:MaxLineLength-len(prefix)]
	robots := "user-agent: *\n" + prefix + long + "\n"
	runDecideCases(t, []decideCase{
		// The rule is cut to the octets kept, so it matches a path that
		// only shares those.
		{ref, robots, "A", kept, false},
		{ref, robots, "A", kept[:len(kept)-1], true},
	})
	if d := findDiag(Parse([]byte(robots)), CodeLineTooLong); d == nil || d.Line != 2 {
		t.Errorf("no %s diagnostic on line 2: %v", CodeLineTooLong, Parse([]byte(robots)).Diagnostics())
	}
}

func TestProfileSizeLimit(t *testing.T) {
	const ref = "RFC 9309 §2.5: at least 500 KiB are parsed"
	// The limit cuts "disallow: /bc" after "disallow: /b", which must not
	// be read as a rule.
	var b strings.Builder
	b.WriteString("user-agent: *\ndisallow: /a\n")
	cutAt := DefaultMaxSize - len("disallow: /b")
	for cutAt-b.Len() > 200 {
		b.WriteString("#" + strings.Repeat("x", 98) + "\n")
	}
	b.WriteString("#" + strings.Repeat("x", cutAt-b.Len()-2) + "\n")
	b.WriteString("disallow: /bc\ndisallow: /z\n")
	body := b.String()
	r := Parse([]byte(body))
	if !r.Truncated() || r.Size() != len(body) {
		t.Fatalf("Truncated() = %v, Size() = %d; want true, %d", r.Truncated(), r.Size(), len(body))
	}
	runDecideCases(t, []decideCase{
		{ref, body, "A", "/a", false},
		{ref + ": the cut line is dropped", body, "A", "/b", true},
		{ref + ": content past the limit is dropped", body, "A", "/z", true},
	})
	if findDiag(r, CodeSizeLimit) == nil {
		t.Errorf("no %s diagnostic: %v", CodeSizeLimit, r.Diagnostics())
	}
	// A larger limit reads the whole file.
	big := ParseWith([]byte(body), Options{MaxSize: 2 * DefaultMaxSize})
	if big.Truncated() || big.Allowed("A", "/z") {
		t.Errorf("with MaxSize %d: Truncated() = %v, Allowed(/z) = %v; want false, false",
			2*DefaultMaxSize, big.Truncated(), big.Allowed("A", "/z"))
	}
}

func TestProfileTargets(t *testing.T) {
	const ref = "target forms"
	robots := "user-agent: *\ndisallow: /a?b\ndisallow: /c$\n"
	runDecideCases(t, []decideCase{
		{ref + ": absolute URL", robots, "A", "https://example.com/a?b=1", false},
		{ref + ": absolute URL with port and user", robots, "A", "http://u:p@example.com:8080/a?b", false},
		{ref + ": the query is kept", robots, "A", "/a?c", true},
		{ref + ": the fragment is ignored", robots, "A", "/c#frag", false},
		{ref + ": the fragment is ignored", robots, "A", "https://example.com/c#x", false},
		{ref + ": an empty path is /", "user-agent: *\ndisallow: /$\n", "A", "https://example.com", false},
		{ref + ": an empty target is /", "user-agent: *\ndisallow: /$\n", "A", "", false},
		{ref + ": origin-form with an empty first segment", "user-agent: *\ndisallow: //x\n", "A", "//x/y", false},
	})
}

func findDiag(r *Robots, code string) *Diagnostic {
	for _, d := range r.Diagnostics() {
		if d.Code == code {
			return &d
		}
	}
	return nil
}
