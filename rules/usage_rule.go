package rules

// The robots.txt Content-Usage rule of draft-ietf-aipref-attach-05 §3: a
// usage preference (see usage.go) attached to the paths of a group.
// Content-Signal lines (signal.go) are read into rules of the same form,
// and indexed the same way, apart (see usage_set.go).

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A UsageKind says which kind of line stated a usage preference.
type UsageKind uint8

const (
	// ContentUsage is a Content-Usage line (draft-ietf-aipref-attach-05
	// §3), in the vocabulary of draft-ietf-aipref-vocab-08.
	ContentUsage UsageKind = iota
	// ContentSignal is Cloudflare's Content-Signal line
	// (contentsignals.org), whose signals are read into that vocabulary:
	// search as search, ai-train as train-ai, ai-input as ai-use.
	ContentSignal
)

// String returns the key of the kind of line, as written in robots.txt:
// "Content-Usage" or "Content-Signal".
func (k UsageKind) String() string {
	switch k {
	case ContentUsage:
		return "Content-Usage"
	case ContentSignal:
		return "Content-Signal"
	}
	return "UsageKind(" + strconv.Itoa(int(k)) + ")"
}

// A UsageRule is one Content-Usage or Content-Signal line of a group.
type UsageRule struct {
	// Kind says which kind of line it is.
	Kind UsageKind
	// Path is the path pattern as written, with "*" and "$" as in allow
	// and disallow rules, or "" when the rule has none: it then applies to
	// every path, as "/" does.
	Path string
	// Preference is the statement of preference as written: for a
	// Content-Signal line, its signals ("search=yes, ai-train=no").
	Preference string
	// TrainAI, AIUse and Search are what this rule alone says of each
	// category of draft-ietf-aipref-vocab-08.
	TrainAI, AIUse, Search Preference
	// Line is the rule's line number.
	Line int
	// GroupLine is the line of the first user-agent line of the group the
	// rule was written in.
	GroupLine int
}

// String writes the rule as a robots.txt line, with the key spelt as the
// specification spells it: "Content-Signal: /blog/ search=yes".
func (r UsageRule) String() string {
	switch {
	case r.Path == "":
		return r.Kind.String() + ": " + r.Preference
	case r.Preference == "":
		return r.Kind.String() + ": " + r.Path
	}
	return r.Kind.String() + ": " + r.Path + " " + r.Preference
}

// statement reads the rule's preference again, as the parser read it.
func (r *UsageRule) statement() statement {
	if r.Kind == ContentSignal {
		return parseSignals(r.Preference).st
	}
	return parseStatement(r.Preference)
}

// splitUsageValue splits a Content-Usage rule value into its path and its
// statement of preference (draft-ietf-aipref-attach-05 §3.2): a value
// starting with "/" has a path, which ends before the first SP or HTAB;
// any other value is all preference. The value has already been cut at
// "#" and trimmed (see splitRecord).
func splitUsageValue(v string) (path, pref string) {
	if !strings.HasPrefix(v, "/") {
		return "", v
	}
	end := strings.IndexAny(v, " \t")
	if end < 0 {
		return v, ""
	}
	return v[:end], strings.TrimLeft(v[end:], " \t")
}

// contentUsage handles a Content-Usage line (draft-ietf-aipref-attach-05
// §3). It belongs to the open group. Unlike allow and disallow, it does not
// end the group's run of user-agent lines, although the draft's ABNF makes
// it a rule: a parser that does not know the line, Google's among them,
// skips it and keeps the run going, and how a file grants access must not
// depend on whether its reader knows AIPREF (see userAgent and
// docs/rfc9309.md).
func (p *parser) contentUsage(num int, v string) {
	if p.open < 0 {
		p.diagf(num, Error, diagUsageOutsideGroup, "content-usage before any user-agent line: applies to no group (draft-ietf-aipref-attach-05 §3)")
		return
	}
	p.prefSeen = true
	path, pref := splitUsageValue(v)
	st := parseStatement(pref)
	switch {
	case pref == "":
		p.diagf(num, Warning, diagUsageEmpty, "content-usage states no preference: every category is unknown under %s", usagePathOrRoot(path))
	case st.err != nil:
		hint := ""
		if pref[0] == '*' {
			hint = `; a path must start with "/" (draft-ietf-aipref-attach-05 §3.2)`
		}
		p.diagf(num, Error, diagUsageMalformed, "usage preference %q is not a structured-fields dictionary (%v): every category is unknown under %s%s",
			pref, st.err, usagePathOrRoot(path), hint)
	}
	for _, k := range st.unknownKeys {
		p.diag(num, Warning, diagUsageUnknownKey, p.text.intern(k), 0)
	}
	for _, k := range st.badValues {
		p.diag(num, Warning, diagUsageBadValue, p.text.intern(k), 0)
	}
	p.usageRule(UsageRule{Kind: ContentUsage, TrainAI: st.trainAI, AIUse: st.aiUse, Search: st.search, Line: num}, path, pref)
}

// usageMessage writes the message of a diagnostic of a member of a
// Content-Usage line, whose key is k.
func usageMessage(code diagCode, k string) string {
	if code == diagUsageUnknownKey {
		return fmt.Sprintf("usage category %q is not in the vocabulary (%s, %s, %s; draft-ietf-aipref-vocab-08 §6.1): ignored",
			k, LabelTrainAI, LabelAIUse, LabelSearch)
	}
	return fmt.Sprintf("%s takes the token y or n (draft-ietf-aipref-vocab-08 §6.2): its preference is unknown", k)
}

// usageRule adds a Content-Usage or Content-Signal rule to the open group,
// its path and preference written into the backing text.
func (p *parser) usageRule(u UsageRule, path, pref string) {
	u.GroupLine = int(p.r.sources[p.open].line)
	p.r.usage = append(p.r.usage, u)
	p.usageText = append(p.usageText, struct{ path, pref span }{p.text.intern(path), p.text.intern(pref)})
}

// usagePathOrRoot names the paths a rule's path pattern covers.
func usagePathOrRoot(path string) string {
	if path == "" {
		return "every path"
	}
	return path
}

// A usageIndex finds, among a group's rules of one kind, the rule for a
// path: the one whose path pattern is the longest that matches, as allow
// and disallow rules are chosen (draft-ietf-aipref-attach-05 §3.1, RFC 9309
// §2.2.2). Rules with the same pattern are combined when the group is
// compiled, the most restrictive preference winning
// (draft-ietf-aipref-vocab-08 §5.1, which attach-05 §3.1 cites as its
// §7.1), so a lookup only copies the result.
type usageIndex struct {
	m        *matcher // the patterns by rank: longest first
	usages   []Usage  // the combined preference of each rank
	classEnd []int32  // per rank, the first rank with a shorter pattern
}

// newUsageIndex compiles rules of one kind, or returns nil when there are
// none.
func newUsageIndex(rules []UsageRule) *usageIndex {
	if len(rules) == 0 {
		return nil
	}
	// One entry per pattern, in canonical form: "/a%62" and "/ab" are one.
	type entry struct {
		text  string
		prio  int
		rules []UsageRule
		sts   []statement
	}
	var entries []*entry
	byPath := map[string]*entry{}
	for _, r := range rules {
		text := r.Path
		if text == "" {
			text = "/" // no path applies to every path, as "/" does
		}
		key := canonical(text, false)
		e := byPath[key]
		if e == nil {
			e = &entry{text: text, prio: len(key)}
			byPath[key] = e
			entries = append(entries, e)
		}
		e.rules = append(e.rules, r)
		e.sts = append(e.sts, r.statement())
	}
	slices.SortStableFunc(entries, func(a, b *entry) int {
		if c := cmp.Compare(b.prio, a.prio); c != 0 {
			return c
		}
		return cmp.Compare(a.rules[0].Line, b.rules[0].Line)
	})
	// The patterns are compiled into a text of the index's own.
	var b textBuilder
	pats := make([]cpat, len(entries))
	x := &usageIndex{usages: make([]Usage, len(entries)), classEnd: make([]int32, len(entries))}
	for i, e := range entries {
		pats[i] = compilePattern(&b, e.text, b.add(e.text))
		x.usages[i] = newUsage(e.sts, e.rules)
	}
	for r := len(entries) - 1; r >= 0; r-- {
		end := int32(r + 1)
		if r+1 < len(entries) && entries[r+1].prio == entries[r].prio {
			end = x.classEnd[r+1]
		}
		x.classEnd[r] = end
	}
	x.m = newMatcher(b.String(), pats)
	return x
}

// lookup returns the preference for path, in matching form, with the rank
// of the most specific rule that matched (-1 for none) and whether other
// rules as specific matched too, in which case the preference was built
// for this lookup.
func (x *usageIndex) lookup(path string) (u Usage, rank int32, tied bool) {
	n := int32(len(x.usages))
	best := x.m.best(path)
	if best == n {
		return Usage{}, -1, false
	}
	// Other patterns as long as the best one that match too are as
	// specific: their preferences combine as those of one pattern do
	// (draft-ietf-aipref-attach-05 §3.1 says so of identical paths, which
	// were combined when compiled). Such ties are rare ("/a*" and "/ab" on
	// "/abc"); their combination is built here, and allocates.
	end := x.classEnd[best]
	var tiedWith []Usage
	for at := best; at+1 < end; {
		next := end
		x.m.bestAfter(path, at, &next)
		if next == end {
			break
		}
		if tiedWith == nil {
			tiedWith = append(tiedWith, x.usages[best])
		}
		tiedWith = append(tiedWith, x.usages[next])
		at = next
	}
	if tiedWith != nil {
		return CombineUsage(tiedWith...), best, true
	}
	return x.usages[best], best, false
}
