package robotstxt

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// freshness is how long a response may be used before the next fetch:
// what its cache lifetime says (RFC 9111 §4.2.1), never less than floor
// (so no-store cannot turn every request into a fetch), and never more than
// ceiling (RFC 9309 §2.4: not more than 24 hours). A response without
// cache lifetime is used for ceiling.
func cacheFreshness(h http.Header, now time.Time, floor, ceiling time.Duration) time.Duration {
	life, ok := cacheLifetime(h, now)
	if !ok {
		return ceiling
	}
	return min(max(life, floor), ceiling)
}

// maxDeltaSeconds is the largest delta-seconds value kept; RFC 9111 §1.2.2
// has caches read greater values as this one.
const maxDeltaSeconds = 1 << 31

// cacheLifetime returns the remaining freshness lifetime a response states,
// and false when it states none. no-store and no-cache ask for a fetch
// before each use, read here as "as soon as allowed", and so does invalid
// freshness information (RFC 9111 §4.2.1, §5.3). Only the first max-age
// counts (§4.2.1); the Age field is subtracted (§4.2.3). s-maxage is for
// shared caches and is ignored, as is a no-cache limited to named fields,
// which is read as a plain no-cache.
func cacheLifetime(h http.Header, now time.Time) (time.Duration, bool) {
	var life time.Duration
	found := false
	for _, line := range h.Values("Cache-Control") {
		for _, d := range strings.Split(line, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0, true
			case "max-age":
				if found {
					continue
				}
				n, ok := deltaSeconds(strings.Trim(strings.TrimSpace(value), `"`))
				if !ok {
					return 0, true
				}
				life, found = n, true
			}
		}
	}
	if !found {
		exp := h.Get("Expires")
		if exp == "" {
			return 0, false
		}
		t, err := http.ParseTime(exp)
		if err != nil {
			return 0, true // "0" and other invalid dates are in the past
		}
		date := now
		if d, err := http.ParseTime(h.Get("Date")); err == nil {
			date = d
		}
		life = t.Sub(date)
	}
	if age, ok := deltaSeconds(strings.TrimSpace(h.Get("Age"))); ok {
		life -= age
	}
	return max(life, 0), true
}

// deltaSeconds parses a non-negative number of seconds (RFC 9111 §1.2.2).
func deltaSeconds(s string) (time.Duration, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil { // only digits: too large
		n = maxDeltaSeconds
	}
	return time.Duration(min(n, maxDeltaSeconds)) * time.Second, true
}
