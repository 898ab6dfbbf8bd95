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

// tokenTable maps a lower-cased token to its entry.
type tokenTable map[string]*tokenEntry

// get finds the entry of tok, ignoring ASCII case, without allocating: the
// folded copy lives on the stack, and a map index by string(bytes) does
// not copy.
func (t tokenTable) get(tok string) *tokenEntry {
	if len(tok) == 0 || len(tok) > maxTokenLen {
		return nil
	}
	var buf [maxTokenLen]byte
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return t[string(buf[:len(tok)])]
}

// add returns the entry of tok, creating it.
func (t tokenTable) add(tok string) *tokenEntry {
	k := strings.ToLower(tok)
	e := t[k]
	if e == nil {
		e = &tokenEntry{name: tok}
		t[k] = e
	}
	return e
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
