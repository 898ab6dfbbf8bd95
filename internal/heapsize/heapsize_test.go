package heapsize

import (
	"math"
	"runtime"
	"testing"
)

// perCopy returns the heap that one of copies values made by mk holds,
// by the runtime's heap figures, with the values kept alive: the least of
// three counts, since what else the process allocates meanwhile (the
// test framework, the runtime's first uses) only adds.
func perCopy[T any](copies int, mk func() T) float64 {
	least := math.Inf(1)
	for range 3 {
		least = min(least, countCopies(copies, mk))
	}
	return least
}

func countCopies[T any](copies int, mk func() T) float64 {
	held := make([]T, copies)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range held {
		held[i] = mk()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(copies)
}

// TestAlloc checks Alloc against the runtime's heap figures, for requests
// at size classes' edges, with and without pointers, and past 32 KiB.
func TestAlloc(t *testing.T) {
	for _, n := range []int{17, 24, 25, 100, 511, 512, 513, 1000, 1024, 1025, 4000, 9000, 32760, 32768, 32769, 70000, 300000} {
		for _, pointers := range []bool{false, true} {
			copies := max(4, min(512, (4<<20)/n))
			var got float64
			if pointers {
				got = perCopy(copies, func() []*byte { return make([]*byte, (n+7)/8) })
			} else {
				got = perCopy(copies, func() []byte { return make([]byte, n) })
			}
			size := n
			if pointers {
				size = (n + 7) / 8 * 8
			}
			// The runtime's own allocations shift the figure by a few
			// hundred octets over all copies; a size class is 6% or more
			// from the next.
			if want := float64(Alloc(size, pointers)); math.Abs(got-want) > 2+0.005*want {
				t.Errorf("Alloc(%d, %v) = %.0f, the heap says %.1f", size, pointers, want, got)
			}
		}
	}
}

// TestMap checks Map against the runtime's heap figures, within 10%, for
// maps of a pointer and a small value, as the robots.txt index keeps.
func TestMap(t *testing.T) {
	for _, n := range []int{0, 1, 8, 9, 14, 15, 60, 200, 1000, 5000} {
		keys := make([]*int, n) // made before the count, and shared
		for i := range keys {
			keys[i] = new(int)
		}
		got := perCopy(max(4, min(256, 100000/(n+1))), func() map[*int]uint16 {
			m := make(map[*int]uint16)
			for i, k := range keys {
				m[k] = uint16(i)
			}
			return m
		})
		want := float64(Map(n, 16, true))
		if math.Abs(got-want) > 0.1*got {
			t.Errorf("Map(%d, 16, true) = %.0f, the heap says %.0f", n, want, got)
		}
	}
}
