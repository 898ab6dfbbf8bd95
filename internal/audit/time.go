package audit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Magnitudes that tell the unit of a numeric "ts" (see the package
// documentation): 1e11 seconds is the year 5138, 1e11 milliseconds the year
// 1973; so any time from 1973 to 5138 reads right.
const (
	maxSeconds = 1e11
	maxMillis  = 1e14
	maxMicros  = 1e17
)

// timeLayouts are the string forms of "ts" that are read: RFC 3339 and ISO
// 8601 with and without zone (zap's iso8601 encoder writes -0700), Caddy's
// wall clock layout, and the Common Log Format's. A fraction of a second
// after the seconds is read without being in the layout. Layouts without a
// zone are read as UTC.
var timeLayouts = [...]string{
	time.RFC3339,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006/01/02 15:04:05",
	"02/Jan/2006:15:04:05 -0700",
}

// recordTime returns the time of a record's "ts" in Unix nanoseconds, and
// false when there is none that can be read.
func recordTime(rec *rawRecord) (int64, bool) {
	if rec.has&hasTS == 0 {
		return 0, false
	}
	return timeOf(rec.ts, rec.tsString)
}

// timeOf reads a time field's value, a JSON string or number (see the
// package documentation), in Unix nanoseconds; false when it cannot be
// read.
func timeOf(b []byte, isString bool) (int64, bool) {
	if isString {
		s := string(b)
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				return unixNanos(t)
			}
		}
		return 0, false
	}
	return numericTime(b)
}

func unixNanos(t time.Time) (int64, bool) {
	if t.Year() < 1971 || t.Year() > 2261 { // int64 nanoseconds end in 2262
		return 0, false
	}
	return t.UnixNano(), true
}

// numericTime reads a JSON number as Unix time in the unit its magnitude
// tells. The common form, digits with an optional fraction, is read
// without floating point, to the nanosecond.
func numericTime(b []byte) (int64, bool) {
	var ip int64
	i := 0
	for ; i < len(b) && isDigit(b[i]); i++ {
		if ip > (math.MaxInt64-9)/10 {
			return 0, false
		}
		ip = ip*10 + int64(b[i]-'0')
	}
	frac := []byte(nil)
	if i < len(b) && b[i] == '.' {
		frac = b[i+1:]
		for _, c := range frac {
			if !isDigit(c) {
				return floatTime(b) // an exponent
			}
		}
	} else if i == 0 || i < len(b) {
		return floatTime(b) // a sign or an exponent
	}
	unit := unitOf(float64(ip))
	if ip > math.MaxInt64/unit {
		return 0, false
	}
	ns := ip * unit
	for f, c := unit/10, frac; f > 0 && len(c) > 0; f, c = f/10, c[1:] {
		ns += int64(c[0]-'0') * f
	}
	return ns, ns > 0
}

func floatTime(b []byte) (int64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f <= 0 {
		return 0, false
	}
	ns := f * float64(unitOf(f))
	if ns >= math.MaxInt64 {
		return 0, false
	}
	return int64(ns), true
}

// unitOf returns, in nanoseconds, the unit of a Unix time of magnitude v.
func unitOf(v float64) int64 {
	switch {
	case v < maxSeconds:
		return int64(time.Second)
	case v < maxMillis:
		return int64(time.Millisecond)
	case v < maxMicros:
		return int64(time.Microsecond)
	}
	return 1
}

// ParseTime reads a time given on a command line: RFC 3339
// (2026-11-21T08:00:00Z), a date and time without zone, read as UTC
// (2026-11-21T08:00, 2026-11-21 08:00:00), a date (2026-11-21, its
// midnight UTC), or a duration before now (90m, 24h, 7d).
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, ok := parseAgo(s); ok {
		return now.Add(-d), nil
	}
	for _, layout := range [...]string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC 3339 (2026-11-21T08:00:00Z), a date (2026-11-21) or a duration before now (24h, 7d)", s)
}

// parseAgo reads a positive Go duration, or a whole number of days ("7d").
func parseAgo(s string) (time.Duration, bool) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, false
		}
		return time.Duration(n) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}
