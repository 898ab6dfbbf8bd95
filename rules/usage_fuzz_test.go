package rules

import (
	"strings"
	"testing"
)

// Fuzz seeds for statements of preference: the examples of
// draft-ietf-aipref-vocab-08 §6 and §6.5, and RFC 9651 Dictionary shapes
// (inner lists, parameters, strings, byte sequences, decimals, dates,
// display strings) with the mistakes people make.
var usageSeeds = []string{
	"train-ai=y, search=n",
	`train-ai=y, train-ai, search=n, search="n"`,
	"train-ai;allow=n, train-ai=y",
	`train-ai;has;parameters="?";`,
	"train-ai=n;a=1.5;b=:AQID:, search=(y n);c, x=@1700000000, y=%\"caf%c3%a9\"",
	"Train-AI=n", "train-ai=no", "train-ai=n,", " search = y", "search=y,\ttrain-ai=?0",
	"ai-use=n, train-ai=y, search=y", "ai-use=y;x=1, ai-use",
	"",
}

// signalSeeds are Content-Signal values (contentsignals.org), as written
// in the wild and as mistyped.
var signalSeeds = []string{
	"search=yes, ai-train=no", "search=yes,ai-train=no,use=reference", "ai-train=no, search=yes, ai-input=yes",
	"Search=Yes, AI-Train=NO", "ai-train = no ; search=yes", "ai-train=n, search=y", "ai-train=no, ai-train=yes",
	"use=full, use=nope", "x=1, =2, search", "/blog/ ai-input=no", "",
}

// FuzzParseUsage checks ParseUsage: it never panics, and a value it
// accepts serialises (String) to one it accepts again with the same
// preferences and the same serialisation (draft-ietf-aipref-vocab-08 §6:
// the header a server sends reads back as what the robots.txt said).
func FuzzParseUsage(f *testing.F) {
	for _, s := range usageSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		u, err := ParseUsage(value)
		if err != nil {
			if u.Found() || u.TrainAI != PreferenceUnknown || u.AIUse != PreferenceUnknown || u.Search != PreferenceUnknown {
				t.Fatalf("ParseUsage(%q) failed (%v) but says %+v", value, err, u)
			}
			return
		}
		again, err := ParseUsage(u.String())
		if err != nil {
			t.Fatalf("ParseUsage(%q).String() = %q, which does not parse: %v", value, u.String(), err)
		}
		if again.TrainAI != u.TrainAI || again.AIUse != u.AIUse || again.Search != u.Search || again.String() != u.String() {
			t.Fatalf("ParseUsage(%q) = %v %v %v %q; its String reads back as %v %v %v %q",
				value, u.TrainAI, u.AIUse, u.Search, u.String(), again.TrainAI, again.AIUse, again.Search, again.String())
		}
	})
}

// FuzzUsageDecide checks the preference Decide attaches against
// refUsage, which tries every rule of the group: for each kind of line the
// longest matching pattern decides and those as long combine, the two
// kinds combine, and nothing applies to a disallowed target
// (draft-ietf-aipref-attach-05 §3.1, draft-ietf-aipref-vocab-08 §5.1). It
// also checks that UsageCanonical, the handler's form, says the same.
func FuzzUsageDecide(f *testing.F) {
	for _, body := range []string{seedExample, attachExample,
		"user-agent: *\ncontent-usage: /a* train-ai=y\ncontent-usage: /ab search=n\ncontent-usage: /*b$ search=y\n",
		"user-agent: a\ncontent-usage: /%61 train-ai=n\ncontent-usage: train-ai=y, search=y\ndisallow: /x\n",
		"user-agent: *\ncontent-signal: search=yes, ai-train=no\ncontent-usage: /research/ train-ai=y, ai-use=y\ncontent-signal: /ab ai-input=no\n",
		"user-agent: a\ncontent-signal: /a* ai-train=yes\ncontent-signal: /ab search=no\ncontent-usage: /ab search=y\n"} {
		for _, target := range []string{"/", "/ab", "/research/x", "/never/x", "/xb"} {
			f.Add(body, "a", target)
		}
	}
	for _, s := range usageSeeds {
		f.Add("user-agent: *\ncontent-usage: /a/ "+s+"\n", "a", "/a/b")
	}
	for _, s := range signalSeeds {
		f.Add("user-agent: *\ncontent-signal: "+s+"\ncontent-usage: /a/ train-ai=y\n", "a", "/a/b")
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
		want, found := refUsage(r.GroupFor(agent), target)
		if !v.Allowed {
			want, found = [3]Preference{}, false
		}
		got := v.Usage
		if got.Found() != found || [3]Preference{got.TrainAI, got.AIUse, got.Search} != want {
			t.Fatalf("Decide(%q, %q).Usage = %+v (%q), reference says found=%v train-ai, ai-use, search = %v\nrobots.txt:\n%s",
				agent, target, got, got.String(), found, want, body)
		}
		if g := r.GroupFor(agent); v.Allowed && g != nil && !strings.Contains(target, "#") {
			c := g.UsageCanonical(canonicalTargetString(target))
			if c.String() != got.String() || c.Line() != got.Line() || c.TrainAI != got.TrainAI || c.AIUse != got.AIUse || c.Search != got.Search {
				t.Fatalf("UsageCanonical(%q) = %q line %d, Decide says %q line %d\nrobots.txt:\n%s", target, c, c.Line(), got, got.Line(), body)
			}
		}
	})
}

// refUsage finds the preference for target by trying every rule of g with
// refMatch and refPriority, no path read as "/", for each kind of line,
// and combining the kinds: n > y > unknown.
func refUsage(g *Group, target string) (prefs [3]Preference, found bool) {
	if g == nil {
		return prefs, false
	}
	path, _, _ := strings.Cut(target, "#")
	best := [2]int{-1, -1}
	var byKind [2][3]Preference
	for _, rule := range g.UsageRules() {
		pattern := rule.Path
		if pattern == "" {
			pattern = "/"
		}
		if !refMatch(pattern, path) {
			continue
		}
		k, rp := rule.Kind, [3]Preference{rule.TrainAI, rule.AIUse, rule.Search}
		switch p := refPriority(pattern); {
		case p > best[k]:
			best[k], byKind[k] = p, rp
		case p == best[k]:
			for i := range rp {
				byKind[k][i] = max(byKind[k][i], rp[i])
			}
		}
	}
	for i := range prefs {
		prefs[i] = max(byKind[0][i], byKind[1][i])
	}
	return prefs, best[0] >= 0 || best[1] >= 0
}
