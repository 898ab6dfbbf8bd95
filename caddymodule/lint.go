package caddymodule

// The checks of "caddy robots lint": the parser's diagnostics, and what an
// operator should know of a file that parses without complaint but does not
// work as it reads.

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Lint codes: stable names for the findings of lint beyond the parser's
// diagnostics (the rules.Code constants), for tools that filter or count
// them.
const (
	lintShadowedRule   = "shadowed-rule"   // a rule that never decides: one of the other kind always wins
	lintDuplicateRule  = "duplicate-rule"  // a rule that repeats an earlier one of the same group
	lintNoRules        = "no-rules"        // a group with no allow or disallow line at all
	lintMergedGroups   = "merged-groups"   // an agent named by more than one group
	lintDuplicateAgent = "duplicate-agent" // an agent named twice in one group
	lintDisallowAll    = "disallow-all"    // "Disallow: /" in the "*" group
	lintNoGroups       = "no-groups"       // no user-agent line at all
	lintSitemapURL     = "sitemap-url"     // a sitemap that is not an absolute http(s) URL
	lintHTMLBody       = "html-body"       // an HTML page where robots.txt should be
	lintBinaryBody     = "binary-body"     // binary content where robots.txt should be
)

// lintRobots parses body with the parse limit maxSize and returns the
// parser's diagnostics with the findings of the checks below, by line. A
// body that is not a robots.txt at all (an HTML page, binary content) gets
// that one finding, not a diagnostic for each of its lines.
func lintRobots(body []byte, maxSize int) []rules.Diagnostic {
	if d, ok := lintNotRobots(body); ok {
		return []rules.Diagnostic{d}
	}
	l := linter{r: rules.ParseWith(body, rules.Options{MaxSize: maxSize}), body: body, maxSize: maxSize}
	l.groups = l.r.Groups()
	l.diags = l.r.Diagnostics()
	l.agents()
	l.noRules()
	l.shadowed()
	l.disallowAll()
	l.sitemaps()
	if len(l.groups) == 0 {
		l.add(0, rules.Info, lintNoGroups, "no user-agent line: the file restricts no crawler")
	}
	slices.SortStableFunc(l.diags, func(a, b rules.Diagnostic) int { return cmp.Compare(a.Line, b.Line) })
	return l.diags
}

// lintNotRobots tells a body that is not a robots.txt, by the same signs
// the handler's fetches refuse one by: an HTML doctype or root element at
// the start, or a NUL octet.
func lintNotRobots(body []byte) (rules.Diagnostic, bool) {
	b := bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	b = bytes.TrimLeft(b, " \t\r\n\f")
	switch {
	case lintHasPrefixFold(b, "<!doctype html") || lintHasPrefixFold(b, "<html"):
		return rules.Diagnostic{Severity: rules.Error, Code: lintHTMLBody, Message: "an HTML page, not a robots.txt: " +
			"fetched over HTTP, the handler treats it as unreachable (complete disallow for crawlers, RFC 9309 §2.3.1.4); " +
			"read from a file, it has no rules"}, true
	case bytes.IndexByte(body, 0) >= 0:
		return rules.Diagnostic{Severity: rules.Error, Code: lintBinaryBody, Message: "binary content (NUL octets), not a robots.txt: " +
			"fetched over HTTP, the handler treats it as unreachable (complete disallow for crawlers, RFC 9309 §2.3.1.4)"}, true
	}
	return rules.Diagnostic{}, false
}

// lintHasPrefixFold reports whether b starts with prefix, ignoring ASCII case.
func lintHasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}

// linter holds a parsed file and the findings so far.
type linter struct {
	r       *rules.Robots
	body    []byte
	maxSize int
	groups  []rules.SourceGroup
	diags   []rules.Diagnostic
	// shadowedLines holds the lines of rules found never to decide in the
	// "*" group (among others).
	shadowedLines map[int]bool
}

// add records a finding.
func (l *linter) add(line int, sev rules.Severity, code, format string, args ...any) {
	l.diags = append(l.diags, rules.Diagnostic{Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
}

// agents reports agents named twice: in one group (harmless, but a sign of
// a copy), or in two groups, which RFC 9309 §2.2.1 merges, while a crawler
// that stops at the first group naming it (as the original 1994 protocol
// did) obeys only that one.
func (l *linter) agents() {
	type first struct{ group, line int }
	seen := map[string]first{}
	for _, g := range l.groups {
		for _, a := range g.Agents {
			key, name := strings.ToLower(a.Token), a.Token
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
				l.add(a.Line, rules.Info, lintDuplicateAgent, "%s is already named at line %d of this group", name, f.line)
			default:
				where := fmt.Sprintf("line %d", f.group)
				if f.line != f.group {
					where += fmt.Sprintf(", at line %d", f.line)
				}
				l.add(a.Line, rules.Warning, lintMergedGroups,
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
// means.
func (l *linter) noRules() {
	if len(l.groups) == 0 || l.r.Truncated() {
		return
	}
	last := l.groups[len(l.groups)-1]
	if len(last.Rules) > 0 || !l.lastGroupOpen() {
		return
	}
	wildcardRules := l.r.Wildcard() != nil && len(l.r.Wildcard().Rules()) > 0
	var names []string
	for _, a := range last.Agents {
		switch {
		case a.Global:
			if !wildcardRules {
				l.add(last.Line, rules.Warning, lintNoRules, `the "*" group has no allow or disallow line: it restricts no crawler`)
			}
		case a.Token != "" && len(l.r.Group(a.Token).Rules()) == 0 && !slices.Contains(names, a.Token):
			names = append(names, a.Token)
		}
	}
	if len(names) == 0 {
		return
	}
	msg := fmt.Sprintf("the group naming %s has no allow or disallow line: %s may fetch everything", lintAndList(names), lintAndList(names))
	if wildcardRules {
		them := "it"
		if len(names) > 1 {
			them = "them"
		}
		msg += fmt.Sprintf(`, and the "*" group's rules do not apply to %s (RFC 9309 §2.2.1)`, them)
	}
	l.add(last.Line, rules.Warning, lintNoRules, "%s", msg)
}

// lastGroupOpen reports whether the file's last group saw no rule line, not
// even an empty one: the parser then adds a user-agent line appended to the
// file to that group rather than starting a new one.
func (l *linter) lastGroupOpen() bool {
	probe := append(slices.Clip(l.body), "\nUser-agent: robots-lint-probe\n"...)
	p := rules.ParseWith(probe, rules.Options{MaxSize: max(l.maxSize, len(probe))})
	return len(p.Groups()) == len(l.groups)
}

// lintAndList joins names as "A", "A and B", "A, B and C".
func lintAndList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sitemaps reports sitemap records whose value is not an absolute http or
// https URL, which the sitemaps protocol requires and crawlers cannot
// resolve otherwise.
func (l *linter) sitemaps() {
	for _, rec := range l.r.Records() {
		k := strings.ToLower(rec.Key)
		if !strings.HasPrefix(k, "sitemap") && !strings.HasPrefix(k, "site-map") {
			continue
		}
		u, err := url.Parse(rec.Value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			l.add(rec.Line, rules.Warning, lintSitemapURL, "sitemap %q is not an absolute http or https URL: crawlers cannot fetch it", rec.Value)
		}
	}
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
		p, ok := newLintPattern(r.Pattern)
		if r.Allow || !ok || !p.matchesEverything() || l.shadowedLines[r.Line] {
			continue
		}
		msg := fmt.Sprintf(`%s in the "*" group disallows everything to every crawler`, robotsRuleText(false, r.Pattern))
		if len(l.r.Tokens()) > 0 {
			msg += " that no group names"
		}
		if allows {
			msg += ", but what the group's Allow rules allow"
		}
		l.add(r.Line, rules.Warning, lintDisallowAll, "%s", msg)
		return
	}
}

// shadowed reports rules that never decide, group by group (the groups
// naming one token merged, as RFC 9309 §2.2.1 merges them): a rule R never
// decides when another rule W matches every path R matches and always
// outranks it. The longest pattern wins, and allow wins a tie (RFC 9309
// §2.2.2), so W outranks R when W is an allow rule at least as long as R,
// or a disallow rule longer than R; a rule of the same kind with the same
// pattern outranks R when it comes first.
//
// Only W alone is considered, and "matches every path R matches" is decided
// by a sufficient test (see lintPattern.covers), so every finding is true,
// while some rules that never decide (covered by several rules together,
// or through a match only percent-encoding makes) are not found.
func (l *linter) shadowed() {
	type pair struct{ loser, winner int }
	var list []*lintShadow
	found := map[pair]*lintShadow{}
	for _, cg := range l.compiledGroups() {
		rs := cg.group.Rules()
		pats := make([]*lintPattern, len(rs))
		// A rule that outranks another has a first segment that starts
		// the other's, or the same text: indexing both keeps a group of
		// n rules far from n² comparisons.
		byFirst, byText := map[string][]int{}, map[string][]int{}
		for i, r := range rs {
			if p, ok := newLintPattern(r.Pattern); ok {
				pats[i] = &p
				byFirst[p.segs[0]] = append(byFirst[p.segs[0]], i)
			}
			byText[r.Pattern] = append(byText[r.Pattern], i)
		}
		for i, r := range rs {
			if !lintStartsPattern(r.Pattern) || r.Allow && lintIndexPage(r.Pattern) {
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
				s = &lintShadow{loser: r, winner: rs[w], lp: pats[i], wp: pats[w]}
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

// lintShadow is a rule that never decides, and the rule that wins over it.
type lintShadow struct {
	loser, winner rules.Rule
	lp, wp        *lintPattern // nil for a pattern lintPattern cannot read
	// names are the tokens whose merged groups hold both rules, when they
	// were written in different groups; otherwise nil.
	names []string
}

// addShadowed reports a rule that never decides.
func (l *linter) addShadowed(s *lintShadow) {
	r, w := s.loser, s.winner
	scope, merged := "", ""
	if s.names != nil {
		scope = " for " + lintAndList(s.names)
		merged = fmt.Sprintf(" (in the group at line %d, merged with this one)", w.GroupLine)
	}
	if r.Allow == w.Allow {
		same := ""
		if r.Pattern != w.Pattern {
			same = fmt.Sprintf(", %s once percent-encoding is normalised", w.Pattern)
		}
		l.add(r.Line, rules.Info, lintDuplicateRule, "%s repeats line %d%s%s%s", robotsRuleText(r.Allow, r.Pattern), w.Line, same, merged, scope)
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
	l.add(r.Line, rules.Warning, lintShadowedRule, "%s never decides%s: %s at line %d%s %s",
		robotsRuleText(r.Allow, r.Pattern), scope, robotsRuleText(w.Allow, w.Pattern), w.Line, merged, why)
}

// lintStartsPattern reports whether a pattern can match a path: paths start
// with "/", so a pattern must start with "/" or "*" (the parser reports
// the others).
func lintStartsPattern(p string) bool {
	return p != "" && (p[0] == '/' || p[0] == '*')
}

// outranks reports whether rule w wins over rule r on every path r
// matches. wp and rp are their patterns, or nil for a pattern lintPattern
// cannot read, which only an identical pattern outranks.
func outranks(w, r rules.Rule, wp, rp *lintPattern) bool {
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

// lintGroup is one compiled group and the tokens it applies to.
type lintGroup struct {
	group *rules.Group
	names []string // the tokens, or `"*"`
}

// compiledGroups returns each distinct compiled group of the file: tokens
// named by the same groups share one.
func (l *linter) compiledGroups() []lintGroup {
	var out []lintGroup
	index := map[*rules.Group]int{}
	for _, tok := range l.r.Tokens() {
		g := l.r.Group(tok)
		if i, ok := index[g]; ok {
			out[i].names = append(out[i].names, tok)
			continue
		}
		index[g] = len(out)
		out = append(out, lintGroup{group: g, names: []string{tok}})
	}
	if g := l.r.Wildcard(); g != nil {
		out = append(out, lintGroup{group: g, names: []string{`"*"`}})
	}
	return out
}
