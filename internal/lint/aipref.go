package lint

// Checks of AI usage preferences beyond what the parser reports: how each
// Content-Signal line (contentsignals.org) is read, and Content-Signal and
// Content-Usage lines (draft-ietf-aipref-attach-05 §3) of one group that
// say opposite things of a category.

import (
	"fmt"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// categories names the categories of draft-ietf-aipref-vocab-08 §6.1 with
// the Content-Signal key read as each, in the vocabulary's order.
var categories = []struct {
	label, signal string
	of            func(rules.UsageRule) rules.Preference
}{
	{rules.LabelTrainAI, "ai-train", func(r rules.UsageRule) rules.Preference { return r.TrainAI }},
	{rules.LabelAIUse, "ai-input", func(r rules.UsageRule) rules.Preference { return r.AIUse }},
	{rules.LabelSearch, "search", func(r rules.UsageRule) rules.Preference { return r.Search }},
}

// statedAs writes what a rule says in the vocabulary ("train-ai=n,
// search=y"), or "" when it says nothing.
func statedAs(r rules.UsageRule) string {
	var parts []string
	for _, c := range categories {
		if p := c.of(r); p != rules.PreferenceUnknown {
			parts = append(parts, c.label+"="+p.String())
		}
	}
	return strings.Join(parts, ", ")
}

// contentSignals says, at each Content-Signal line in a group, how the
// module reads it: the preference it adds to responses, combined with the
// group's Content-Usage rules. Crawlers that follow AIPREF read only
// Content-Usage, so where the group has no Content-Usage line for the same
// path, the finding gives the one that says the same.
func (l *linter) contentSignals() {
	for _, g := range l.groups {
		usagePaths := map[string]bool{}
		for _, r := range g.Usage {
			if r.Kind == rules.ContentUsage {
				usagePaths[pathOrRoot(r.Path)] = true
			}
		}
		for _, r := range g.Usage {
			if r.Kind != rules.ContentSignal {
				continue
			}
			stated := statedAs(r)
			if stated == "" {
				l.add(r.Line, rules.Info, CodeContentSignal,
					"Content-Signal states nothing in the AIPREF vocabulary (search, ai-train and ai-input, as yes or no): it adds no preference to responses")
				continue
			}
			msg := fmt.Sprintf("Content-Signal read as the usage preference %q (search as search, ai-train as train-ai, ai-input as ai-use; "+
				"draft-ietf-aipref-vocab-08), combined with the group's Content-Usage lines, any n winning", stated)
			if !usagePaths[pathOrRoot(r.Path)] {
				line := rules.UsageRule{Kind: rules.ContentUsage, Path: r.Path, Preference: stated}
				msg += fmt.Sprintf(`; crawlers that follow AIPREF read only Content-Usage: "%s" says the same to them`, line)
			}
			l.add(r.Line, rules.Info, CodeContentSignal, "%s", msg)
		}
	}
}

// usageConflicts reports a Content-Signal line and a Content-Usage line of
// one group (as merged for its agents, RFC 9309 §2.2.1) that say y and n
// of one category for paths both apply to: the two combine, and n wins
// (draft-ietf-aipref-vocab-08 §5.1), which the author of the y rarely
// means. Paths both apply to are found as the shadowed-rule check finds
// them: one pattern covers the other.
func (l *linter) usageConflicts() {
	seen := map[[2]int]bool{}
	for _, cg := range l.compiledGroups() {
		var signals, usages []rules.UsageRule
		for _, r := range cg.group.UsageRules() {
			if r.Kind == rules.ContentSignal {
				signals = append(signals, r)
			} else {
				usages = append(usages, r)
			}
		}
		for _, s := range signals {
			sp, ok := newPattern(pathOrRoot(s.Path))
			if !ok {
				continue
			}
			for _, u := range usages {
				if seen[[2]int{s.Line, u.Line}] {
					continue
				}
				up, ok := newPattern(pathOrRoot(u.Path))
				if !ok {
					continue
				}
				where := pathOrRoot(u.Path)
				switch {
				case sp.covers(up):
				case up.covers(sp):
					where = pathOrRoot(s.Path)
				default:
					continue
				}
				for _, c := range categories {
					a, b := c.of(s), c.of(u)
					if a == rules.PreferenceUnknown || b == rules.PreferenceUnknown || a == b {
						continue
					}
					seen[[2]int{s.Line, u.Line}] = true
					l.add(s.Line, rules.Warning, CodeUsageConflict,
						"Content-Signal %s=%s and the Content-Usage line %d's %s=%s disagree under %s: the two combine, and n wins (draft-ietf-aipref-vocab-08 §5.1)",
						c.signal, yesNo(a), u.Line, c.label, b, where)
				}
			}
		}
	}
}

// pathOrRoot returns a usage rule's path pattern, "/" for none: a rule
// without a path applies to every path, as "/" does.
func pathOrRoot(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

// yesNo writes a preference as a Content-Signal value.
func yesNo(p rules.Preference) string {
	if p == rules.PreferenceAllowed {
		return "yes"
	}
	return "no"
}
