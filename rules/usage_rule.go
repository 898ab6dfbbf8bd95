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
		p.diag(num, Error, diagUsageOutsideGroup, span{}, 0)
		return
	}
	p.prefSeen = true
	path, pref := splitUsageValue(v)
	st := parseStatement(pref)
	rule := uint32(len(p.r.usage)) // the rule this line adds, which the messages below read again
	switch {
	case pref == "":
		p.diag(num, Warning, diagUsageEmpty, span{}, rule)
	case st.err != nil:
		p.diag(num, Error, diagUsageMalformed, span{}, rule)
	}
	for _, k := range st.unknownKeys {
		p.diag(num, Warning, diagUsageUnknownKey, p.text.intern(k), 0)
	}
	for _, k := range st.badValues {
		p.diag(num, Warning, diagUsageBadValue, p.text.intern(k), 0)
	}
	p.usageRule(num, ContentUsage, path, pref, st)
}

// usageMessage writes the message of a diagnostic of a Content-Usage
// line: arg is the key of a member, or u the line's rule.
func usageMessage(code diagCode, arg string, u UsageRule) string {
	switch code {
	case diagUsageOutsideGroup:
		return "content-usage before any user-agent line: applies to no group (draft-ietf-aipref-attach-05 §3)"
	case diagUsageEmpty:
		return fmt.Sprintf("content-usage states no preference: every category is unknown under %s", usagePathOrRoot(u.Path))
	case diagUsageMalformed:
		hint := ""
		if u.Preference[0] == '*' {
			hint = `; a path must start with "/" (draft-ietf-aipref-attach-05 §3.2)`
		}
		return fmt.Sprintf("usage preference %q is not a structured-fields dictionary (%v): every category is unknown under %s%s",
			u.Preference, parseStatement(u.Preference).err, usagePathOrRoot(u.Path), hint)
	case diagUsageUnknownKey:
		return fmt.Sprintf("usage category %q is not in the vocabulary (%s, %s, %s; draft-ietf-aipref-vocab-08 §6.1): ignored",
			arg, LabelTrainAI, LabelAIUse, LabelSearch)
	}
	return fmt.Sprintf("%s takes the token y or n (draft-ietf-aipref-vocab-08 §6.2): its preference is unknown", arg)
}

// usageRec is a Content-Usage or Content-Signal rule in the compact form.
type usageRec struct {
	line, group            uint32 // group: its source group
	path, pref             span
	kind                   UsageKind
	trainAI, aiUse, search Preference
}

// usageRule adds a Content-Usage or Content-Signal rule to the open group.
func (p *parser) usageRule(num int, kind UsageKind, path, pref string, st statement) {
	p.r.usage = append(p.r.usage, usageRec{line: uint32(num), group: uint32(p.open), path: p.text.intern(path), pref: p.text.intern(pref),
		kind: kind, trainAI: st.trainAI, aiUse: st.aiUse, search: st.search})
}

// usageRules makes the usage rules of r between from and to.
func (r *Robots) usageRules(from, to uint32) []UsageRule {
	if from == to {
		return nil
	}
	out := make([]UsageRule, 0, to-from)
	for _, u := range r.usage[from:to] {
		out = append(out, UsageRule{Kind: u.kind, Path: u.path.in(r.text), Preference: u.pref.in(r.text),
			TrainAI: u.trainAI, AIUse: u.aiUse, Search: u.search, Line: int(u.line), GroupLine: int(r.sources[u.group].line)})
	}
	return out
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
