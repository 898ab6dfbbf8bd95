package rules

import (
	"strings"
	"testing"
)

// Fuzz seeds for statements of preference: the examples of
// draft-ietf-aipref-vocab-07 §6 and §6.5, and RFC 9651 Dictionary shapes
// (inner lists, parameters, strings, byte sequences, decimals, dates,
// display strings) with the mistakes people make.
var usageSeeds = []string{
	"train-ai=y, search=n",
	`train-ai=y, train-ai, search=n, search="n"`,
	"train-ai;allow=n, train-ai=y",
	`train-ai;has;parameters="?";`,
	"train-ai=n;a=1.5;b=:AQID:, search=(y n);c, x=@1700000000, y=%\"caf%c3%a9\"",
	"Train-AI=n", "train-ai=no", "train-ai=n,", " search = y", "search=y,\ttrain-ai=?0",
	"",
}

// FuzzParseUsage checks ParseUsage: it never panics, and a value it
// accepts serialises (String) to one it accepts again with the same
// preferences and the same serialisation (draft-ietf-aipref-vocab-07 §6:
// the header a server sends reads back as what the robots.txt said).
func FuzzParseUsage(f *testing.F) {
	for _, s := range usageSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		u, err := ParseUsage(value)
		if err != nil {
			if u.Found() || u.TrainAI != PreferenceUnknown || u.Search != PreferenceUnknown {
				t.Fatalf("ParseUsage(%q) failed (%v) but says %+v", value, err, u)
			}
			return
		}
		again, err := ParseUsage(u.String())
		if err != nil {
			t.Fatalf("ParseUsage(%q).String() = %q, which does not parse: %v", value, u.String(), err)
		}
		if again.TrainAI != u.TrainAI || again.Search != u.Search || again.String() != u.String() {
			t.Fatalf("ParseUsage(%q) = %v %v %q; its String reads back as %v %v %q",
				value, u.TrainAI, u.Search, u.String(), again.TrainAI, again.Search, again.String())
		}
	})
}

// FuzzUsageDecide checks the Content-Usage preference Decide attaches
// against refUsage, which tries every rule of the group: the longest
// matching pattern decides, those as long combine, and nothing applies to
// a disallowed target (draft-ietf-aipref-attach-05 §3.1).
func FuzzUsageDecide(f *testing.F) {
	for _, body := range []string{seedExample, attachExample,
		"user-agent: *\ncontent-usage: /a* train-ai=y\ncontent-usage: /ab search=n\ncontent-usage: /*b$ search=y\n",
		"user-agent: a\ncontent-usage: /%61 train-ai=n\ncontent-usage: train-ai=y, search=y\ndisallow: /x\n"} {
		for _, target := range []string{"/", "/ab", "/research/x", "/never/x", "/xb"} {
			f.Add(body, "a", target)
		}
	}
	for _, s := range usageSeeds {
		f.Add("user-agent: *\ncontent-usage: /a/ "+s+"\n", "a", "/a/b")
	}
	f.Fuzz(func(t *testing.T, body, agent, target string) {
		if len(target) > 2048 || len(body) > 64<<10 {
			return
		}
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		r := Parse([]byte(body))
		v := r.Decide(agent, target)
		trainAI, search, found := refUsage(r.GroupFor(agent), target)
		if !v.Allowed {
			trainAI, search, found = PreferenceUnknown, PreferenceUnknown, false
		}
		if got := v.Usage; got.Found() != found || got.TrainAI != trainAI || got.Search != search {
			t.Fatalf("Decide(%q, %q).Usage = %+v (%q), reference says found=%v train-ai=%v search=%v\nrobots.txt:\n%s",
				agent, target, got, got.String(), found, trainAI, search, body)
		}
	})
}

// refUsage finds the preference for target by trying every Content-Usage
// rule of g with refMatch and refPriority, no path read as "/".
func refUsage(g *Group, target string) (trainAI, search Preference, found bool) {
	if g == nil {
		return PreferenceUnknown, PreferenceUnknown, false
	}
	path, _, _ := strings.Cut(target, "#")
	best := -1
	for _, rule := range g.UsageRules() {
		pattern := rule.Path
		if pattern == "" {
			pattern = "/"
		}
		if !refMatch(pattern, path) {
			continue
		}
		switch p := refPriority(pattern); {
		case p > best:
			best, trainAI, search = p, rule.TrainAI, rule.Search
		case p == best:
			trainAI, search = max(trainAI, rule.TrainAI), max(search, rule.Search) // n > y > unknown
		}
	}
	return trainAI, search, best >= 0
}
