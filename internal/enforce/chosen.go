package enforce

import (
	"weak"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// chosenGroups is a header's choice of groups in one GroupIndex, kept with
// the header's cached reading: a crawler sends the same header, against
// the same robots.txt, request after request, and the choice costs a
// filter probe and a map lookup per candidate token where reusing it
// costs a comparison. It names the groups by their place in the index
// and the index by a weak pointer, so that a cached header never keeps a
// robots.txt the store has let go of. It is immutable.
type chosenGroups struct {
	index   weak.Pointer[GroupIndex]
	groups  [MaxGroups]uint16 // places in index.named
	tokens  [MaxGroups]string // substrings of the cached header
	n       uint8
	generic bool
	dropped bool
}

// chooseFor is choose for a header read through the cache: it reuses the
// header's last choice when made in snap's index, else makes it and keeps
// it. A forged token is dropped from a choice made anew, never kept.
func (d *Decider) chooseFor(snap *Snapshot, h *readHeader, forged string) Match {
	x := snap.groups
	if h.chosen == nil || x == nil || forged != "" {
		return d.choose(snap, &h.tokens, forged)
	}
	if c := h.chosen.Load(); c != nil && c.index == x.self {
		m := Match{n: c.n, generic: c.generic, dropped: c.dropped}
		for i := range c.n {
			m.groups[i], m.tokens[i] = x.named[c.groups[i]], c.tokens[i]
		}
		return m
	}
	m := x.Choose(&h.tokens)
	c := &chosenGroups{index: x.self, tokens: m.tokens, n: m.n, generic: m.generic, dropped: m.dropped}
	for i := range m.n {
		p, ok := x.places[m.groups[i]]
		if !ok {
			return m // a group past the places a uint16 holds: not kept
		}
		c.groups[i] = p
	}
	h.chosen.Store(c)
	return m
}

// indexNamed gives x the places of r's named groups, for chosenGroups.
func (x *GroupIndex) indexNamed(r *rules.Robots, tokens []string) {
	x.self = weak.Make(x)
	x.places = make(map[*rules.Group]uint16)
	for _, tok := range tokens {
		if g := r.Group(tok); g != nil {
			if _, ok := x.places[g]; !ok && len(x.named) < 1<<16 {
				x.places[g] = uint16(len(x.named))
				x.named = append(x.named, g)
			}
		}
	}
}
