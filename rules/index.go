package rules

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// A prefixIndex finds the patterns that can match a path without trying
// every pattern: each is filed under the literal prefix it starts with (its
// first segment), and only those filed under prefixes of the path are
// tried. The prefixes, or keys, are kept sorted, each with a link to the
// longest other key that is a prefix of it, so the keys that are prefixes
// of a path are found with one binary search and a walk along those links.
// It is laid out flat: key i's patterns are filed[keys[i-1].end:keys[i].end],
// in rank order, and its text is in the matcher's text.
type prefixIndex struct {
	// heads[i] is head of key i. The binary search compares these integers
	// first and the strings only when they are equal: on twitter.com's mix
	// the string comparisons took a tenth of a decision's time (pprof).
	heads []uint64
	keys  []prefixKey
	// filed holds, for each key, the rank of each pattern filed under it
	// shifted left by two, and below it what a path that starts with the
	// key still needs for the pattern to match. Most patterns are their key
	// alone and need nothing more: telling so here spares a call, and the
	// loads of the pattern, for each (on twitter.com's mix, matching the
	// rest took 7% of a decision's time, pprof).
	filed []uint32
}

type prefixKey struct {
	off, n uint32 // the key in the matcher's text
	parent int32  // the longest key that is a proper prefix, or -1
	end    uint32 // the end of its run in filed
}

// restKind says what a path that starts with a pattern's key still needs.
type restKind uint32

const (
	restNone  restKind = iota // nothing: the pattern is the key
	restEnd                   // to end there: the pattern is the key and "$"
	restLast                  // one more segment: matcher.matchAfterKey
	restMatch                 // more segments: matcher.matchAfterKey
)

// restOf returns what a path that starts with the first segment of a
// compiled pattern text, first octets long, still needs.
func restOf(text string, sep byte, anchored bool, first int) restKind {
	switch {
	case first == len(text) && anchored:
		return restEnd
	case first == len(text):
		return restNone
	case strings.IndexByte(text[first+1:], sep) < 0:
		return restLast
	}
	return restMatch
}

// newPrefixIndex files the patterns of m of the given ranks, which come in
// rank order.
func newPrefixIndex(m *matcher, ranks []int32) prefixIndex {
	// The entries hold no pointer, so that sorting them moves no pointer
	// the collector must be told of.
	type entry struct {
		head, next uint64 // the key's first sixteen octets, as head reads them
		off, n     uint32 // the key in m.text
		f          uint32 // as filed
	}
	entries := make([]entry, len(ranks))
	for i, rank := range ranks {
		text, sep, anchored := m.pattern(rank)
		key := firstSegment(text, sep)
		rest := restOf(text, sep, anchored, len(key))
		e := entry{head: head(key), off: m.pats[rank].off, n: uint32(len(key)), f: uint32(rank)<<2 | uint32(rest)}
		if len(key) > 8 {
			e.next = head(key[8:])
		}
		entries[i] = e
	}
	keyOf := func(e *entry) string { return m.text[e.off : e.off+e.n] }
	slices.SortFunc(entries, func(a, b entry) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		if c := cmp.Compare(a.next, b.next); c != 0 {
			return c
		}
		if c := strings.Compare(keyOf(&a), keyOf(&b)); c != 0 {
			return c
		}
		return cmp.Compare(a.f, b.f) // by rank
	})
	nkeys := 0
	for i := range entries {
		if i == 0 || keyOf(&entries[i]) != keyOf(&entries[i-1]) {
			nkeys++
		}
	}
	x := prefixIndex{heads: make([]uint64, 0, nkeys), keys: make([]prefixKey, 0, nkeys), filed: make([]uint32, len(entries))}
	var stack []int32
	for i, e := range entries {
		x.filed[i] = e.f
		key := keyOf(&e)
		if i > 0 && key == keyOf(&entries[i-1]) {
			x.keys[len(x.keys)-1].end++
			continue
		}
		for len(stack) > 0 && !strings.HasPrefix(key, x.key(m.text, stack[len(stack)-1])) {
			stack = stack[:len(stack)-1]
		}
		parent := int32(-1)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, int32(len(x.keys)))
		x.heads = append(x.heads, e.head)
		x.keys = append(x.keys, prefixKey{off: e.off, n: e.n, parent: parent, end: uint32(i + 1)})
	}
	return x
}

// key returns the text of key i.
func (x *prefixIndex) key(text string, i int32) string {
	k := &x.keys[i]
	return text[k.off : k.off+k.n]
}

// head returns the first eight octets of s as a big-endian integer, padded
// with zeros. Strings order as their heads do where those differ: s < t
// implies head(s) <= head(t).
func head(s string) uint64 {
	if len(s) >= 8 {
		return binary.BigEndian.Uint64([]byte(s[:8]))
	}
	var h uint64
	for i := 0; i < len(s); i++ {
		h |= uint64(s[i]) << (56 - 8*i)
	}
	return h
}

// longest returns the index of the longest key that is a prefix of path,
// or -1.
func (x *prefixIndex) longest(text, path string) int32 {
	// The greatest key <= path. Every key that is a prefix of path is, by
	// the sort order, a prefix of that key too, so it lies on its chain.
	h := head(path)
	lo, hi := 0, len(x.heads)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if kh := x.heads[mid]; kh < h || kh == h && x.key(text, int32(mid)) <= path {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := int32(lo - 1)
	for i >= 0 && !strings.HasPrefix(path, x.key(text, i)) {
		i = x.keys[i].parent
	}
	return i
}

// best lowers *best to the rank of the most specific filed pattern past
// rank after that matches path, if that is better. Decisions pass -1.
func (x *prefixIndex) best(m *matcher, path string, after int32, best *int32) {
	for i := x.longest(m.text, path); i >= 0; i = x.keys[i].parent {
		k := &x.keys[i]
		start := uint32(0)
		if i > 0 {
			start = x.keys[i-1].end
		}
		under := x.filed[start:k.end]
		if after >= 0 {
			j, _ := slices.BinarySearch(under, uint32(after+1)<<2)
			under = under[j:]
		}
		for _, f := range under {
			rank := int32(f >> 2)
			if rank >= *best {
				break
			}
			// Written out, not a call: most patterns are their key alone.
			switch rest := restKind(f & 3); {
			case rest == restNone,
				rest == restEnd && len(path) == int(k.n),
				rest >= restLast && m.matchAfterKey(rank, rest, k.n, path):
				*best = rank
			default:
				continue
			}
			break
		}
	}
}
