package rules

import (
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
	keys   []string
	parent []int32   // index of the longest key that is a proper prefix, or -1
	ranks  [][]int32 // the rules filed under each key, by rank
}

// newPrefixIndex files the rules of the given ranks, which come in rank
// order.
func newPrefixIndex(rules []compiled, ranks []int32) prefixIndex {
	byKey := map[string][]int32{}
	for _, rank := range ranks {
		k := rules[rank].pat.prefix()
		byKey[k] = append(byKey[k], rank)
	}
	x := prefixIndex{keys: make([]string, 0, len(byKey))}
	for k := range byKey {
		x.keys = append(x.keys, k)
	}
	slices.Sort(x.keys)
	x.parent = make([]int32, len(x.keys))
	x.ranks = make([][]int32, len(x.keys))
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
		x.ranks[i] = byKey[k] // appended in rank order
	}
	return x
}

// best lowers *best to the rank of the most specific filed rule that
// matches path, if that is better.
func (x *prefixIndex) best(path string, rules []compiled, best *int32) {
	// The greatest key <= path. Every key that is a prefix of path is, by
	// the sort order, a prefix of that key too, so it lies on its chain.
	lo, hi := 0, len(x.keys)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x.keys[mid] <= path {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := int32(lo - 1)
	for i >= 0 && !strings.HasPrefix(path, x.keys[i]) {
		i = x.parent[i]
	}
	for ; i >= 0; i = x.parent[i] {
		for _, rank := range x.ranks[i] {
			if rank >= *best {
				break
			}
			if rules[rank].pat.matchRest(path) {
				*best = rank
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
	lo, hi := 0, len(x.keys)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x.keys[mid] <= path {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := int32(lo - 1)
	for i >= 0 && !strings.HasPrefix(path, x.keys[i]) {
		i = x.parent[i]
	}
	for ; i >= 0; i = x.parent[i] {
		ranks := x.ranks[i]
		j, _ := slices.BinarySearch(ranks, after+1)
		for _, rank := range ranks[j:] {
			if rank >= *best {
				break
			}
			if rules[rank].pat.matchRest(path) {
				*best = rank
				break
			}
		}
	}
}
