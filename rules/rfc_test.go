package rules

import "testing"

// decideCase is one row of a table test: a robots.txt, an agent, a target
// and the expected answer, with the source of the expectation.
type decideCase struct {
	ref    string // "RFC 9309 §x" or "Google-compatible: ..."
	robots string
	agent  string
	target string
	want   bool
}

func runDecideCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, c := range cases {
		r := Parse([]byte(c.robots))
		if got := r.Allowed(c.agent, c.target); got != c.want {
			t.Errorf("[%s] Allowed(%q, %q) = %v, want %v\nrobots.txt:\n%s\nverdict: %+v",
				c.ref, c.agent, c.target, got, c.want, c.robots, r.Decide(c.agent, c.target))
		}
	}
}

// rfcSimpleExample is the file of RFC 9309 §5.1.
const rfcSimpleExample = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`

// TestRFCSimpleExample checks each group of RFC 9309 §5.1 as its prose
// describes it.
func TestRFCSimpleExample(t *testing.T) {
	const ref = "RFC 9309 §5.1"
	cases := []decideCase{
		// "*": allows /publications/, restricts /example/ and any .gif.
		{ref, rfcSimpleExample, "OtherBot", "/publications/a.html", true},
		{ref, rfcSimpleExample, "OtherBot", "/example/x", false},
		{ref, rfcSimpleExample, "OtherBot", "/images/a.gif", false},
		{ref, rfcSimpleExample, "OtherBot", "/a.gif?x=1", true}, // "$": .gif must end the path
		{ref, rfcSimpleExample, "OtherBot", "/elsewhere", true},
		// foobot: only /example/page.html and /example/allowed.gif.
		{ref, rfcSimpleExample, "foobot", "/example/page.html", true},
		{ref, rfcSimpleExample, "foobot", "/example/allowed.gif", true},
		{ref, rfcSimpleExample, "FooBot", "/example/other.html", false},
		{ref, rfcSimpleExample, "foobot", "/", false},
		{ref, rfcSimpleExample, "foobot", "/publications/", false},
		// barbot and bazbot: all but /example/page.html.
		{ref, rfcSimpleExample, "barbot", "/example/page.html", false},
		{ref, rfcSimpleExample, "bazbot", "/example/page.html", false},
		{ref, rfcSimpleExample, "barbot", "/example/other.html", true},
		{ref, rfcSimpleExample, "bazbot", "/images/a.gif", true}, // the "*" group does not apply
		// quxbot: an empty group, unrestricted.
		{ref, rfcSimpleExample, "quxbot", "/example/page.html", true},
		{ref, rfcSimpleExample, "quxbot", "/a.gif", true},
	}
	runDecideCases(t, cases)
}

// TestRFCLongestMatch is RFC 9309 §5.2: the longer disallow beats the
// shorter allow.
func TestRFCLongestMatch(t *testing.T) {
	const robots = "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
	r := Parse([]byte(robots))
	v := r.Decide("foobot", "/example/page/disallowed.gif")
	if v.Allowed || v.Rule.Line != 3 || v.Rule.Pattern != "/example/page/disallowed.gif" {
		t.Errorf("Decide(foobot, /example/page/disallowed.gif) = %+v, want disallowed by line 3", v)
	}
	if v := r.Decide("foobot", "/example/page/other.gif"); !v.Allowed || v.Rule.Line != 2 {
		t.Errorf("Decide(foobot, /example/page/other.gif) = %+v, want allowed by line 2", v)
	}
}

// TestRFCGroupTables checks the two tables of RFC 9309 §2.2.1: groups with
// the same token merge, and "*" applies only when no group names the agent.
func TestRFCGroupTables(t *testing.T) {
	const ref = "RFC 9309 §2.2.1"
	merged := "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n"
	global := "user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n"
	runDecideCases(t, []decideCase{
		{ref, merged, "ExampleBot", "/foo", false},
		{ref, merged, "ExampleBot", "/bar", false},
		{ref, merged, "examplebot", "/baz", false},
		{ref, merged, "ExampleBot", "/qux", true},
		{ref, global, "ExampleBot", "/foo", false},
		{ref, global, "ExampleBot", "/baz", true},
		{ref, global, "BazBot", "/foo", true},
		{ref, global, "BazBot", "/baz", false},
		// No named group and no "*" group: no rules apply.
		{ref, "user-agent: BazBot\ndisallow: /\n", "ExampleBot", "/x", true},
		{ref, "", "ExampleBot", "/x", true},
	})
}

// TestRFCEncodingTable checks the table of RFC 9309 §2.2.2 and that of
// §2.2.3: each rule matches the URI written in the other encoding.
func TestRFCEncodingTable(t *testing.T) {
	const ref = "RFC 9309 §2.2.2"
	cases := []struct{ pattern, uri string }{
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%E3%83%84", "/foo/bar/ツ"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
		{"/foo/bar/baz", "/foo/bar/%62%61%7A"},
		// RFC 9309 §2.2.3: a special character written percent-encoded
		// matches the character itself.
		{"/path/file-with-a-%2A.html", "https://www.example.com/path/file-with-a-*.html"},
		{"/path/foo-%24", "https://www.example.com/path/foo-$"},
	}
	for _, c := range cases {
		robots := "user-agent: *\ndisallow: " + c.pattern + "\n"
		// The second row keeps the first honest: the rule must not match
		// everything.
		runDecideCases(t, []decideCase{
			{ref, robots, "AnyBot", c.uri, false},
			{ref, robots, "AnyBot", "/other", true},
		})
	}
}
