package rules

import (
	"runtime"
	"slices"
	"testing"
)

// maxHeldRatio bounds what a parsed file holds in memory, as a multiple of
// the file's size, at the median of the files in ../testdata/robots. A
// host that serves many sites holds one parsed file per site, and several
// versions of each (docs/performance.md).
const maxHeldRatio = 3

// heldBytes returns the heap a parsed body holds, and what parsing it
// allocates in all, measured with the runtime's heap figures: after a
// collection, with the results kept alive. Small bodies are parsed many
// times over and the figures divided, so that the runtime's own small
// allocations do not count.
func heldBytes(body []byte) (held, allocated float64) {
	copies := min(64, max(1, (256<<10)/(len(body)+1)))
	keep := make([]*Robots, copies)
	Parse(body) // any first-use allocation of the package, out of the count
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = Parse(body)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	n := float64(copies)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n, float64(after.TotalAlloc-before.TotalAlloc) / n
}

// TestHeldSize checks the bound on what a parsed file holds: at the median
// of the files in ../testdata/robots, at most maxHeldRatio times the
// file's size. Run with -v, it prints each file's figures.
func TestHeldSize(t *testing.T) {
	var ratios []float64
	worst, worstName := 0.0, ""
	for _, f := range loadCorpus(t) {
		held, allocated := heldBytes(f.body)
		ratio := held / float64(len(f.body))
		t.Logf("%-24s %7d octets: holds %8.0f (%5.2f×), allocates %8.0f while parsing", f.name, len(f.body), held, ratio, allocated)
		ratios = append(ratios, ratio)
		if ratio > worst {
			worst, worstName = ratio, f.name
		}
	}
	slices.Sort(ratios)
	median := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		median = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	t.Logf("median %.2f× over %d files; most %.2f× (%s)", median, len(ratios), worst, worstName)
	if median > maxHeldRatio {
		t.Errorf("a parsed file holds a median %.2f× its size, want at most %d×", median, maxHeldRatio)
	}
}

// TestMaxParsedSize checks the bound on what ParseWith reads whatever
// Options say, which keeps every offset of the compact form within 32
// bits: the backing text holds at most four octets for each octet read (a
// pattern as written, and again in matching form, three octets for each
// octet it encodes; anything else once at most).
func TestMaxParsedSize(t *testing.T) {
	for _, tt := range []struct{ in, want int }{
		{0, DefaultMaxSize}, {-1, DefaultMaxSize}, {1000, 1000}, {16 << 20, 16 << 20},
		{maxParsedSize, maxParsedSize}, {maxParsedSize + 1, maxParsedSize}, {1 << 40, maxParsedSize},
	} {
		if got := (Options{MaxSize: tt.in}).maxSize(); got != tt.want {
			t.Errorf("Options{MaxSize: %d}.maxSize() = %d, want %d", tt.in, got, tt.want)
		}
	}
	if 4*maxParsedSize >= 1<<32 {
		t.Errorf("maxParsedSize %d: four times it does not fit the compact form's 32-bit offsets", maxParsedSize)
	}
}
