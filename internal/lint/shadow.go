package lint

// Rules that never decide: another rule always wins over them (RFC 9309
// §2.2.2: the longest match wins, and allow wins a tie).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// shadowed reports rules that never decide, group by group (the groups
// naming one token merged, as RFC 9309 §2.2.1 merges them): a rule R never
// decides when another rule W matches every path R matches and always
// outranks it. The longest pattern wins, and allow wins a tie (RFC 9309
// §2.2.2), so W outranks R when W is an allow rule at least as long as R,
// or a disallow rule longer than R; a rule of the same kind with the same
// pattern outranks R when it comes first.
//
// Only W alone is considered, and "matches every path R matches" is decided
// by a sufficient test (see pattern.covers), so every finding is true,
// while some rules that never decide (covered by several rules together,
// or through a match only percent-encoding makes) are not found.
func (l *linter) shadowed() {
	type pair struct{ loser, winner int }
	var list []*shadow
	found := map[pair]*shadow{}
	for _, cg := range l.compiledGroups() {
		rs := cg.group.Rules()
		pats := make([]*pattern, len(rs))
		// A rule that outranks another has a first segment that starts
		// the other's, or the same text: indexing both keeps a group of
		// n rules far from n² comparisons.
		byFirst, byText := map[string][]int{}, map[string][]int{}
		for i, r := range rs {
			if p, ok := newPattern(r.Pattern); ok {
				pats[i] = &p
				byFirst[p.segs[0]] = append(byFirst[p.segs[0]], i)
			}
			byText[r.Pattern] = append(byText[r.Pattern], i)
		}
		for i, r := range rs {
			if !startsPattern(r.Pattern) || r.Allow && indexPage(r.Pattern) {
				continue // matches nothing, or more than its pattern says
			}
			w := -1
			try := func(j int) {
				if j != i && outranks(rs[j], r, pats[j], pats[i]) &&
					(w < 0 || rs[w].GroupLine != r.GroupLine && rs[j].GroupLine == r.GroupLine) {
					w = j
				}
			}
			for _, j := range byText[r.Pattern] {
				try(j)
			}
			if p := pats[i]; p != nil {
				for n := 0; n <= len(p.segs[0]); n++ {
					for _, j := range byFirst[p.segs[0][:n]] {
						try(j)
					}
				}
			}
			if w < 0 {
				continue
			}
			s := found[pair{r.Line, rs[w].Line}]
			if s == nil {
				s = &shadow{loser: r, winner: rs[w], lp: pats[i], wp: pats[w]}
				found[pair{r.Line, rs[w].Line}] = s
				list = append(list, s)
			}
			if rs[w].GroupLine != r.GroupLine {
				s.names = append(s.names, cg.names...)
			}
		}
	}
	l.shadowedLines = map[int]bool{}
	for _, s := range list {
		if s.names == nil || slices.Contains(s.names, `"*"`) {
			l.shadowedLines[s.loser.Line] = true // in the "*" group too
		}
		l.addShadowed(s)
	}
}

// shadow is a rule that never decides, and the rule that wins over it.
type shadow struct {
	loser, winner rules.Rule
	lp, wp        *pattern // nil for a pattern newPattern cannot read
	// names are the tokens whose merged groups hold both rules, when they
	// were written in different groups; otherwise nil.
	names []string
}

// addShadowed reports a rule that never decides.
func (l *linter) addShadowed(s *shadow) {
	r, w := s.loser, s.winner
	scope, merged := "", ""
	if s.names != nil {
		scope = " for " + andList(s.names)
		merged = fmt.Sprintf(" (in the group at line %d, merged with this one)", w.GroupLine)
	}
	if r.Allow == w.Allow {
		same := ""
		if r.Pattern != w.Pattern {
			same = fmt.Sprintf(", %s once percent-encoding is normalised", w.Pattern)
		}
		l.add(r.Line, rules.Info, CodeDuplicateRule, "%s repeats line %d%s%s%s", ruleText(r.Allow, r.Pattern), w.Line, same, merged, scope)
		return
	}
	var why string
	switch {
	case r.Pattern == w.Pattern:
		why = "has the same pattern, and allow wins a tie (RFC 9309 §2.2.2)"
	case s.lp.equal(*s.wp):
		why = "has the same pattern once percent-encoding is normalised, and allow wins a tie (RFC 9309 §2.2.2)"
	case s.wp.length == s.lp.length:
		why = "matches every path it matches, with a pattern as long, and allow wins a tie (RFC 9309 §2.2.2)"
	case strings.ContainsAny(w.Pattern, "*$"):
		why = `matches every path it matches, with a longer pattern ("*" and "$" count): the longest match wins (RFC 9309 §2.2.2)`
	default:
		why = "matches every path it matches, with a longer pattern: the longest match wins (RFC 9309 §2.2.2)"
	}
	l.add(r.Line, rules.Warning, CodeShadowedRule, "%s never decides%s: %s at line %d%s %s",
		ruleText(r.Allow, r.Pattern), scope, ruleText(w.Allow, w.Pattern), w.Line, merged, why)
}

// startsPattern reports whether a pattern can match a path: paths start
// with "/", so a pattern must start with "/" or "*" (the parser reports
// the others).
func startsPattern(p string) bool {
	return p != "" && (p[0] == '/' || p[0] == '*')
}

// outranks reports whether rule w wins over rule r on every path r
// matches. wp and rp are their patterns, or nil for a pattern pattern
// cannot read, which only an identical pattern outranks.
func outranks(w, r rules.Rule, wp, rp *pattern) bool {
	same := w.Pattern == r.Pattern || wp != nil && rp != nil && wp.equal(*rp)
	switch {
	case w.Allow == r.Allow:
		return same && w.Line < r.Line // the same rule twice: the first decides
	case same:
		return w.Allow // allow wins a tie
	case wp == nil || rp == nil:
		return false
	case w.Allow && wp.length < rp.length, !w.Allow && wp.length <= rp.length:
		return false
	}
	return wp.covers(*rp)
}

// ruleGroup is one compiled group and the tokens it applies to.
type ruleGroup struct {
	group *rules.Group
	names []string // the tokens, or `"*"`
}

// compiledGroups returns each distinct compiled group of the file: tokens
// named by the same groups share one.
func (l *linter) compiledGroups() []ruleGroup {
	var out []ruleGroup
	index := map[*rules.Group]int{}
	for _, tok := range l.r.Tokens() {
		g := l.r.Group(tok)
		if i, ok := index[g]; ok {
			out[i].names = append(out[i].names, tok)
			continue
		}
		index[g] = len(out)
		out = append(out, ruleGroup{group: g, names: []string{tok}})
	}
	if g := l.r.Wildcard(); g != nil {
		out = append(out, ruleGroup{group: g, names: []string{`"*"`}})
	}
	return out
}
