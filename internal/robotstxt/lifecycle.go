package robotstxt

import (
	"fmt"
	"time"
)

// Timing of refreshes and of the unreachable state; each says why it has
// its value.
const (
	// MaxRefresh is the longest a fetched robots.txt is used without a new
	// fetch: RFC 9309 §2.4 says a cached copy SHOULD NOT be used for more
	// than 24 hours, unless the file is unreachable.
	MaxRefresh = 24 * time.Hour
	// DefaultMinRefresh is the shortest time between two fetches for one
	// host, whatever the response's cache headers ask: no-store or max-age=0
	// would otherwise cost a fetch per request.
	DefaultMinRefresh = time.Minute
	// BackoffStart is the wait before retrying a failed fetch; it doubles
	// with each consecutive failure up to BackoffMax, so a host that is down
	// costs a handful of fetches an hour, and one that is back is seen
	// within the hour.
	BackoffStart = time.Minute
	// BackoffMax caps the wait between retries.
	BackoffMax = time.Hour
	// UnreachableExpiry is how long a file must stay unreachable before the
	// long-unreachable policy applies: the "reasonably long period of time
	// (for example, 30 days)" of RFC 9309 §2.3.1.4.
	UnreachableExpiry = 30 * 24 * time.Hour
)

// UnreachablePolicy says what applies while a robots.txt cannot be fetched.
type UnreachablePolicy uint8

const (
	// UnreachableDefault selects the setting's documented default.
	UnreachableDefault UnreachablePolicy = iota
	// UnreachableDisallow disallows every target but /robots.txt: complete
	// disallow (RFC 9309 §2.3.1.4).
	UnreachableDisallow
	// UnreachableAllow allows every target, as if the file were
	// unavailable (RFC 9309 §2.3.1.3).
	UnreachableAllow
	// UnreachableKeep keeps the last available or unavailable answer; for
	// StoreConfig.LongUnreachable only.
	UnreachableKeep
)

var policyNames = [...]string{
	UnreachableDefault:  "",
	UnreachableDisallow: "disallow",
	UnreachableAllow:    "allow",
	UnreachableKeep:     "keep",
}

// String returns "disallow", "allow", "keep", or "" for the default.
func (p UnreachablePolicy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// ParseUnreachablePolicy reads a policy name as String writes it; the empty
// string reads as UnreachableDefault.
func ParseUnreachablePolicy(s string) (UnreachablePolicy, error) {
	for p, name := range policyNames {
		if name == s {
			return UnreachablePolicy(p), nil
		}
	}
	return 0, fmt.Errorf("unknown unreachable policy %q: want disallow, allow or keep", s)
}

// lifecycle turns access outcomes into snapshots, by the access rules of
// RFC 9309 §2.3.1 and the caching rules of §2.4. It holds settings only.
type lifecycle struct {
	maxSize     int           // parse limit, at least rules.DefaultMaxSize
	refresh     time.Duration // longest use of a fetched file
	minRefresh  time.Duration // shortest time between fetches
	unreachable UnreachablePolicy
	longUnreach UnreachablePolicy
	keepBody    bool  // keep each file's body in its snapshot
	maxSite     int64 // the most a site holds, a quarter of MaxMemory (see fit)
	onSite      func(SiteEvent, string)
}

// next returns the snapshot that follows prev (nil for a host not fetched
// before) after an access to source with outcome o, ended at now.
func (l *lifecycle) next(prev *Snapshot, source string, o accessOutcome, now time.Time) *Snapshot {
	if o.access == AccessUnreachable {
		return l.failed(prev, source, o, now)
	}
	s := &Snapshot{
		Access:     o.access,
		Source:     source,
		FinalURL:   o.finalURL,
		HTTPStatus: o.status,
		FetchedAt:  now,
		CheckedAt:  now,
		// RFC 9309 §2.4: standard cache control may shorten the 24 hours.
		RefreshAt: now.Add(cacheFreshness(o.header, now, l.minRefresh, l.refresh)),
	}
	if o.err != nil {
		s.Err = o.err.Error()
	}
	if o.access == AccessAvailable {
		s.setFile(prev, o.body, o.truncated, l.maxSize)
		if l.keepBody {
			s.Body = o.body
		}
	}
	s.follow(prev, now)
	l.fit(s, o.body, o.truncated)
	return s
}

// failed is next for an unreachable outcome. RFC 9309 §2.3.1.4: the file
// is undefined, so crawlers assume complete disallow; §2.4 lets a cached copy
// serve past 24 hours while the file is unreachable, so the last available
// or unavailable answer is kept; after a reasonably long time the
// long-unreachable policy takes over.
func (l *lifecycle) failed(prev *Snapshot, source string, o accessOutcome, now time.Time) *Snapshot {
	failures, since := 1, now
	if prev != nil {
		failures = prev.Failures + 1
		if !prev.FailingSince.IsZero() {
			since = prev.FailingSince
		}
	}
	var s Snapshot
	kept := false
	switch {
	case now.Sub(since) >= UnreachableExpiry && l.longUnreach != UnreachableKeep:
		s = Snapshot{Access: AccessLongUnreachable, DisallowAll: l.longUnreach == UnreachableDisallow}
	case prev != nil && (prev.Access == AccessAvailable || prev.Access == AccessUnavailable):
		s, kept = *prev, true // with its times, status and hash
	default:
		s = Snapshot{Access: AccessUnreachable, DisallowAll: l.unreachable != UnreachableAllow}
	}
	if !kept {
		s.Source, s.FinalURL, s.HTTPStatus, s.FetchedAt = source, o.finalURL, o.status, now
		if prev != nil && s.sameContent(prev) {
			s.FetchedAt = prev.FetchedAt // the same undefined state as before
		}
	}
	s.Err = o.err.Error()
	s.Failures, s.FailingSince = failures, since
	s.CheckedAt = now
	s.RefreshAt = now.Add(l.backoff(failures))
	next := s.follow(prev, now)
	l.fit(next, nil, false)
	return next
}

// backoff is the wait before the next attempt after the given number of
// consecutive failures: BackoffStart, doubled each time up to BackoffMax, and
// never longer than the refresh interval. There is no jitter: each host is
// fetched by one goroutine at a time, so retries cannot stampede.
func (l *lifecycle) backoff(failures int) time.Duration {
	d := BackoffStart
	for i := 1; i < failures && d < BackoffMax; i++ {
		d *= 2
	}
	return min(d, BackoffMax, l.refresh)
}
