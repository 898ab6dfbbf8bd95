package robotstxt

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// versionNames returns the names of vs, as records list them.
func versionNames(vs []*Snapshot) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.VersionName())
	}
	return strings.Join(out, " ")
}

// A version that comes back is the same version: the one in force, not
// also an earlier one, and each earlier version is listed once, at its
// newest place (RFC 9309 §2.4: the grace of a replaced file runs from its
// last replacement).
func TestLifecycleVersionComesBack(t *testing.T) {
	l := testLifecycle()
	file := func(n int) accessOutcome { return outcomeAvailable(fmt.Sprintf("User-agent: *\nDisallow: /v%d\n", n)) }
	at := func(m int) time.Time { return snapEpoch.Add(time.Duration(m) * time.Minute) }

	v1 := l.next(nil, robotsA, file(1), at(0))
	v2 := l.next(v1, robotsA, file(2), at(1))
	back := l.next(v2, robotsA, file(1), at(2))
	if got, want := versionNames(back.VersionsAt(at(3))), v1.Hash+" "+v2.Hash; got != want {
		t.Errorf("v1, v2, v1: versions %s, want %s (v1 in force, v2 earlier, once each)", got, want)
	}
	if len(back.Earlier) != 1 || !back.Earlier[0].ReplacedAt.Equal(at(2)) || !back.ChangedAt.Equal(at(2)) {
		t.Errorf("v1, v2, v1: earlier %s, v2 replaced at %v, v1 changed at %v; want v2 replaced and v1 back at %v",
			versionNames(back.Earlier), back.Earlier[0].ReplacedAt, back.ChangedAt, at(2))
	}
	again := l.next(back, robotsA, file(2), at(3))
	if got, want := versionNames(again.VersionsAt(at(4))), v2.Hash+" "+v1.Hash; got != want {
		t.Errorf("v1, v2, v1, v2: versions %s, want %s", got, want)
	}

	// No file, then a file, then no file again: two versions.
	gone := l.next(v1, robotsA, outcomeUnavailable(404), at(1))
	gone = l.next(l.next(gone, robotsA, file(1), at(2)), robotsA, outcomeUnavailable(404), at(3))
	if got, want := versionNames(gone.VersionsAt(at(4))), VersionUnavailable+" "+v1.Hash; got != want {
		t.Errorf("v1, 404, v1, 404: versions %s, want %s", got, want)
	}

	// A site that flips between two files all day spends two of the
	// MaxVersions, not all of them on repeats.
	flip := v1
	for i := range 4 * MaxVersions {
		flip = l.next(flip, robotsA, file(1+i%2), at(10+i))
	}
	if got := flip.VersionsAt(flip.ChangedAt); len(got) != 2 || len(flip.Earlier) != 1 {
		t.Errorf("a site flipping between two files: %d versions known (%s), %d earlier; want 2, 1", len(got), versionNames(got), len(flip.Earlier))
	}
}

// VersionsAt lists each version once even of a snapshot whose Earlier
// repeats one: as a state saved before versions were kept once reads.
func TestVersionsAtListsEachOnce(t *testing.T) {
	l := testLifecycle()
	v1 := l.next(nil, robotsA, outcomeAvailable("User-agent: *\nDisallow: /a\n"), snapEpoch)
	v2 := l.next(v1, robotsA, outcomeAvailable("User-agent: *\nDisallow: /b\n"), snapEpoch.Add(time.Minute))
	old := *v1
	old.ReplacedAt = snapEpoch.Add(time.Minute)
	cur := *v2
	cur.Earlier = []*Snapshot{&old, &old, v2}
	if got, want := versionNames(cur.VersionsAt(snapEpoch.Add(time.Hour))), v2.Hash+" "+v1.Hash; got != want {
		t.Errorf("VersionsAt with repeats in Earlier = %s, want %s", got, want)
	}
}

// A saved state that lists a version twice, as one saved before versions
// were kept once, is restored with each version once.
func TestStoreRestoreDedupesVersions(t *testing.T) {
	clock := newManualClock()
	body := func(n int) string { return fmt.Sprintf("User-agent: *\nDisallow: /v%d\n", n) }
	bodies := map[string][]byte{}
	var versions []SavedVersion
	for i, n := range []int{1, 2, 1, 2} { // newest first: v1 in force
		v := testLifecycle().next(nil, robotsA, outcomeAvailable(body(n)), clock.Now())
		sv := saveVersion(v)
		if i > 0 {
			sv.ReplacedAt = clock.Now().Add(-time.Duration(i) * time.Minute)
		}
		bodies[sv.Sum] = []byte(body(n))
		versions = append(versions, sv)
	}
	s := newTestStore(t, newScriptFetcher(serve(200, body(1))), clock, nil)
	if n := s.Restore([]SavedSite{{Key: "a.example", Versions: versions}}, func(sum string) ([]byte, bool) {
		b, ok := bodies[sum]
		return b, ok
	}, clock.Now()); n != 1 {
		t.Fatalf("restored %d sites, want 1", n)
	}
	snap := s.Snapshot(t.Context(), "a.example")
	if got := snap.VersionsAt(clock.Now()); len(got) != 2 || len(snap.Earlier) != 1 {
		t.Errorf("restored versions %s (%d earlier), want v1 then v2, once each", versionNames(got), len(snap.Earlier))
	}
	settle(t, s, "a.example")
}

// An earlier version holds what compliance reads alone: its allow and
// disallow rules decide as they did, by this profile's reading and
// Google's, with the index of its groups, and its usage preferences,
// records and diagnostics are let go; it holds less than it did in force.
func TestLifecycleEarlierKeepsWhatComplianceReads(t *testing.T) {
	l := testLifecycle()
	body := "Sitemap: https://a.example/s.xml\nUser-agent: GPTBot\nDisallow: /caf%C3%A9/\nContent-Usage: /blog/ train-ai=n, x=y\n" +
		strings.Repeat("Content-Usage: /p/ ai-use=n\n", 50) + "Nonsense line\nUser-agent: *\nDisallow: /private/\n"
	v1 := l.next(nil, robotsA, outcomeAvailable(body), snapEpoch)
	v2 := l.next(v1, robotsA, outcomeAvailable("User-agent: *\nDisallow: /\n"), snapEpoch.Add(time.Hour))
	if len(v2.Earlier) != 1 {
		t.Fatalf("%d earlier versions, want 1", len(v2.Earlier))
	}
	old := v2.Earlier[0]
	if old.VersionName() != v1.VersionName() || !old.lean || old.Body != nil {
		t.Errorf("the earlier version is %s (lean %v, body %d octets), want %s, lean, no body", old.VersionName(), old.lean, len(old.Body), v1.VersionName())
	}
	for _, tt := range []struct{ agent, target string }{
		{"GPTBot", "/caf%C3%A9/menu"}, {"GPTBot", "/café/menu"}, {"GPTBot", "/blog/x"}, {"other", "/private/x"}, {"other", "/"},
	} {
		g, was := old.Robots.GroupFor(tt.agent), v1.Robots.GroupFor(tt.agent)
		path := string(rules.AppendCanonical(nil, tt.target))
		if got, want := g.DecideCanonical(path).Allowed, was.DecideCanonical(path).Allowed; got != want {
			t.Errorf("earlier: %s on %s allowed %v, in force it was %v", tt.agent, tt.target, got, want)
		}
		if got, want := old.GoogleAllows(g, tt.target), v1.GoogleAllows(was, tt.target); got != want {
			t.Errorf("earlier: Google's reading of %s on %s allows %v, in force it did %v", tt.agent, tt.target, got, want)
		}
	}
	if old.Robots.GroupFor("GPTBot").HasUsage() || old.Robots.Sitemaps() != nil || old.Robots.Diagnostics() != nil {
		t.Errorf("the earlier version keeps usage preferences, records or diagnostics, which compliance never reads")
	}
	if old.Groups().places != nil || v1.Groups().places == nil {
		t.Errorf("the earlier version's index keeps the places of cached choices, which only the version in force is asked for")
	}
	if old.held >= v1.held {
		t.Errorf("the earlier version holds %d octets, no less than the %d it held in force", old.held, v1.held)
	}
	t.Logf("in force %d octets, earlier %d", v1.held, old.held)
}

// A site whose versions together would hold more than its share keeps the
// newest that fit, the oldest dropped first; the version in force stays
// whole while it fits alone.
func TestLifecycleVersionsFitTheSiteShare(t *testing.T) {
	l := testLifecycle()
	body := func(n int) string { return fmt.Sprintf("User-agent: *\nDisallow: /v%d\n", n) + synthetic(t, 200<<10) }
	at := func(m int) time.Time { return snapEpoch.Add(time.Duration(m) * time.Minute) }
	one := NewVersion(nil, robotsA, []byte(body(0)), at(0)).weight()
	l.maxSite = 4*one + one/2 // the version in force and three earlier ones, about
	var s *Snapshot
	for i := range MaxVersions {
		s = l.next(s, robotsA, outcomeAvailable(body(i)), at(i))
	}
	if w := s.weight(); w > l.maxSite {
		t.Errorf("the site holds %d octets, more than its share %d", w, l.maxSite)
	}
	if n := len(s.Earlier); n < 2 || n > 4 {
		t.Errorf("%d earlier versions kept, want the 2 to 4 that fit", n)
	}
	for i, e := range s.Earlier {
		want := NewVersion(nil, robotsA, []byte(body(MaxVersions-2-i)), at(0)).Hash
		if e.Hash != want {
			t.Errorf("earlier version %d is %s, want %s: the newest kept, the oldest dropped", i, e.Hash, want)
		}
	}
	if s.Truncated || s.Robots.Allowed("x", fmt.Sprintf("/v%d", MaxVersions-1)) {
		t.Errorf("the version in force was cut, or does not decide as its file says")
	}
}
