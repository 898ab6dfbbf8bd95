package robotstxt

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// weightTolerance and weightSlack bound how far a snapshot's weight may
// be from what the runtime's heap figures say it holds: a fraction of the
// latter, or weightSlack octets for the smallest. Beyond the parsed file
// (see rules.TestHeldSizeCount), what is estimated is the size of the
// group index's maps.
const (
	weightTolerance = 0.05
	weightSlack     = 128
)

// corpusFile is a robots.txt of ../../testdata/robots.
type corpusFile struct {
	name string
	body []byte
}

func loadRobotsCorpus(tb testing.TB) []corpusFile {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "robots", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no robots.txt files in ../../testdata/robots: %v", err)
	}
	var out []corpusFile
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, corpusFile{strings.TrimSuffix(filepath.Base(f), ".txt"), b})
	}
	return out
}

// heapPerCopy returns the heap one of copies values made by mk holds,
// by the runtime's figures after a collection, the values kept alive. Two
// collections before the first figure empty the pools that a collection
// during the count would otherwise empty, which would take from it.
func heapPerCopy[T any](copies int, mk func() T) float64 {
	held := make([]T, copies)
	var before, after runtime.MemStats
	runtime.GC()
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

// TestSiteWeightCount checks what a Snapshot weighs against the runtime's
// heap figures, over the files in ../../testdata/robots: a version alone,
// and a version with the one it replaced, kept as compliance reads it.
func TestSiteWeightCount(t *testing.T) {
	corpus := loadRobotsCorpus(t)
	const src = "https://example.com/robots.txt"
	t0 := snapEpoch
	for i, f := range corpus {
		prevBody := corpus[(i+1)%len(corpus)].body
		for _, chain := range []bool{false, true} {
			mk := func() *Snapshot {
				if !chain {
					return NewVersion(nil, src, f.body, t0)
				}
				return NewVersion(NewVersion(nil, src, prevBody, t0), src, f.body, t0.Add(time.Hour))
			}
			copies := min(32, max(2, (256<<10)/(len(f.body)+len(prevBody))))
			s := mk()
			got := float64(s.weight())
			measured := heapPerCopy(copies, mk)
			if math.Abs(got-measured) > weightTolerance*measured {
				// What else the process allocates meanwhile only adds:
				// count again before failing.
				measured = min(measured, heapPerCopy(copies, mk))
			}
			if chain && len(s.Earlier) != 1 {
				t.Fatalf("%s: %d earlier versions, want 1", f.name, len(s.Earlier))
			}
			off := (got - measured) / measured
			t.Logf("%-24s with the version before: %-5v heap %9.0f, weight %9.0f (%+.2f%%)", f.name, chain, measured, got, 100*off)
			if math.Abs(off) > weightTolerance && math.Abs(got-measured) > weightSlack {
				t.Errorf("%s (with the version before: %v): weight() = %.0f, the heap says %.0f: %+.1f%%, want within %.0f%% or %d octets",
					f.name, chain, got, measured, 100*off, 100*weightTolerance, weightSlack)
			}
		}
	}
}
