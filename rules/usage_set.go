package rules

// A group's usage preference comes from two kinds of lines: the
// Content-Usage rules of draft-ietf-aipref-attach-05 §3, and Cloudflare's
// Content-Signal lines (signal.go). Each kind is a way of stating a
// preference. Within a kind, the rule with the longest matching path
// decides, as attach-05 §3.1 says of Content-Usage; across kinds, the two
// statements combine as statements made in different ways do
// (draft-ietf-aipref-vocab-08 §5.1): for each category any n wins, then
// any y. So a Content-Usage rule for /research/ does not silence a
// path-less Content-Signal line on /research/x: the site said both.

// maxUsagePairs bounds the combinations a file builds ahead of lookups:
// one for each pair of a group's Content-Usage rank and Content-Signal
// rank, so that a lookup that finds both copies one. A group has a few
// Content-Signal lines (Cloudflare writes one), so real files need a few
// hundred; a hostile file with thousands of each would otherwise make
// millions. Past the bound, such lookups combine the two answers then,
// and allocate.
const maxUsagePairs = 4096

// A usageSet is a group's usage indexes, one for each kind of line.
type usageSet struct {
	usage, signal *usageIndex // nil when the group has no line of that kind
	// pairs[i*len(signal.usages)+j] combines the Content-Usage preference
	// of rank i with the Content-Signal preference of rank j, or pairs is
	// nil when the file's budget of pairs was spent.
	pairs []Usage
}

// newUsageSet compiles a group's Content-Usage and Content-Signal rules,
// spending *budget pairs; it returns nil when the group has neither.
func newUsageSet(rules []UsageRule, budget *int) *usageSet {
	var usage, signal []UsageRule
	for _, r := range rules {
		if r.Kind == ContentSignal {
			signal = append(signal, r)
		} else {
			usage = append(usage, r)
		}
	}
	s := &usageSet{usage: newUsageIndex(usage), signal: newUsageIndex(signal)}
	switch {
	case s.usage == nil && s.signal == nil:
		return nil
	case s.usage == nil || s.signal == nil:
		return s
	}
	n, m := len(s.usage.usages), len(s.signal.usages)
	if n*m > *budget {
		return s
	}
	*budget -= n * m
	s.pairs = make([]Usage, 0, n*m)
	for _, cu := range s.usage.usages {
		for _, cs := range s.signal.usages {
			s.pairs = append(s.pairs, CombineUsage(cu, cs))
		}
	}
	return s
}

// lookup returns the preference for path, in matching form.
func (s *usageSet) lookup(path string) Usage {
	switch {
	case s.signal == nil:
		u, _, _ := s.usage.lookup(path)
		return u
	case s.usage == nil:
		u, _, _ := s.signal.lookup(path)
		return u
	}
	cu, i, tiedU := s.usage.lookup(path)
	cs, j, tiedS := s.signal.lookup(path)
	switch {
	case i < 0:
		return cs
	case j < 0:
		return cu
	case s.pairs != nil && !tiedU && !tiedS:
		return s.pairs[int(i)*len(s.signal.usages)+int(j)]
	}
	return CombineUsage(cu, cs)
}

// HasUsage reports whether the group has Content-Usage or Content-Signal
// rules, so that a caller can skip UsageCanonical for the many groups that
// have none.
func (g *Group) HasUsage() bool { return g.usage != nil }

// UsageRules returns the group's Content-Usage and Content-Signal rules in
// file order; UsageRule.Kind tells them apart.
func (g *Group) UsageRules() []UsageRule {
	var out []UsageRule
	for _, si := range g.src.of(g.r.groupSrc) {
		_, _, end := g.r.sourceEnd(int(si))
		out = append(out, g.r.usageRules(g.r.sources[si].usage, end)...)
	}
	return out
}

// UsageCanonical returns the usage preference the group's Content-Usage
// and Content-Signal rules attach to a path in canonical form, as
// AppendCanonical makes it: for each kind, that of the rule with the
// longest matching path pattern (draft-ietf-aipref-attach-05 §3.1), the two
// combined (draft-ietf-aipref-vocab-08 §5.1). It does not consult allow and
// disallow rules: no preference applies to a path the group disallows
// (attach-05 §3.1), which the caller tells from DecideCanonical. It does
// not allocate but to combine rules with different patterns of the same
// length that all match, or, in a file past maxUsagePairs, rules of both
// kinds.
func (g *Group) UsageCanonical(path string) Usage {
	if g.usage == nil {
		return Usage{}
	}
	return g.usage.lookup(path)
}

// addUsage adds to an allowing verdict the preference for path.
func (g *Group) addUsage(v *Verdict, path string) {
	if v.Allowed && g.usage != nil {
		v.Usage = g.usage.lookup(path)
	}
}
