package robotstxt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

var snapEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func testLifecycle() *lifecycle {
	return &lifecycle{
		maxSize:     rules.DefaultMaxSize,
		refresh:     MaxRefresh,
		minRefresh:  DefaultMinRefresh,
		unreachable: UnreachableDisallow,
		longUnreach: UnreachableAllow,
	}
}

func outcomeAvailable(body string, fields ...string) accessOutcome {
	return accessOutcome{access: AccessAvailable, status: 200, body: []byte(body), header: reply(200, "", fields...).resp.Header}
}

func outcomeUnavailable(code int) accessOutcome {
	return accessOutcome{access: AccessUnavailable, status: code, header: http.Header{}, err: httpStatusError(robotsA, code)}
}

func outcomeUnreachable(code int) accessOutcome {
	return accessOutcome{access: AccessUnreachable, status: code, err: errors.New("fetching: status 503")}
}

func TestAccessResultString(t *testing.T) {
	tests := []struct {
		a    AccessResult
		want string
	}{
		{AccessAvailable, "available"},
		{AccessUnavailable, "unavailable"},
		{AccessUnreachable, "unreachable"},
		{AccessLongUnreachable, "long_unreachable"},
		{0, "access(0)"},
		{9, "access(9)"},
	}
	for _, tt := range tests {
		if got := tt.a.String(); got != tt.want {
			t.Errorf("AccessResult(%d).String() = %q, want %q", uint8(tt.a), got, tt.want)
		}
	}
}

// The first access to a host, for each result (RFC 9309 §2.3.1).
func TestLifecycleFirstAccess(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\n"
	sum := sha256.Sum256([]byte(body))
	tests := []struct {
		name        string
		policy      UnreachablePolicy
		o           accessOutcome
		access      AccessResult
		robots      bool
		disallowAll bool
		hash        string
		refresh     time.Duration
	}{
		{"available", UnreachableDisallow, outcomeAvailable(body), AccessAvailable, true, false, hex.EncodeToString(sum[:])[:16], 24 * time.Hour},
		{"unavailable", UnreachableDisallow, outcomeUnavailable(404), AccessUnavailable, false, false, "", 24 * time.Hour},
		{"unreachable", UnreachableDisallow, outcomeUnreachable(503), AccessUnreachable, false, true, "", time.Minute},
		{"unreachable, allowed by policy", UnreachableAllow, outcomeUnreachable(503), AccessUnreachable, false, false, "", time.Minute},
	}
	for _, tt := range tests {
		l := testLifecycle()
		l.unreachable = tt.policy
		s := l.next(nil, robotsA, tt.o, snapEpoch)
		if s.Access != tt.access || (s.Robots != nil) != tt.robots || s.DisallowAll != tt.disallowAll || s.Hash != tt.hash {
			t.Errorf("%s: next() = %v robots=%v disallowAll=%v hash=%q; want %v %v %v %q",
				tt.name, s.Access, s.Robots != nil, s.DisallowAll, s.Hash, tt.access, tt.robots, tt.disallowAll, tt.hash)
		}
		if s.Source != robotsA || !s.FetchedAt.Equal(snapEpoch) || !s.ChangedAt.Equal(snapEpoch) || s.Earlier != nil {
			t.Errorf("%s: source %q fetched %v changed %v earlier %v", tt.name, s.Source, s.FetchedAt, s.ChangedAt, s.Earlier)
		}
		if got := s.RefreshAt.Sub(snapEpoch); got != tt.refresh {
			t.Errorf("%s: refresh after %v, want %v", tt.name, got, tt.refresh)
		}
		if (s.Err != "") != (tt.access != AccessAvailable) {
			t.Errorf("%s: Err = %q", tt.name, s.Err)
		}
	}
}

// RFC 9309 §2.3.1.4 and §2.4: while the file is unreachable the last answer
// stays in force, past 24 hours if need be.
func TestLifecycleKeepsLastAnswer(t *testing.T) {
	for _, first := range []accessOutcome{outcomeAvailable("User-agent: *\nDisallow: /x\n"), outcomeUnavailable(404)} {
		l := testLifecycle()
		good := l.next(nil, robotsA, first, snapEpoch)
		at := snapEpoch.Add(25 * time.Hour)
		s := l.next(good, robotsA, outcomeUnreachable(503), at)
		if s.Access != good.Access || s.Robots != good.Robots || s.Hash != good.Hash || s.DisallowAll {
			t.Errorf("after %v: %v robots %p hash %q disallowAll %v; want the kept %v", first.access, s.Access, s.Robots, s.Hash, s.DisallowAll, good.Access)
		}
		if !s.FetchedAt.Equal(snapEpoch) || !s.CheckedAt.Equal(at) || !s.ChangedAt.Equal(snapEpoch) || s.Earlier != nil {
			t.Errorf("after %v: fetched %v checked %v changed %v earlier %v", first.access, s.FetchedAt, s.CheckedAt, s.ChangedAt, s.Earlier)
		}
		if s.Err == "" || s.Failures != 1 || !s.FailingSince.Equal(at) || s.HTTPStatus != good.HTTPStatus {
			t.Errorf("after %v: err %q failures %d since %v status %d", first.access, s.Err, s.Failures, s.FailingSince, s.HTTPStatus)
		}
	}
}

// Failed fetches are retried after 1, 2, 4 … minutes, at most an hour, and
// a success resets the count.
func TestLifecycleBackoff(t *testing.T) {
	tests := []struct {
		refresh time.Duration
		waits   []time.Duration
	}{
		{MaxRefresh, []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}},
		{10 * time.Minute, []time.Duration{1, 2, 4, 8, 10, 10}},
	}
	for _, tt := range tests {
		l := testLifecycle()
		l.refresh = tt.refresh
		var s *Snapshot
		now := snapEpoch
		for i, want := range tt.waits {
			s = l.next(s, robotsA, outcomeUnreachable(503), now)
			if got := s.RefreshAt.Sub(now); got != want*time.Minute || s.Failures != i+1 || !s.FailingSince.Equal(snapEpoch) {
				t.Errorf("refresh %v, failure %d: retry after %v (failures %d, since %v), want %v",
					tt.refresh, i+1, got, s.Failures, s.FailingSince, want*time.Minute)
			}
			now = s.RefreshAt
		}
		s = l.next(s, robotsA, outcomeAvailable(""), now)
		if s.Failures != 0 || !s.FailingSince.IsZero() || s.Err != "" || s.RefreshAt.Sub(now) != tt.refresh {
			t.Errorf("after success: failures %d since %v err %q refresh %v", s.Failures, s.FailingSince, s.Err, s.RefreshAt.Sub(now))
		}
	}
}

// RFC 9309 §2.3.1.4: after 30 days unreachable, the long-unreachable policy.
func TestLifecycleLongUnreachable(t *testing.T) {
	tests := []struct {
		policy      UnreachablePolicy
		withCopy    bool
		access      AccessResult
		disallowAll bool
	}{
		{UnreachableAllow, true, AccessLongUnreachable, false},
		{UnreachableDisallow, true, AccessLongUnreachable, true},
		{UnreachableKeep, true, AccessAvailable, false},
		{UnreachableAllow, false, AccessLongUnreachable, false},
		{UnreachableDisallow, false, AccessLongUnreachable, true},
		{UnreachableKeep, false, AccessUnreachable, true},
	}
	for _, tt := range tests {
		l := testLifecycle()
		l.longUnreach = tt.policy
		var s *Snapshot
		if tt.withCopy {
			s = l.next(nil, robotsA, outcomeAvailable("User-agent: *\nDisallow: /\n"), snapEpoch.Add(-time.Hour))
		}
		before := s
		start := snapEpoch
		for _, at := range []time.Duration{0, 29 * 24 * time.Hour, UnreachableExpiry - time.Second} {
			s = l.next(s, robotsA, outcomeUnreachable(503), start.Add(at))
		}
		if wantAccess := map[bool]AccessResult{true: AccessAvailable, false: AccessUnreachable}[tt.withCopy]; s.Access != wantAccess {
			t.Errorf("%v, copy %v: before 30 days %v, want %v", tt.policy, tt.withCopy, s.Access, wantAccess)
		}
		s = l.next(s, robotsA, outcomeUnreachable(503), start.Add(UnreachableExpiry))
		if s.Access != tt.access || s.DisallowAll != tt.disallowAll || (s.Robots != nil) != (tt.access == AccessAvailable) {
			t.Errorf("%v, copy %v: after 30 days %v disallowAll=%v robots=%v; want %v %v",
				tt.policy, tt.withCopy, s.Access, s.DisallowAll, s.Robots != nil, tt.access, tt.disallowAll)
		}
		if tt.withCopy && tt.access == AccessLongUnreachable && (len(s.Earlier) == 0 || s.Earlier[0].Hash != before.Hash) {
			t.Errorf("%v: Earlier = %v, want the copy given up", tt.policy, s.Earlier)
		}
		s = l.next(s, robotsA, outcomeAvailable(""), start.Add(31*24*time.Hour))
		if s.Access != AccessAvailable || s.Failures != 0 || !s.FailingSince.IsZero() {
			t.Errorf("%v, copy %v: back: %v failures %d", tt.policy, tt.withCopy, s.Access, s.Failures)
		}
	}
}

// RFC 9309 §2.4: a file is used for at most 24 hours, less when its cache
// headers say so, and never refetched sooner than the floor.
func TestLifecycleRefreshInterval(t *testing.T) {
	tests := []struct {
		name    string
		refresh time.Duration
		o       accessOutcome
		want    time.Duration
	}{
		{"24 hours", MaxRefresh, outcomeAvailable(""), 24 * time.Hour},
		{"configured", 6 * time.Hour, outcomeAvailable(""), 6 * time.Hour},
		{"max-age shorter", MaxRefresh, outcomeAvailable("", "Cache-Control", "max-age=600"), 10 * time.Minute},
		{"max-age longer than configured", 6 * time.Hour, outcomeAvailable("", "Cache-Control", "max-age=86400"), 6 * time.Hour},
		{"no-store", MaxRefresh, outcomeAvailable("", "Cache-Control", "no-store"), time.Minute},
		{"unavailable with max-age", MaxRefresh, accessOutcome{access: AccessUnavailable, status: 404,
			header: reply(404, "", "Cache-Control", "max-age=120").resp.Header, err: errors.New("404")}, 2 * time.Minute},
	}
	for _, tt := range tests {
		l := testLifecycle()
		l.refresh = tt.refresh
		if got := l.next(nil, robotsA, tt.o, snapEpoch).RefreshAt.Sub(snapEpoch); got != tt.want {
			t.Errorf("%s: refresh after %v, want %v", tt.name, got, tt.want)
		}
	}
}

// RFC 9309 §2.4: after a change, the earlier files stay on record for the
// 24 hours a crawler may still be using them, every one of them, up to
// MaxVersions.
func TestLifecycleVersions(t *testing.T) {
	l := testLifecycle()
	file := func(n int) accessOutcome { return outcomeAvailable(fmt.Sprintf("User-agent: *\nDisallow: /v%d\n", n)) }
	a := l.next(nil, robotsA, file(1), snapEpoch)
	a2 := l.next(a, robotsA, file(1), snapEpoch.Add(time.Hour))
	if a2.Robots != a.Robots || !a2.ChangedAt.Equal(snapEpoch) || !a2.FetchedAt.Equal(snapEpoch.Add(time.Hour)) || len(a2.Earlier) != 0 {
		t.Errorf("same content: robots reused %v, changed %v, fetched %v, earlier %d", a2.Robots == a.Robots, a2.ChangedAt, a2.FetchedAt, len(a2.Earlier))
	}
	changed := snapEpoch.Add(2 * time.Hour)
	b := l.next(a2, robotsA, file(2), changed)
	c := l.next(b, robotsA, file(3), changed.Add(time.Minute))
	names := func(vs []*Snapshot) string {
		var out []string
		for _, v := range vs {
			out = append(out, v.VersionName())
		}
		return strings.Join(out, " ")
	}
	if got, want := names(c.VersionsAt(changed.Add(time.Hour))), strings.Join([]string{c.Hash, b.Hash, a.Hash}, " "); got != want {
		t.Errorf("versions an hour after two changes = %s, want %s (newest first, all three)", got, want)
	}
	for _, e := range c.Earlier {
		if e.Earlier != nil || e.ReplacedAt.IsZero() {
			t.Errorf("an earlier version has earlier versions of its own, or no end: %+v", e)
		}
	}
	// Each version drops out GraceWindow after it was replaced.
	if got, want := names(c.VersionsAt(changed.Add(GraceWindow+30*time.Second))), c.Hash+" "+b.Hash; got != want {
		t.Errorf("versions just past a's window = %s, want %s", got, want)
	}
	if c.Version(a.Hash, changed.Add(time.Hour)) == nil || c.Version(a.Hash, changed.Add(GraceWindow+time.Hour)) != nil {
		t.Error("Version(a) should be known within its window and not after")
	}
	d := l.next(c, robotsA, outcomeUnavailable(404), changed.Add(time.Hour))
	if got := names(d.VersionsAt(changed.Add(time.Hour))); got != VersionUnavailable+" "+c.Hash+" "+b.Hash+" "+a.Hash {
		t.Errorf("versions after a 404 = %s", got)
	}
	same := l.next(c, robotsA, file(3), changed.Add(GraceWindow+time.Hour))
	if len(same.Earlier) != 0 || !same.ChangedAt.Equal(changed.Add(time.Minute)) {
		t.Errorf("refresh after the grace window: %d earlier, changed %v; want none", len(same.Earlier), same.ChangedAt)
	}
	// A version a minute: at most MaxVersions known.
	v := a
	for i := range 3 * MaxVersions {
		v = l.next(v, robotsA, file(10+i), snapEpoch.Add(time.Duration(i)*time.Minute))
	}
	if n := len(v.VersionsAt(v.ChangedAt)); n != MaxVersions {
		t.Errorf("%d versions known after %d changes in an hour, want %d", n, 3*MaxVersions, MaxVersions)
	}
}

// RFC 9309 §2.5: a body past the parse limit is cut at a line, and the cut
// reported.
func TestLifecycleTruncated(t *testing.T) {
	line := "Disallow: /private-path\n"
	body := "User-agent: *\n" + strings.Repeat(line, rules.DefaultMaxSize/len(line)+1)
	o := outcomeAvailable(body[:rules.DefaultMaxSize+1])
	o.truncated = true
	s := testLifecycle().next(nil, robotsA, o, snapEpoch)
	if !s.Truncated || !s.Robots.Truncated() || !hasDiagnostic(s.Robots, rules.CodeSizeLimit) {
		t.Errorf("truncated %v, robots truncated %v, diagnostics %v", s.Truncated, s.Robots.Truncated(), s.Robots.Diagnostics())
	}

	// A reader that cut short: the partial last line is not read as a rule.
	o = outcomeAvailable("User-agent: *\nDisallow: /p")
	o.truncated = true
	s = testLifecycle().next(nil, robotsA, o, snapEpoch)
	if !s.Truncated || !s.Robots.Allowed("bot", "/private") {
		t.Errorf("cut rule: truncated %v, /private allowed %v; want true, true", s.Truncated, s.Robots.Allowed("bot", "/private"))
	}
}

func hasDiagnostic(r *rules.Robots, code string) bool {
	for _, d := range r.Diagnostics() {
		if d.Code == code {
			return true
		}
	}
	return false
}
