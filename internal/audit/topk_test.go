package audit

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSpaceSavingExact checks that counts are exact while there are no
// more distinct paths than counters.
func TestSpaceSavingExact(t *testing.T) {
	s := newSpaceSaving(4)
	for _, p := range []string{"/a", "/b", "/a", "/c", "/a", "/b", "/d"} {
		s.add([]byte(p))
	}
	got := s.top(3)
	want := []PathCount{{"/a", 3, 0}, {"/b", 2, 0}, {"/c", 1, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) || s.evicts != 0 {
		t.Errorf("top(3) = %v (evictions %d), want %v", got, s.evicts, want)
	}
}

// TestSpaceSavingBounds checks the guarantees of the package
// documentation on skewed random streams, against exact counts: every
// path more frequent than n/k is listed; each listed count is at least
// the true count and at most Error above it; Error is at most n/k.
func TestSpaceSavingBounds(t *testing.T) {
	for _, tt := range []struct {
		k, paths, n int
	}{
		{8, 50, 1000},
		{64, 5000, 100000},
		{16, 1000000, 50000}, // nearly all distinct
	} {
		rng := rand.New(rand.NewPCG(uint64(tt.k), uint64(tt.paths)))
		s := newSpaceSaving(tt.k)
		exact := map[string]int64{}
		for range tt.n {
			// Skewed: the minimum of three draws favours small numbers.
			p := fmt.Sprintf("/p/%d", min(rng.IntN(tt.paths), rng.IntN(tt.paths), rng.IntN(tt.paths)))
			s.add([]byte(p))
			exact[p]++
		}
		bound := int64(tt.n / tt.k)
		listed := map[string]PathCount{}
		for _, c := range s.top(tt.k) {
			listed[c.Path] = c
			if c.Count < exact[c.Path] || c.Count-c.Error > exact[c.Path] || c.Error > bound {
				t.Errorf("k=%d: %s counted %d±%d, true %d, bound %d", tt.k, c.Path, c.Count, c.Error, exact[c.Path], bound)
			}
		}
		for p, n := range exact {
			if _, ok := listed[p]; n > bound && !ok {
				t.Errorf("k=%d: %s seen %d > n/k = %d times is not listed", tt.k, p, n, bound)
			}
		}
		if s.total != int64(tt.n) {
			t.Errorf("k=%d: total %d, want %d", tt.k, s.total, tt.n)
		}
	}
}
