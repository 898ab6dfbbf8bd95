package agent

import (
	"hash/maphash"
	"sync/atomic"
)

// A HeaderCache holds values computed from User-Agent headers, so that work
// done for a header is done once while the header keeps coming back.
//
// It is two-way set-associative: a header can live in one of two slots
// chosen by its hash, and a new header replaces the older of the two (first
// in, first out within the set). Entries are immutable and swapped in whole,
// so hits write nothing and concurrent readers never contend. The zero value
// holds nothing.
//
// A key is a copy of the header's first keyLimit octets, its length, and a
// seeded 64-bit hash of all of it: two headers that agree on all three are
// taken for the same with odds of 2⁻⁶⁴, which no client can improve on
// without knowing the process's random seed. The copy means an entry never
// keeps a request's memory alive.
type HeaderCache[V any] struct {
	seed     maphash.Seed
	keyLimit int
	sets     [][2]atomic.Pointer[headerEntry[V]]
	seq      atomic.Uint64
}

// A headerEntry is one cached value. It is immutable.
type headerEntry[V any] struct {
	hash   uint64
	length int
	key    string // the header's first keyLimit octets, copied
	seq    uint64 // insertion order
	val    V
}

// newHeaderCache returns a cache of at most entries values (rounded down to
// an even number, and at least 2), keyed by copies of at most keyLimit
// octets.
func NewHeaderCache[V any](entries, keyLimit int) HeaderCache[V] {
	return HeaderCache[V]{
		seed:     maphash.MakeSeed(),
		keyLimit: keyLimit,
		sets:     make([][2]atomic.Pointer[headerEntry[V]], max(entries/2, 1)),
	}
}

// Get returns the value cached for header s, computing and caching it with
// compute on a miss. compute receives the key copy, so that a value may hold
// substrings of it.
func (c *HeaderCache[V]) Get(s string, compute func(key string) V) *V {
	if len(c.sets) == 0 {
		return c.add(s, 0, nil, compute)
	}
	h := maphash.String(c.seed, s)
	// Map the hash onto the sets by multiplication, not division.
	set := &c.sets[(h>>32)*uint64(len(c.sets))>>32]
	for w := range set {
		if e := set[w].Load(); e != nil && e.hash == h && e.length == len(s) && e.key == s[:len(e.key)] {
			return &e.val
		}
	}
	return c.add(s, h, set, compute)
}

// add computes the value of header s, of hash h, and keeps it in set (when
// not nil). It is Get's miss.
func (c *HeaderCache[V]) add(s string, h uint64, set *[2]atomic.Pointer[headerEntry[V]], compute func(key string) V) *V {
	if set == nil {
		v := compute(s)
		return &v
	}
	key := string([]byte(s[:min(len(s), c.keyLimit)]))
	e := &headerEntry[V]{hash: h, length: len(s), key: key, seq: c.seq.Add(1)}
	e.val = compute(key)
	w := 0
	switch e0, e1 := set[0].Load(), set[1].Load(); {
	case e0 == nil:
	case e1 == nil || e1.seq < e0.seq:
		w = 1
	}
	set[w].Store(e)
	return &e.val
}

// len returns the number of entries held.
func (c *HeaderCache[V]) len() int {
	n := 0
	for i := range c.sets {
		for w := range c.sets[i] {
			if c.sets[i][w].Load() != nil {
				n++
			}
		}
	}
	return n
}
