package rules

import (
	"strings"
	"sync"
)

// A floatIndex finds "floating" rules: rules whose text before the first
// "*" says almost nothing ("/*?sessionid=", "/*/print/", "*.pdf$"). Filed by
// that prefix they would all be tried on every path, and real files have
// hundreds of them. Instead each is filed under a key: four octets that
// must occur in any path it matches, taken from a literal segment after a
// "*". A path then only tries the rules whose key occurs in it, found by
// looking up the four octets at each position of the path, in a hash table
// laid out flat: the entries of bucket b are entries[start[b]:start[b+1]],
// in rank order.
//
// Most positions hold no key, and are turned away before the table is read:
// first by the octet there (starts), which must begin some key, then by a
// filter with a bit for each key's hash. Keys are chosen to begin with a
// delimiter ("/", "?", "&", "=", ".", ";") where a rule has one, since
// fewer positions of a path hold a delimiter than a letter. (Looking at
// every position in one pass costs less than searching the path for each
// octet keys start with, with strings.IndexByte: BenchmarkDecide,
// interleaved, 177 against 372 ns on github.com, 186 against 344 on
// dell.com, 145 against 186 on nytimes.com, the same within noise on ten
// other files.)
//
// A rule's key can occur at many positions of a path, but the rule itself is
// checked at most once per decision (a bitset on the stack records which
// were tried), so a decision costs no more than the path's length in
// look-ups plus one check per floating rule. That bitset bounds how many
// rules the index takes: maxFloating; any more stay with their prefix.
type floatIndex struct {
	starts  *[256]bool // the octets keys start with: isDelimiter when it holds them all
	filter  *[keyFilterBits / 64]uint64
	shift   uint32 // 32 less the bits of a bucket number
	start   []uint32
	entries []keyedRank
}

type keyedRank struct {
	key  uint32
	rank int32
	id   uint16    // the pattern's number among floating ones, for tried
	rest restKind8 // restLast or restMatch
	pre  uint8     // the length of the pattern's first segment: 0 or 1
}

// restKind8 is a restKind in an octet.
type restKind8 uint8

// keyFilterBits is the size of a floatIndex's filter: 512 octets, few
// enough to keep per group, enough that a group's few dozen keys leave most
// bits unmarked. (A filter sized to the keys, read with a shift and a
// bound that vary, and a bitset of first octets for starts, made the
// floating index a sixth slower on dell.com's file: its part of
// BenchmarkDecide's decisions, interleaved.)
const keyFilterBits = 1 << 12

// keyLen is the length of a key. Four octets tell most patterns apart
// ("?lid", "/pri", ".pdf") and fit one integer; a pattern with no later
// segment that long stays with its prefix.
const keyLen = 4

// isDelimiter marks the octets that start delimiter keys.
var isDelimiter = [256]bool{'/': true, '?': true, '&': true, '=': true, '.': true, ';': true}

// appendKeyCandidates appends the keys a pattern could be filed under:
// every keyLen octets of its segments after the first, those starting with
// a delimiter if there are any. It appends none when the pattern is better
// filed by its prefix: when the prefix is more than one octet long, or no
// later segment is long enough for a key.
func appendKeyCandidates(dst []uint32, text string, sep byte) []uint32 {
	first := strings.IndexByte(text, sep)
	if first < 0 || first > 1 {
		return dst
	}
	start := len(dst)
	delim := false
	for rest := text[first+1:]; rest != ""; {
		seg := rest
		if end := strings.IndexByte(rest, sep); end >= 0 {
			seg, rest = rest[:end], rest[end+1:]
		} else {
			rest = ""
		}
		for i := 0; i+keyLen <= len(seg); i++ {
			switch d := isDelimiter[seg[i]]; {
			case d && !delim: // the first delimiter key: drop the others
				dst, delim = dst[:start], true
				fallthrough
			case d == delim:
				dst = append(dst, packKey(seg, i))
			}
		}
	}
	return dst
}

// newFloatIndex files the floating patterns of m (by rank) and returns the
// index and the ranks it did not take.
func newFloatIndex(m *matcher) (*floatIndex, []int32) {
	// Each pattern takes, of its candidate keys, the one fewest patterns
	// could take: the fewer share a key, the fewer are checked in vain.
	var keys []uint32
	ends := make([]int, len(m.pats))
	uses := map[uint32]int{}
	for rank := range m.pats {
		before := len(keys)
		text, sep, _ := m.pattern(int32(rank))
		keys = appendKeyCandidates(keys, text, sep)
		for _, k := range keys[before:] {
			uses[k]++
		}
		ends[rank] = len(keys)
	}
	var entries []keyedRank
	rest := make([]int32, 0, len(m.pats))
	for rank, end := range ends {
		start := 0
		if rank > 0 {
			start = ends[rank-1]
		}
		if start == end || len(entries) == maxFloating {
			rest = append(rest, int32(rank))
			continue
		}
		key := keys[start]
		for _, k := range keys[start+1 : end] {
			if uses[k] < uses[key] {
				key = k
			}
		}
		text, sep, anchored := m.pattern(int32(rank))
		pre := strings.IndexByte(text, sep)
		entries = append(entries, keyedRank{key: key, rank: int32(rank), id: uint16(len(entries)),
			rest: restKind8(restOf(text, sep, anchored, pre)), pre: uint8(pre)})
	}
	return newFloatTable(entries), rest
}

// newFloatTable lays out the table of the given entries, which come in
// rank order.
func newFloatTable(entries []keyedRank) *floatIndex {
	if len(entries) == 0 {
		return nil
	}
	// At least twice as many buckets as entries keeps buckets short.
	bits := uint32(4)
	for 1<<bits < 2*len(entries) {
		bits++
	}
	x := &floatIndex{starts: &isDelimiter, filter: new([keyFilterBits / 64]uint64), shift: 32 - bits,
		start: make([]uint32, 1<<bits+1), entries: make([]keyedRank, len(entries))}
	for _, e := range entries {
		if c := e.key >> 24; !x.starts[c] {
			// A key starts with an octet that is no delimiter: the index
			// needs a table of its own. (Most do not: keys are chosen to
			// start with one.)
			if x.starts == &isDelimiter {
				x.starts = new([256]bool)
				for _, e := range entries {
					x.starts[e.key>>24] = true
				}
			}
		}
		b := filterBit(e.key)
		x.filter[b/64] |= 1 << (b % 64)
		x.start[x.bucket(e.key)+1]++
	}
	for b := 1; b < len(x.start); b++ {
		x.start[b] += x.start[b-1]
	}
	fill := append([]uint32(nil), x.start...)
	for _, e := range entries { // in rank order, and so they stay
		b := x.bucket(e.key)
		x.entries[fill[b]] = e
		fill[b]++
	}
	return x
}

// hashKey hashes a key (Fibonacci hashing: key×2³²/φ, whose top bits are
// the best mixed).
func hashKey(key uint32) uint32 { return key * 2654435769 }

// filterBit returns the filter bit of a key.
func filterBit(key uint32) uint32 { return hashKey(key) >> (32 - 12) }

// bucket returns the bucket of a key.
func (x *floatIndex) bucket(key uint32) uint32 { return hashKey(key) >> x.shift }

// best lowers *best to the rank of the most specific floating pattern past
// rank after that matches path, if that is better. Decisions pass -1.
func (x *floatIndex) best(m *matcher, path string, after int32, best *int32) {
	if len(x.entries) == 0 {
		return
	}
	// Read once, not at each position: the loop calls try, after which
	// fields of x would be read again.
	starts, filter := x.starts, x.filter
	var done tried
	for i := 0; i+keyLen <= len(path); i++ {
		if !starts[path[i]] {
			continue
		}
		key := packKey(path, i)
		if b := filterBit(key); filter[b/64]&(1<<(b%64)) != 0 {
			x.try(m, key, path, after, best, &done)
		}
	}
	done.release()
}

// try checks the patterns filed under key with ranks past after against
// path.
func (x *floatIndex) try(m *matcher, key uint32, path string, after int32, best *int32, done *tried) {
	b := x.bucket(key)
	for _, e := range x.entries[x.start[b]:x.start[b+1]] {
		if e.rank >= *best {
			return
		}
		if e.rank > after && e.key == key && done.first(e.id) && e.match(m, path) {
			*best = e.rank
			return
		}
	}
}

// match reports whether path matches the pattern e is filed for.
func (e *keyedRank) match(m *matcher, path string) bool {
	if e.pre == 1 && (path == "" || path[0] != m.text[m.pats[e.rank].off]) {
		return false
	}
	return m.matchAfterKey(e.rank, restKind(e.rest), uint32(e.pre), path)
}

// packKey packs the keyLen octets of s at i into an integer.
func packKey(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i])<<24 | uint32(s[i+1])<<16 | uint32(s[i+2])<<8 | uint32(s[i+3])
}

// maxFloating is the number of rules a floatIndex takes, so that a rule's
// number fits the bitset of tried rules (512 octets).
const maxFloating = 4096

// tried records which floating rules a decision has checked. Most decisions
// check a handful, held inline; a decision that checks more borrows a
// bitset from a pool, so none allocates.
type tried struct {
	few  [16]uint16
	n    int
	many *[maxFloating / 64]uint64
}

var triedPool = sync.Pool{New: func() any { return new([maxFloating / 64]uint64) }}

// first marks rule id as tried and reports whether it was not before.
func (t *tried) first(id uint16) bool {
	if t.many == nil {
		for _, f := range t.few[:t.n] {
			if f == id {
				return false
			}
		}
		if t.n < len(t.few) {
			t.few[t.n] = id
			t.n++
			return true
		}
		t.many = triedPool.Get().(*[maxFloating / 64]uint64)
		for _, f := range t.few {
			t.many[f/64] |= 1 << (f % 64)
		}
	}
	w, bit := id/64, uint64(1)<<(id%64)
	if t.many[w]&bit != 0 {
		return false
	}
	t.many[w] |= bit
	return true
}

// release returns a borrowed bitset, cleared, to the pool.
func (t *tried) release() {
	if t.many != nil {
		*t.many = [maxFloating / 64]uint64{}
		triedPool.Put(t.many)
		t.many = nil
	}
}
