package verify

import (
	"net/netip"
	"slices"

	"github.com/gaissmai/bart"
)

// maxListedLists bounds the range lists ListedTokens tells apart: one bit
// of a mask each. The built-in table holds 18; an operator's own lists
// past the 64th prove their tokens to Verify but not to ListedTokens.
const maxListedLists = 64

// listedTable answers which lists hold an address, in one longest-prefix
// lookup: each prefix carries the mask of the lists holding it or any
// prefix around it, and each mask the tokens those lists prove.
type listedTable struct {
	table  *bart.Table[uint64]
	tokens map[uint64][]string
}

// ListedTokens returns the product tokens whose range lists, as loaded,
// hold addr, nil when none do. It is one prefix lookup with no
// allocation, for a caller that asks it of every client: which crawler an
// address is, whatever its User-Agent says. The slice is shared: do not
// modify it.
func (v *Verifier) ListedTokens(addr netip.Addr) []string {
	v.used()
	t := v.listed.Load()
	if t == nil || !addr.IsValid() {
		return nil
	}
	mask, ok := t.table.Lookup(unmap(addr))
	if !ok || mask == 0 {
		return nil
	}
	return t.tokens[mask]
}

// rebuildListed builds the table of ListedTokens from the lists as they
// are loaded. v.rangeMu is held.
func (v *Verifier) rebuildListed() {
	own := make(map[netip.Prefix]uint64)
	for i, l := range v.lists[:min(len(v.lists), maxListedLists)] {
		if c := l.cur.Load(); c != nil {
			for _, p := range c.prefixes {
				own[p] |= 1 << i
			}
		}
	}
	prefixes := make([]netip.Prefix, 0, len(own))
	for p := range own {
		prefixes = append(prefixes, p)
	}
	// Wider first: each prefix then finds the lists of the prefixes around
	// it already in the table, and carries them with its own.
	slices.SortFunc(prefixes, func(a, b netip.Prefix) int { return a.Bits() - b.Bits() })
	t := &listedTable{table: new(bart.Table[uint64]), tokens: make(map[uint64][]string)}
	for _, p := range prefixes {
		mask := own[p]
		if around, ok := t.table.LookupPrefix(p); ok {
			mask |= around
		}
		t.table.Insert(p, mask)
		if _, seen := t.tokens[mask]; !seen {
			t.tokens[mask] = v.tokensOf(mask)
		}
	}
	v.listed.Store(t)
}

// tokensOf returns the names of the tokens the lists of mask prove, each
// once.
func (v *Verifier) tokensOf(mask uint64) []string {
	var out []string
	for i, l := range v.lists[:min(len(v.lists), maxListedLists)] {
		if mask&(1<<i) == 0 {
			continue
		}
		for _, e := range l.tokens {
			if !slices.Contains(out, e.name) {
				out = append(out, e.name)
			}
		}
	}
	return out
}
