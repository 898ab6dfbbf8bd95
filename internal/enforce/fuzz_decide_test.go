package enforce

import (
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
)

// FuzzDecision checks that a whole decision never panics, whatever the
// robots.txt, User-Agent header and target, and that it is deterministic
// and honours the rules that hold for every input.
func FuzzDecision(f *testing.F) {
	f.Add(decideRobots, testua.GPTBot, "/private/x")
	f.Add(decideRobots, testua.Chrome, "/pub/..%2Fprivate/x")
	f.Add("User-agent: *\nDisallow: /\n", "", "*")
	f.Add("User-agent: a\nDisallow: /%\n", "a/1 (((;;", "//..\\%2e%2E/%")
	f.Add(strings.Repeat("User-agent: x\n", 50), strings.Repeat("x/1 ", 300), "http://h?q#f")
	f.Fuzz(func(t *testing.T, robots, ua, target string) {
		src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{Body: robots})
		if err != nil {
			t.Fatal(err)
		}
		snap := src.Snapshot(t.Context(), "example.com")
		d := NewDecider(Policy{}, agent.NewClassifier(16))
		req := Query{Target: target, UserAgent: ua}
		var rd Readings
		first := d.Decide(snap, req, &rd)
		firstPath := strings.Clone(first.Path)
		again := d.Decide(snap, req, &rd) // now from the header cache
		if first.Allowed != again.Allowed || first.Reason != again.Reason || first.Token != again.Token ||
			firstPath != again.Path || first.Verdict != again.Verdict {
			t.Fatalf("Decide(%q, %q) not deterministic: %+v then %+v", ua, target, first, again)
		}
		if first.Reason == ReasonRobotsTxt && !first.Allowed {
			t.Fatalf("Decide(%q, %q): /robots.txt denied", ua, target)
		}
		if !first.Allowed && first.Reason != ReasonNamedGroup && first.Reason != ReasonWildcardGroup && first.Reason != ReasonUnreachable {
			t.Fatalf("Decide(%q, %q): denied with reason %v", ua, target, first.Reason)
		}
	})
}
