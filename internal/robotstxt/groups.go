package robotstxt

import (
	"strings"
	"weak"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// MaxGroups is the number of distinct named groups one request is held to.
// A header names one crawler, or two when a crawler mentions another
// (a fetcher built on a bot's engine, say); four leaves room for headers
// that list several without letting a long one cost more than four path
// decisions. Match.Dropped reports a header that named more.
const MaxGroups = 4

// A Match is the choice of robots.txt groups for a request: the distinct
// named groups that name one of its candidate tokens, each with the first
// candidate that named it. Groups are compared by identity, so tokens that
// the same user-agent lines name count once.
//
// Non-generic candidates are tried first; generic ones (see GenericTokens)
// only when no non-generic candidate names a group, so a crawler that
// dresses as a browser answers to its own group and not to a
// "User-agent: Mozilla" group.
//
// Several groups: when candidates name different groups, a request that
// any one of them allows is allowed. RFC 9309 §2.2.1 has a crawler obey
// the group that names it, and a crawler whose header names two (a
// fetcher built on another crawler's engine, say) may choose either: an
// honest crawler that obeys the one it chose must not be refused for the
// other's rules. Strictness would buy nothing against a forger, who can
// send one token instead of two; verifying who the client is does (see
// package verify). The caller decides the target against each Group and
// allows when any of them allows.
//
// When no group matches (Named is false), the "*" group applies, subject to
// the WildcardPolicy.
type Match struct {
	groups  [MaxGroups]*rules.Group
	tokens  [MaxGroups]string
	n       uint8
	generic bool
	dropped bool
}

// Len returns the number of distinct named groups matched.
func (m *Match) Len() int { return int(m.n) }

// Group returns matched group i, for 0 <= i < Len(), in the order of the
// candidates that named them.
func (m *Match) Group(i int) *rules.Group { return m.groups[:m.n][i] }

// Token returns the candidate that named group i: a substring of the
// User-Agent header, as the client spelt it.
func (m *Match) Token(i int) string { return m.tokens[:m.n][i] }

// Named reports whether any named group matched.
func (m *Match) Named() bool { return m.n > 0 }

// Generic reports whether the groups were found through generic candidates
// only: the header named no group with a token of its own.
func (m *Match) Generic() bool { return m.generic }

// Dropped reports whether candidates named more than MaxGroups distinct
// groups, and the rest were not kept.
func (m *Match) Dropped() bool { return m.dropped }

// ChooseGroups chooses the named groups of r that apply to a request with
// candidate tokens t (see Match). It costs one map lookup per candidate
// tried; a GroupIndex built once per robots.txt avoids most of them. It does
// not allocate.
func ChooseGroups(r *rules.Robots, t *agent.Tokens) Match {
	return choose(r, nil, t)
}

// filterBits is log2 of the number of bits of a GroupIndex filter: 2048
// bits keep false hits near one in a hundred candidates for a robots.txt
// naming 20 tokens, and under one in ten for one naming 200.
const filterBits = 11

// A GroupIndex is a parsed robots.txt prepared for choosing groups: it holds
// a bit filter of the tokens that name groups, so that the candidates that
// name none, which are most of them, are rejected without a map lookup.
// Build one per parsed robots.txt and keep it beside it. It is immutable and
// safe for concurrent use.
type GroupIndex struct {
	robots *rules.Robots
	filter groupFilter
	// google holds the groups whose patterns Google's reading reads
	// otherwise (see googleGroup), for evidence.
	google map[*rules.Group]*googleGroup
	// self, named and places let a header's cached choice of groups name
	// them without holding them (see Choice).
	self   weak.Pointer[GroupIndex]
	named  []*rules.Group
	places map[*rules.Group]uint16
}

// NewGroupIndex builds the index of r. A nil r gives an index that matches
// nothing.
func NewGroupIndex(r *rules.Robots) *GroupIndex {
	x := &GroupIndex{robots: r}
	if r == nil {
		x.self = weak.Make(x)
		return x
	}
	seen := make(map[*rules.Group]bool)
	addGoogle := func(g *rules.Group) {
		if g == nil || seen[g] {
			return
		}
		seen[g] = true
		if gg := newGoogleGroup(g); gg != nil {
			if x.google == nil {
				x.google = make(map[*rules.Group]*googleGroup)
			}
			x.google[g] = gg
		}
	}
	tokens := r.Tokens()
	x.indexNamed(r, tokens)
	for _, tok := range tokens {
		if rules.IsProductToken(tok) {
			x.filter.add(tok)
		}
		addGoogle(r.Group(tok))
	}
	addGoogle(r.Wildcard())
	return x
}

// Robots returns the robots.txt the index was built from.
func (x *GroupIndex) Robots() *rules.Robots { return x.robots }

// Choose is ChooseGroups for the indexed robots.txt. It does not allocate.
func (x *GroupIndex) Choose(t *agent.Tokens) Match {
	return choose(x.robots, &x.filter, t)
}

// choose implements ChooseGroups; filter, when not nil, rejects candidates
// that certainly name no group.
func choose(r *rules.Robots, filter *groupFilter, t *agent.Tokens) (m Match) {
	if r == nil || t == nil {
		return m
	}
	for tok, key := range t.Candidates(false) {
		if filter == nil || filter.mayName(key) {
			m.try(r, tok)
		}
	}
	if m.n > 0 {
		return m
	}
	for tok, key := range t.Candidates(true) {
		if filter == nil || filter.mayName(key) {
			m.try(r, tok)
		}
	}
	m.generic = m.n > 0
	return m
}

// try adds the group that the candidate tok names, if any and not already
// held.
func (m *Match) try(r *rules.Robots, tok string) {
	g := r.Group(tok)
	if g == nil {
		return
	}
	for _, h := range m.groups[:m.n] {
		if h == g {
			return
		}
	}
	if int(m.n) == MaxGroups {
		m.dropped = true
		return
	}
	m.groups[m.n], m.tokens[m.n] = g, tok
	m.n++
}

// A groupFilter is a bit set of the hashes of the tokens that name groups.
type groupFilter [1 << filterBits / 64]uint64

// add sets the bit of the token tok.
func (f *groupFilter) add(tok string) {
	k := agent.TokenKey(tok) >> (16 - filterBits)
	f[k/64] |= 1 << (k % 64)
}

// mayName reports whether a candidate whose hash (the top 16 bits of its
// tokenHash) is h may name a group.
func (f *groupFilter) mayName(h uint16) bool {
	k := h >> (16 - filterBits)
	return f[k/64]&(1<<(k%64)) != 0
}

// drop removes the groups that the candidate tok named, compared without
// regard to case.
func (m *Match) Drop(tok string) {
	n := uint8(0)
	for i := range m.n {
		if !strings.EqualFold(m.tokens[i], tok) {
			m.groups[n], m.tokens[n] = m.groups[i], m.tokens[i]
			n++
		}
	}
	m.n = n
}
