package lint

// Checks of groups and agents: who is named where, which groups bind
// their agents to nothing, and a "*" group that binds everyone to nothing.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// agents reports agents named twice: in one group (harmless, but a sign of
// a copy), or in two groups, which RFC 9309 §2.2.1 merges, while a crawler
// that stops at the first group naming it (as the original 1994 protocol
// did) obeys only that one.
func (l *linter) agents() {
	type first struct{ group, line int }
	seen := map[string]first{}
	for _, g := range l.groups {
		for _, a := range g.Agents {
			key, name := strings.ToLower(a.Token), a.Token // tokens are ASCII
			if a.Global {
				key, name = "*", `"*"`
			}
			if key == "" {
				continue // no token: the parser reports it
			}
			if !a.Global && a.Value != a.Token {
				name = fmt.Sprintf("%s (user-agent %q)", a.Token, a.Value)
			}
			f, ok := seen[key]
			switch {
			case !ok:
				seen[key] = first{g.Line, a.Line}
			case f.group == g.Line:
				l.add(a.Line, rules.Info, CodeDuplicateAgent, "%s is already named at line %d of this group", name, f.line)
			default:
				where := fmt.Sprintf("line %d", f.group)
				if f.line != f.group {
					where += fmt.Sprintf(", at line %d", f.line)
				}
				l.add(a.Line, rules.Warning, CodeMergedGroups,
					"%s is also named by the group at %s: RFC 9309 §2.2.1 merges the two groups' rules, "+
						"but a crawler that stops at the first group naming it obeys only that one", name, where)
			}
		}
	}
}

// noRules reports a group with no allow or disallow line at all. A group
// ends at its first rule line, an empty "Disallow:" included, so only the
// last group of a file can have none; an empty rule line says "allow
// everything" on purpose and is not reported. Agents named by such a group
// are still bound by it: they escape the "*" group's rules (RFC 9309
// §2.2.1), which is rarely what a group holding only, say, a crawl-delay
// means. A group that states a usage preference and has no rules is
// usageOnly's to report, anywhere in the file: a "*" group that only
// states a preference restricts no crawler on purpose.
func (l *linter) noRules() {
	l.usageOnly()
	if len(l.groups) == 0 || l.r.Truncated() {
		return
	}
	last := l.groups[len(l.groups)-1]
	if len(last.Rules) > 0 || len(last.Usage) > 0 || !l.lastGroupOpen() {
		return
	}
	var names []string
	for _, a := range last.Agents {
		switch {
		case a.Global:
			if !l.wildcardRules() {
				l.add(last.Line, rules.Warning, CodeNoRules, `the "*" group has no allow or disallow line: it restricts no crawler`)
			}
		case a.Token != "" && len(l.r.Group(a.Token).Rules()) == 0 && !slices.Contains(names, a.Token):
			names = append(names, a.Token)
		}
	}
	if len(names) == 0 {
		return
	}
	msg := fmt.Sprintf("the group naming %s has no allow or disallow line: %s may fetch everything", andList(names), andList(names))
	l.add(last.Line, rules.Warning, CodeNoRules, "%s%s", msg, l.escapesWildcard(names))
}

// usageOnly reports a group that states a usage preference
// (draft-ietf-aipref-attach-05 §3, or a Content-Signal line) but has no
// allow or disallow line: a group written only to add a preference for a
// crawler frees that crawler from the "*" group's rules (RFC 9309 §2.2.1). Agents that some
// group gives allow or disallow lines (an empty one included), and "*",
// which has no token, are not reported.
func (l *linter) usageOnly() {
	hasRuleLines := map[string]bool{}
	for _, g := range l.groups {
		for _, a := range g.Agents {
			if g.RuleLines > 0 {
				hasRuleLines[strings.ToLower(a.Token)] = true
			}
		}
	}
	for _, g := range l.groups {
		if len(g.Usage) == 0 {
			continue
		}
		var names []string
		for _, a := range g.Agents {
			if a.Token != "" && !hasRuleLines[strings.ToLower(a.Token)] && !slices.Contains(names, a.Token) {
				names = append(names, a.Token)
			}
		}
		if len(names) == 0 {
			continue
		}
		l.add(g.Line, rules.Warning, CodeNoRules,
			"the group naming %s states a usage preference but has no allow or disallow line: %s may fetch everything%s; "+
				`a usage preference does not restrict fetching (draft-ietf-aipref-attach-05 §3.1): add the rules that apply, or "Allow: /" to say so`,
			andList(names), andList(names), l.escapesWildcard(names))
	}
}

// wildcardRules reports whether the "*" group has allow or disallow rules.
func (l *linter) wildcardRules() bool {
	return l.r.Wildcard() != nil && len(l.r.Wildcard().Rules()) > 0
}

// escapesWildcard says, when the "*" group has rules, that they do not
// apply to the named agents.
func (l *linter) escapesWildcard(names []string) string {
	if !l.wildcardRules() {
		return ""
	}
	them := "it"
	if len(names) > 1 {
		them = "them"
	}
	return fmt.Sprintf(`, and the "*" group's rules do not apply to %s (RFC 9309 §2.2.1)`, them)
}

// lastGroupOpen reports whether the file's last group saw no rule line, not
// even an empty one: the parser then adds a user-agent line appended to the
// file to that group rather than starting a new one.
func (l *linter) lastGroupOpen() bool {
	probe := append(slices.Clip(l.body), "\nUser-agent: robots-lint-probe\n"...)
	p := rules.ParseWith(probe, rules.Options{MaxSize: max(l.maxSize, len(probe))})
	return len(p.Groups()) == len(l.groups)
}

// disallowAll warns of a "*" group that disallows every path, unless the
// rule is shadowed: every crawler no group names may then fetch nothing
// (but what the group's Allow rules allow).
func (l *linter) disallowAll() {
	g := l.r.Wildcard()
	if g == nil {
		return
	}
	rs := g.Rules()
	allows := slices.ContainsFunc(rs, func(r rules.Rule) bool { return r.Allow })
	for _, r := range rs {
		p, ok := newPattern(r.Pattern)
		if r.Allow || !ok || !p.matchesEverything() || l.shadowedLines[r.Line] {
			continue
		}
		msg := fmt.Sprintf(`%s in the "*" group disallows everything to every crawler`, ruleText(false, r.Pattern))
		if len(l.r.Tokens()) > 0 {
			msg += " that no group names"
		}
		if allows {
			msg += ", but what the group's Allow rules allow"
		}
		l.add(r.Line, rules.Warning, CodeDisallowAll, "%s", msg)
		return
	}
}
