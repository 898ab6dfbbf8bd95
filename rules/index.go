package rules

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// A prefixIndex finds the rules that can match a path without trying every
// rule: each rule is filed under the literal prefix its pattern starts with
// (the text before its first "*"), and only the rules filed under prefixes of
// the path are tried. The prefixes are kept sorted, each with a link to the
// longest other prefix that is a prefix of it, so the prefixes of a path are
// found with one binary search and a walk along those links.
type prefixIndex struct {
	keys []string
	// heads[i] is head(keys[i]). The binary search compares these integers
	// first and the strings only when they are equal: on twitter.com's mix
	// the string comparisons took a tenth of a decision's time (pprof).
	heads  []uint64
	parent []int32   // index of the longest key that is a proper prefix, or -1
	filed  [][]filed // the rules filed under each key, by rank
}

// filed is a rule filed under a key, with what a path that starts with the
// key still needs for the rule to match. Most patterns are their key alone
// and need nothing more: telling so here spares a call, and the loads of the
// rule's pattern, for each (on twitter.com's mix, matchRest took 7% of a
// decision's time, pprof).
type filed struct {
	rank int32
	rest restKind
}

// restKind says what a path that starts with a rule's key still needs.
type restKind uint8

const (
	restNone  restKind = iota // nothing: the pattern is the key
	restEnd                   // to end there: the pattern is the key and "$"
	restMatch                 // the rest of the pattern: Pattern.matchRest
)

// newPrefixIndex files the rules of the given ranks, which come in rank
// order.
func newPrefixIndex(rules []compiled, ranks []int32) prefixIndex {
	byKey := map[string][]filed{}
	for _, rank := range ranks {
		p := &rules[rank].pat
		f := filed{rank: rank, rest: restMatch}
		if len(p.segs) == 1 {
			f.rest = restNone
			if p.anchored {
				f.rest = restEnd
			}
		}
		byKey[p.prefix()] = append(byKey[p.prefix()], f)
	}
	x := prefixIndex{keys: make([]string, 0, len(byKey))}
	for k := range byKey {
		x.keys = append(x.keys, k)
	}
	slices.Sort(x.keys)
	x.heads = make([]uint64, len(x.keys))
	x.parent = make([]int32, len(x.keys))
	x.filed = make([][]filed, len(x.keys))
	var stack []int32
	for i, k := range x.keys {
		for len(stack) > 0 && !strings.HasPrefix(k, x.keys[stack[len(stack)-1]]) {
			stack = stack[:len(stack)-1]
		}
		x.parent[i] = -1
		if len(stack) > 0 {
			x.parent[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
		x.heads[i] = head(k)
		x.filed[i] = byKey[k] // appended in rank order
	}
	return x
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
func (x *prefixIndex) longest(path string) int32 {
	// The greatest key <= path. Every key that is a prefix of path is, by
	// the sort order, a prefix of that key too, so it lies on its chain.
	h := head(path)
	lo, hi := 0, len(x.keys)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if kh := x.heads[mid]; kh < h || kh == h && x.keys[mid] <= path {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := int32(lo - 1)
	for i >= 0 && !strings.HasPrefix(path, x.keys[i]) {
		i = x.parent[i]
	}
	return i
}

// matches reports whether path, which starts with key, matches rule f.
func (f filed) matches(path, key string, rules []compiled) bool {
	switch f.rest {
	case restNone:
		return true
	case restEnd:
		return len(path) == len(key)
	}
	return rules[f.rank].pat.matchRest(path)
}

// best lowers *best to the rank of the most specific filed rule that
// matches path, if that is better.
func (x *prefixIndex) best(path string, rules []compiled, best *int32) {
	for i := x.longest(path); i >= 0; i = x.parent[i] {
		for _, f := range x.filed[i] {
			if f.rank >= *best {
				break
			}
			if f.matches(path, x.keys[i], rules) {
				*best = f.rank
				break
			}
		}
	}
}

// bestAfter is best for ranks after the rank after: it lowers *best to the
// first rank past after whose filed rule matches path. Content-Usage
// lookups use it to find, past the most specific rule, the others as
// specific (see usageIndex.lookup); decisions use best, which this leaves
// as lean as it was.
func (x *prefixIndex) bestAfter(path string, rules []compiled, after int32, best *int32) {
	for i := x.longest(path); i >= 0; i = x.parent[i] {
		under := x.filed[i]
		j, _ := slices.BinarySearchFunc(under, after+1, func(f filed, rank int32) int { return cmp.Compare(f.rank, rank) })
		for _, f := range under[j:] {
			if f.rank >= *best {
				break
			}
			if f.matches(path, x.keys[i], rules) {
				*best = f.rank
				break
			}
		}
	}
}
