package robotstxt

import (
	"fmt"
	"strings"
	"testing"
	"time"
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
