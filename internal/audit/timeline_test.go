package audit

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimelineRemap checks, for times in order, in reverse and shuffled,
// over spans from seconds to years, that the time line keeps every count,
// in the bucket that holds its time, and stays within its bucket count.
func TestTimelineRemap(t *testing.T) {
	const base = 1795294383 // 2026-11-21
	for _, span := range []int64{3, 100, 7200, 86400 * 3, 86400 * 400} {
		times := make([]int64, 500)
		rng := rand.New(rand.NewPCG(uint64(span), 1))
		for i := range times {
			times[i] = base + rng.Int64N(span)
		}
		slices.Sort(times)
		for _, order := range []string{"forward", "reverse", "shuffled"} {
			ts := slices.Clone(times)
			switch order {
			case "reverse":
				slices.Reverse(ts)
			case "shuffled":
				rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
			}
			tl := timeline{n: 48}
			var b []Bucket
			for _, sec := range ts {
				i := tl.place(sec, func(old, cur timeline) { b = remap(b, old, cur) })
				if b == nil {
					b = make([]Bucket, tl.n)
				}
				b[i].Allowed++
			}
			var total int64
			for i, c := range b {
				total += c.Allowed
				start := tl.origin + int64(i)*tl.width
				var want int64
				for _, sec := range ts {
					if sec >= start && sec < start+tl.width {
						want++
					}
				}
				if c.Allowed != want {
					t.Errorf("span %d %s: bucket %d (width %d) counts %d, want %d", span, order, i, tl.width, c.Allowed, want)
				}
			}
			if total != int64(len(ts)) {
				t.Errorf("span %d %s: %d counted, want %d", span, order, total, len(ts))
			}
			if first, last := tl.used(); first < 0 || last >= 48 || tl.width < span/48 {
				t.Errorf("span %d %s: buckets %d to %d of width %d", span, order, first, last, tl.width)
			}
		}
	}
}

// TestWidthFor checks that the width chosen is the narrowest that fits.
func TestWidthFor(t *testing.T) {
	tests := []struct {
		lo, hi, n, from, want int64
	}{
		{0, 0, 48, 1, 1},
		{0, 47, 48, 1, 1},
		{0, 48, 48, 1, 5},
		{0, 47, 48, 15, 15},                // never narrower than from
		{3599, 3600 * 48, 48, 1, 3 * 3600}, // an hour too long for 1h
		{0, 86400 * 365 * 10, 48, 1, 7 * 86400 * 16},
	}
	for _, tt := range tests {
		if got := widthFor(tt.lo, tt.hi, tt.n, tt.from); got != tt.want {
			t.Errorf("widthFor(%d, %d, %d, %d) = %d, want %d", tt.lo, tt.hi, tt.n, tt.from, got, tt.want)
		}
	}
}
