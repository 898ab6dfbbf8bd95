package rules

import "sync"

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
	starts  *[256]bool // the octets keys start with
	filter  *[keyFilterBits / 64]uint64
	shift   uint32 // 32 less the bits of a bucket number
	start   []uint32
	entries []keyedRank
}

type keyedRank struct {
	key  uint32
	rank int32
	id   uint16 // the rule's number among floating rules, for tried
}

// keyFilterBits is the size of a floatIndex's filter: 512 octets, few
// enough to keep per group, enough that a group's few dozen keys leave most
// bits unmarked.
const keyFilterBits = 1 << 12

// keyLen is the length of a key. Four octets tell most rules apart
// ("?lid", "/pri", ".pdf") and fit one integer; a rule with no later
// segment that long stays with its prefix.
const keyLen = 4

// isDelimiter marks the octets that start delimiter keys.
var isDelimiter = [256]bool{'/': true, '?': true, '&': true, '=': true, '.': true, ';': true}

// keyCandidates returns the keys a rule could be filed under: every keyLen
// octets of its segments after the first, those starting with a delimiter
// if there are any. It returns nil when the rule is better filed by its
// prefix: when the prefix is more than one octet long, or no later segment
// is long enough for a key.
func keyCandidates(p *Pattern) []uint32 {
	if len(p.segs) < 2 || len(p.prefix()) > 1 {
		return nil
	}
	var delim, other []uint32
	for _, seg := range p.segs[1:] {
		for i := 0; i+keyLen <= len(seg); i++ {
			if isDelimiter[seg[i]] {
				delim = append(delim, packKey(seg, i))
			} else {
				other = append(other, packKey(seg, i))
			}
		}
	}
	if len(delim) > 0 {
		return delim
	}
	return other
}

// newFloatIndex files the floating rules of rules (by rank) and returns the
// index and the ranks it did not take.
func newFloatIndex(rules []compiled) (floatIndex, []int32) {
	// Each rule takes, of its candidate keys, the one fewest rules could
	// take: the fewer rules share a key, the fewer are checked in vain.
	candidates := make([][]uint32, len(rules))
	uses := map[uint32]int{}
	for rank := range rules {
		candidates[rank] = keyCandidates(&rules[rank].pat)
		for _, k := range candidates[rank] {
			uses[k]++
		}
	}
	var entries []keyedRank
	var rest []int32
	for rank, keys := range candidates {
		if len(keys) == 0 || len(entries) == maxFloating {
			rest = append(rest, int32(rank))
			continue
		}
		key := keys[0]
		for _, k := range keys[1:] {
			if uses[k] < uses[key] {
				key = k
			}
		}
		entries = append(entries, keyedRank{key: key, rank: int32(rank), id: uint16(len(entries))})
	}
	return newFloatTable(entries), rest
}

// newFloatTable lays out the table of the given entries, which come in
// rank order.
func newFloatTable(entries []keyedRank) floatIndex {
	if len(entries) == 0 {
		return floatIndex{}
	}
	// At least twice as many buckets as entries keeps buckets short.
	bits := uint32(4)
	for 1<<bits < 2*len(entries) {
		bits++
	}
	x := floatIndex{starts: new([256]bool), filter: new([keyFilterBits / 64]uint64), shift: 32 - bits,
		start: make([]uint32, 1<<bits+1), entries: make([]keyedRank, len(entries))}
	for _, e := range entries {
		x.starts[e.key>>24] = true
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

// best lowers *best to the rank of the most specific floating rule that
// matches path, if that is better.
func (x *floatIndex) best(path string, rules []compiled, best *int32) {
	x.bestAfter(path, rules, -1, best)
}

// bestAfter is best for ranks past after (see prefixIndex.bestAfter).
func (x *floatIndex) bestAfter(path string, rules []compiled, after int32, best *int32) {
	if len(x.entries) == 0 {
		return
	}
	var done tried
	for i := 0; i+keyLen <= len(path); i++ {
		if !x.starts[path[i]] {
			continue
		}
		key := packKey(path, i)
		if b := filterBit(key); x.filter[b/64]&(1<<(b%64)) != 0 {
			x.try(key, path, rules, after, best, &done)
		}
	}
	done.release()
}

// try checks the rules filed under key with ranks past after against path.
func (x *floatIndex) try(key uint32, path string, rules []compiled, after int32, best *int32, done *tried) {
	b := x.bucket(key)
	for _, e := range x.entries[x.start[b]:x.start[b+1]] {
		if e.rank >= *best {
			return
		}
		if e.rank > after && e.key == key && done.first(e.id) && rules[e.rank].pat.match(path) {
			*best = e.rank
			return
		}
	}
}

// packKey packs the keyLen octets of s at i into an integer.
func packKey(s string, i int) uint32 {
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
