package rules_test

import (
	"fmt"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

func ExampleParse() {
	r := rules.Parse([]byte(`User-agent: *
Disallow: /private/
Allow: /private/press/

User-agent: GPTBot
Disallow: /
`))
	for _, c := range []struct{ agent, target string }{
		{"Googlebot", "/private/report"},
		{"Googlebot", "/private/press/launch.html"},
		{"gptbot", "https://example.com/blog/"},
		{"GPTBot", "/robots.txt"},
	} {
		v := r.Decide(c.agent, c.target)
		fmt.Printf("%s %s: allowed=%v (%v, %s group line %d, rule %q line %d)\n",
			c.agent, c.target, v.Allowed, v.Reason, v.Group, v.GroupLine, v.Rule.Pattern, v.Rule.Line)
	}
	// Output:
	// Googlebot /private/report: allowed=false (rule, wildcard group line 1, rule "/private/" line 2)
	// Googlebot /private/press/launch.html: allowed=true (rule, wildcard group line 1, rule "/private/press/" line 3)
	// gptbot https://example.com/blog/: allowed=false (rule, named group line 5, rule "/" line 6)
	// GPTBot /robots.txt: allowed=true (robots_txt, none group line 0, rule "" line 0)
}

func ExampleRobots_Diagnostics() {
	r := rules.Parse([]byte("Disallow: /tmp\nUser-agent: *\nDissallow: /old\nAllow private\n"))
	for _, d := range r.Diagnostics() {
		fmt.Println(d)
	}
	// Output:
	// line 1: error: rule before any user-agent line: ignored
	// line 3: warning: key "Dissallow" read as "disallow"
	// line 4: warning: no colon after "Allow": white space read as the separator
	// line 4: warning: pattern "private" does not start with "/" or "*": it matches no path
}

// Decide attaches the AI usage preference of the group's Content-Usage
// rules (draft-ietf-aipref-attach-05 §3) to what the crawler may fetch:
// the rule with the longest matching path decides, whole.
func ExampleRobots_Decide() {
	r := rules.Parse([]byte(`User-agent: *
Allow: /
Disallow: /private/
Content-Usage: train-ai=n, search=y
Content-Usage: /research/ train-ai=y
`))
	for _, target := range []string{"/blog/post.html", "/research/paper.pdf", "/private/report"} {
		v := r.Decide("ExampleBot", target)
		fmt.Printf("%s: allowed=%v usage=%q line=%d train-ai=%v search=%v\n",
			target, v.Allowed, v.Usage, v.Usage.Line(), v.Usage.TrainAI, v.Usage.Search)
	}
	// Output:
	// /blog/post.html: allowed=true usage="train-ai=n, search=y" line=4 train-ai=n search=y
	// /research/paper.pdf: allowed=true usage="train-ai=y" line=5 train-ai=y search=unknown
	// /private/report: allowed=false usage="" line=0 train-ai=unknown search=unknown
}

// A Content-Signal line (contentsignals.org) is read into the AIPREF
// vocabulary and combined with the group's Content-Usage rules, any n
// winning (draft-ietf-aipref-vocab-08 §5.1); Rules says which line of
// which kind stated each part.
func ExampleUsage_Rules() {
	r := rules.Parse([]byte(`User-agent: *
Allow: /
Content-Signal: search=yes, ai-train=no, ai-input=no
Content-Usage: /research/ train-ai=y, search=y
`))
	u := r.Decide("ExampleBot", "/research/paper.pdf").Usage
	fmt.Println(u)
	for _, rule := range u.Rules() {
		fmt.Printf("line %d (%v): train-ai=%v ai-use=%v search=%v\n", rule.Line, rule.Kind, rule.TrainAI, rule.AIUse, rule.Search)
	}
	// Output:
	// train-ai=n, ai-use=n, search=y
	// line 3 (Content-Signal): train-ai=n ai-use=n search=y
	// line 4 (Content-Usage): train-ai=y ai-use=unknown search=y
}

// ParseUsage reads a Content-Usage header field
// (draft-ietf-aipref-attach-05 §2); CombineUsage joins it with what
// robots.txt says, the most restrictive preference winning
// (draft-ietf-aipref-vocab-08 §5.1).
func ExampleParseUsage() {
	header, err := rules.ParseUsage("search=y, train-ai=y")
	if err != nil {
		fmt.Println(err)
		return
	}
	robots := rules.Parse([]byte("User-agent: *\nContent-Usage: train-ai=n\n")).Decide("ExampleBot", "/a").Usage
	fmt.Println(rules.CombineUsage(header, robots))
	_, err = rules.ParseUsage("Train-AI=n")
	fmt.Println(err != nil)
	// Output:
	// train-ai=n, search=y
	// true
}

// DecideCanonical decides a path already in canonical form, as a caller
// that reads a request target more than one way writes each reading with
// AppendCanonical.
func ExampleGroup_DecideCanonical() {
	g := rules.Parse([]byte("User-agent: *\nDisallow: /private/\n")).Wildcard()
	var buf [64]byte
	for _, p := range []string{"/%70rivate/a", "/public/%7Euser"} {
		path := string(rules.AppendCanonical(buf[:0], p))
		fmt.Printf("%s as %s: allowed=%v\n", p, path, g.DecideCanonical(path).Allowed)
	}
	// Output:
	// /%70rivate/a as /private/a: allowed=false
	// /public/%7Euser as /public/~user: allowed=true
}
