package audit

// The time line counts each crawler's records in a fixed number of buckets
// of equal width, shared by all crawlers, so that a report can draw them
// side by side. The range of the logs is not known before they are read,
// and rotated logs, or the logs of several instances, may come in any
// order and interleave in time, so the buckets start as narrow as possible
// and widen when a record falls outside them. Each width of bucketWidths
// divides the next and buckets start at multiples of their width (from
// the Unix epoch, in UTC), so a wider bucket is always a whole number of
// narrower ones, and counts move over exactly. The final layout is the
// narrowest width whose buckets cover the earliest and latest time read,
// whatever the order: the same logs in another order give the same time
// line.

// bucketWidths are the bucket widths in seconds, narrowest first; past the
// last, widths double.
var bucketWidths = [...]int64{
	1, 5, 15, 30, // seconds
	60, 5 * 60, 15 * 60, 30 * 60, // minutes
	3600, 3 * 3600, 6 * 3600, 12 * 3600, // hours
	86400, 7 * 86400, // a day, a week
}

// Bucket counts the records of one crawler in one time bucket, by what
// they count as.
type Bucket struct {
	Allowed, Violations, Grace, Protective int64
}

// timeline places times (Unix seconds) in n buckets.
type timeline struct {
	n      int64
	width  int64 // 0 until the first time
	origin int64 // the first bucket's start, a multiple of width
	lo, hi int64 // the earliest and latest times placed
}

// place returns the bucket of sec. When sec falls outside the buckets it
// first widens or moves them, calling move with the old and new layout so
// that the caller can move its counts.
func (t *timeline) place(sec int64, move func(old, cur timeline)) int {
	if t.width == 0 {
		t.width = bucketWidths[0]
		t.origin = floorTo(sec, t.width)
		t.lo, t.hi = sec, sec
	}
	if sec < t.origin || sec >= t.origin+t.n*t.width {
		old := *t
		lo, hi := min(t.lo, sec), max(t.hi, sec)
		t.width = widthFor(lo, hi, t.n, t.width)
		if sec < old.origin {
			// Going back in time: leave room before, where more is likely.
			t.origin = floorTo(hi, t.width) - (t.n-1)*t.width
		} else {
			t.origin = floorTo(lo, t.width)
		}
		move(old, *t)
	}
	t.lo, t.hi = min(t.lo, sec), max(t.hi, sec)
	return int((sec - t.origin) / t.width)
}

// remap moves counts from the layout old to cur; every bucket of old lies
// within one of cur.
func remap(b []Bucket, old, cur timeline) []Bucket {
	out := make([]Bucket, cur.n)
	for i, c := range b {
		if c == (Bucket{}) {
			continue
		}
		j := (old.origin + int64(i)*old.width - cur.origin) / cur.width
		out[j].Allowed += c.Allowed
		out[j].Violations += c.Violations
		out[j].Grace += c.Grace
		out[j].Protective += c.Protective
	}
	return out
}

// widthFor returns the narrowest width, at least from, whose n buckets
// cover lo to hi.
func widthFor(lo, hi, n, from int64) int64 {
	w := int64(0)
	for i := 0; ; i++ {
		if i < len(bucketWidths) {
			w = bucketWidths[i]
		} else {
			w *= 2
		}
		if w >= from && floorTo(hi, w)-floorTo(lo, w) < n*w {
			return w
		}
	}
}

// floorTo rounds t down to a multiple of w, also for negative t.
func floorTo(t, w int64) int64 {
	r := t % w
	if r < 0 {
		r += w
	}
	return t - r
}

// used returns the first and last bucket holding a time.
func (t *timeline) used() (first, last int) {
	return int((t.lo - t.origin) / t.width), int((t.hi - t.origin) / t.width)
}
