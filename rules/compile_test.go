package rules

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortRanks checks that sortRanks orders rank keys as slices.Sort
// does, for groups small and large, priorities near and far apart, allow
// and disallow mixed.
func TestSortRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 255, 256, 1000, 20000} {
		for _, spread := range []int{3, 300, 0xFFFF} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = rankKey(uint16(rng.IntN(spread)), rng.IntN(2) == 0, uint64(i))
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			sortRanks(keys)
			if !slices.Equal(keys, want) {
				t.Errorf("sortRanks of %d keys, priorities below %d, differs from slices.Sort", n, spread)
			}
		}
	}
}
