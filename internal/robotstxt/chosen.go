package robotstxt

import (
	"sync/atomic"
	"weak"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// A Choice is a header's choice of groups in one GroupIndex, kept with
// the header's cached reading (see ChooseCached): a crawler sends the same header, against
// the same robots.txt, request after request, and the choice costs a
// filter probe and a map lookup per candidate token where reusing it
// costs a comparison. It names the groups by their place in the index
// and the index by a weak pointer, so that a cached header never keeps a
// robots.txt the store has let go of. It is immutable.
type Choice struct {
	index   weak.Pointer[GroupIndex]
	groups  [MaxGroups]uint16 // places in index.named
	tokens  [MaxGroups]string // substrings of the cached header
	n       uint8
	generic bool
	dropped bool
}

// ChooseCached is Choose for tokens read through a cache that keeps the
// header's last choice in cache: it reuses that choice when it was made
// in x, else makes it and keeps it.
func (x *GroupIndex) ChooseCached(t *agent.Tokens, cache *atomic.Pointer[Choice]) Match {
	if x.places == nil {
		return x.Choose(t) // an earlier version's index, or no file: nothing to name groups by
	}
	if c := cache.Load(); c != nil && c.index == x.self {
		m := Match{n: c.n, generic: c.generic, dropped: c.dropped}
		for i := range c.n {
			m.groups[i], m.tokens[i] = x.named[c.groups[i]], c.tokens[i]
		}
		return m
	}
	m := x.Choose(t)
	c := &Choice{index: x.self, tokens: m.tokens, n: m.n, generic: m.generic, dropped: m.dropped}
	for i := range m.n {
		p, ok := x.places[m.groups[i]]
		if !ok {
			return m // a group past the places a uint16 holds: not kept
		}
		c.groups[i] = p
	}
	cache.Store(c)
	return m
}

// indexNamed gives x the places of r's named groups, for Choice.
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
