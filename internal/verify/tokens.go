package verify

import (
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/gaissmai/bart"
)

// maxTokenLen bounds a product token: catalogued tokens are under 30
// octets, and the bound lets a lookup fold case into a stack buffer.
const maxTokenLen = 64

// tokenEntry is what the verifier knows about one product token. Its
// fields are set in New and never change, except ranges, which is swapped
// whole when a list the token relies on is loaded.
type tokenEntry struct {
	name     string       // as first configured
	lists    []*listState // range lists proving the token
	suffixes []string     // reverse DNS domains, lower case, no outer dots
	agents   bool         // some signature agent speaks for the token
	ranges   atomic.Pointer[tokenRanges]
}

// tokenRanges is an immutable union of a token's loaded range lists.
type tokenRanges struct {
	table *bart.Lite
	// complete reports that every list of the token is loaded, so that a
	// miss means the address is in none of them.
	complete bool
}

// tokenTable finds a token's entry ignoring ASCII case. It is built with
// add, then frozen into an open-addressing table searched with a hash that
// folds case as it goes: no copy, no allocation, one pass over the token.
type tokenTable struct {
	byName map[string]*tokenEntry // lower-cased token → entry
	keys   []string               // lower-cased token per slot; "" is empty
	slots  []*tokenEntry
	mask   uint32
}

func newTokenTable() *tokenTable {
	return &tokenTable{byName: make(map[string]*tokenEntry)}
}

// add returns the entry of tok, creating it. Only before freeze.
func (t *tokenTable) add(tok string) *tokenEntry {
	k := strings.ToLower(tok)
	e := t.byName[k]
	if e == nil {
		e = &tokenEntry{name: tok}
		t.byName[k] = e
	}
	return e
}

// freeze builds the lookup table, at most half full so probes stay short.
func (t *tokenTable) freeze() {
	n := uint32(8)
	for int(n) < 2*len(t.byName) {
		n *= 2
	}
	t.keys, t.slots, t.mask = make([]string, n), make([]*tokenEntry, n), n-1
	for k, e := range t.byName {
		i := foldHash(k) & t.mask
		for t.keys[i] != "" {
			i = (i + 1) & t.mask
		}
		t.keys[i], t.slots[i] = k, e
	}
}

// get finds the entry of tok, ignoring ASCII case.
func (t *tokenTable) get(tok string) *tokenEntry {
	if len(tok) == 0 || len(tok) > maxTokenLen || t.mask == 0 {
		return nil
	}
	for i := foldHash(tok) & t.mask; ; i = (i + 1) & t.mask {
		k := t.keys[i]
		if k == "" {
			return nil
		}
		if equalFoldLower(k, tok) {
			return t.slots[i]
		}
	}
}

// foldHash is FNV-1a over s with ASCII letters lower-cased.
func foldHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// equalFoldLower reports whether s equals lower (already lower-case)
// ignoring ASCII case.
func equalFoldLower(lower, s string) bool {
	if len(lower) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasMethod reports whether any method can decide a claim of the token.
func (e *tokenEntry) hasMethod(wba bool) bool {
	return len(e.lists) > 0 || len(e.suffixes) > 0 || (wba && e.agents)
}

// inRanges reports whether addr is in a loaded list of the token, and
// whether all its lists are loaded.
func (e *tokenEntry) inRanges(addr netip.Addr) (hit, complete bool) {
	r := e.ranges.Load()
	if r == nil {
		return false, false
	}
	return r.table.Contains(addr), r.complete
}

// matchSuffix reports whether name equals suffix or lies under it on a
// label boundary: "crawl-1.googlebot.com" is under "googlebot.com",
// "evilgooglebot.com" is not.
func matchSuffix(name, suffix string) bool {
	if len(name) == len(suffix) {
		return name == suffix
	}
	return len(name) > len(suffix) &&
		name[len(name)-len(suffix)-1] == '.' &&
		name[len(name)-len(suffix):] == suffix
}
