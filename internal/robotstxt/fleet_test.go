package robotstxt

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	fleetV1 = "User-agent: *\nDisallow: /v1\n"
	fleetV2 = "User-agent: *\nDisallow: /v2\n"
	fleetV3 = "User-agent: *\nDisallow: /v3\n"
)

// fleetBodies is a storage of bodies by hex SHA-256, counting its reads.
type fleetBodies struct {
	mu    sync.Mutex
	m     map[string][]byte
	reads int
}

func newFleetBodies(bodies ...string) *fleetBodies {
	b := &fleetBodies{m: map[string][]byte{}}
	for _, body := range bodies {
		b.m[sumOf(body)] = []byte(body)
	}
	return b
}

func (b *fleetBodies) get(sum string) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reads++
	body, ok := b.m[sum]
	return body, ok
}

func sumOf(body string) string {
	s := sha256.Sum256([]byte(body))
	return hex.EncodeToString(s[:])
}

// fleetVersion is a saved version of body, in force from changed until
// replaced (zero: in force).
func fleetVersion(body string, changed, replaced time.Time) SavedVersion {
	return SavedVersion{Sum: sumOf(body), Access: "available", Source: "https://a.example/robots.txt", HTTPStatus: 200,
		FetchedAt: changed, ChangedAt: changed, CheckedAt: changed, ReplacedAt: replaced}
}

// An instance that joined after a change knows the version the others had
// in force before it: its snapshot holds it among Earlier, for the
// judgement's Version and AppendVersionsAt, while the file in force, a
// fetch's next snapshot and what the store saves stay its own.
func TestStoreFleetLateJoiner(t *testing.T) {
	clock := newManualClock()
	f := newScriptFetcher(serve(200, fleetV2))
	s := newTestStore(t, f, clock, func(c *StoreConfig) { c.Refresh = time.Hour })
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	t0 := clock.Now()
	// Another instance had v1 in force until an hour ago, then v2; a
	// third still has v1 in force.
	parts := []FleetPart{
		{Seen: t0, Sites: []SavedSite{{Key: "a.example", Versions: []SavedVersion{
			fleetVersion(fleetV2, t0.Add(-time.Hour), time.Time{}),
			fleetVersion(fleetV1, t0.Add(-48*time.Hour), t0.Add(-time.Hour)),
		}}}},
		{Seen: t0.Add(-time.Minute), Sites: []SavedSite{{Key: "a.example", Versions: []SavedVersion{
			fleetVersion(fleetV1, t0.Add(-48*time.Hour), time.Time{}),
		}}}},
	}
	bodies := newFleetBodies(fleetV1, fleetV2)
	st := s.SetFleet(parts, bodies.get, t0)
	if st.Sites != 1 || st.Versions != 2 || st.Held != 1 || st.Missing != 0 {
		t.Errorf("SetFleet = %+v, want 1 site of 2 versions, 1 held, none missing", st)
	}
	snap := s.Snapshot(t.Context(), "a.example")
	v1 := VersionHash([]byte(fleetV1))
	if snap.Hash != VersionHash([]byte(fleetV2)) || snap.Robots.Allowed("x", "/v2") {
		t.Fatalf("the file in force is %s, want this store's v2", snap.Hash)
	}
	old := snap.Version(v1, t0)
	if old == nil || old.Robots == nil || old.Robots.Allowed("x", "/v1") || !old.ReplacedAt.Equal(t0.Add(-time.Minute)) {
		t.Fatalf("Version(v1) = %+v, want the fleet's v1, in force until the third instance was last seen", old)
	}
	if got := len(snap.AppendVersionsAt(nil, t0)); got != 2 {
		t.Errorf("AppendVersionsAt: %d versions, want 2", got)
	}
	if snap.Version(v1, t0.Add(-time.Minute).Add(GraceWindow)) != nil {
		t.Error("the fleet's v1 is in force a grace window after its last sighting")
	}
	assertOwnSaved(t, s, 1)

	// A refresh finds v3: v2 becomes this store's earlier version, v1
	// stays the fleet's.
	f.set(serve(200, fleetV3))
	clock.Advance(time.Hour)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	snap = s.Snapshot(t.Context(), "a.example")
	if snap.Hash != VersionHash([]byte(fleetV3)) || snap.Version(VersionHash([]byte(fleetV2)), clock.Now()) == nil {
		t.Fatalf("after a refresh: in force %s, earlier %d; want v3 with v2 earlier", snap.Hash, len(snap.Earlier))
	}
	if snap.Version(v1, clock.Now()) == nil {
		t.Error("after a refresh, the fleet's v1 is gone")
	}
	assertOwnSaved(t, s, 2)

	// A view without v1 takes it away.
	s.SetFleet(nil, bodies.get, clock.Now())
	if snap = s.Snapshot(t.Context(), "a.example"); snap.Version(v1, clock.Now()) != nil {
		t.Error("an empty view left the fleet's v1 in force")
	}
}

// assertOwnSaved checks that the store saves its own versions of
// a.example, n of them, none of the fleet's.
func assertOwnSaved(t *testing.T, s *Store, n int) {
	t.Helper()
	saved := s.Save()
	if len(saved) != 1 || len(saved[0].Versions) != n {
		t.Fatalf("Save = %+v, want a.example with its %d own versions", saved, n)
	}
	for _, v := range saved[0].Versions {
		if v.Sum == sumOf(fleetV1) {
			t.Errorf("Save holds the fleet's v1: %+v", v)
		}
	}
}

// The fleet's versions are bounded and checked: per site the MaxVersions
// last in force; none past the grace window; no refusal or failure; a
// version whose body is lost or is not the version's is left out; a
// version the store has in force is not added again; each body is read
// once across views.
func TestStoreFleetBounds(t *testing.T) {
	clock := newManualClock()
	s := newTestStore(t, newScriptFetcher(serve(200, fleetV2)), clock, nil)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	t0 := clock.Now()
	bodies := newFleetBodies(fleetV1, fleetV2)
	var versions []SavedVersion
	for i := range MaxVersions + 4 {
		body := fmt.Sprintf("User-agent: *\nDisallow: /old%d\n", i)
		bodies.m[sumOf(body)] = []byte(body)
		versions = append(versions, fleetVersion(body, t0.Add(-time.Duration(i+2)*time.Hour), t0.Add(-time.Duration(i+1)*time.Hour)))
	}
	lost := fleetVersion("User-agent: *\nDisallow: /lost\n", t0, t0)
	forged := fleetVersion(fleetV1, t0, t0)
	forged.Sum = sumOf("User-agent: *\nDisallow: /forged\n")
	bodies.m[forged.Sum] = []byte(fleetV1)
	versions = append(versions,
		fleetVersion(fleetV2, t0.Add(-time.Hour), time.Time{}),                 // the version in force here
		fleetVersion(fleetV1, t0.Add(-50*time.Hour), t0.Add(-GraceWindow)),     // past the window
		SavedVersion{Access: "unreachable", DisallowAll: true, ReplacedAt: t0}, // a failure
		SavedVersion{Access: "available", Sum: "../../etc/passwd", ReplacedAt: t0},
		lost, forged)
	st := s.SetFleet([]FleetPart{{Seen: t0, Sites: []SavedSite{{Key: "A.EXAMPLE", Versions: versions}}}}, bodies.get, t0)
	if st.Versions != MaxVersions {
		t.Errorf("SetFleet kept %d versions of the site, want %d", st.Versions, MaxVersions)
	}
	// Of those, the lost, the forged and the one in force here (the
	// latest three) are not published.
	snap := s.Snapshot(t.Context(), "a.example")
	if len(snap.Earlier) != MaxVersions-3 {
		t.Errorf("published with %d earlier versions, want %d", len(snap.Earlier), MaxVersions-3)
	}
	for _, e := range snap.Earlier {
		switch {
		case e.Hash == snap.Hash:
			t.Error("the version in force is among Earlier")
		case e.Robots == nil:
			t.Errorf("a version without a file among Earlier: %+v", e)
		case !e.Robots.Allowed("x", "/lost") || !e.Robots.Allowed("x", "/forged"):
			t.Errorf("a version whose body is lost or forged among Earlier: %s", e.Hash)
		}
	}
	if st.Missing != 2 {
		t.Errorf("Missing = %d, want 2 (the lost body and the forged one)", st.Missing)
	}
	reads := bodies.reads
	s.SetFleet([]FleetPart{{Seen: t0, Sites: []SavedSite{{Key: "a.example", Versions: versions}}}}, bodies.get, t0)
	if got := bodies.reads - reads; got != 2 {
		t.Errorf("a second view read %d bodies, want 2 (the two left out; the others are parsed already)", got)
	}

	// Sites: at most MaxHosts, this store's own first.
	small := newTestStore(t, newScriptFetcher(serve(200, fleetV2)), clock, func(c *StoreConfig) { c.MaxHosts = 4 })
	small.Snapshot(t.Context(), "held.example")
	settle(t, small, "held.example")
	var sites []SavedSite
	for i := range 10 {
		sites = append(sites, SavedSite{Key: fmt.Sprintf("s%d.example", i), Versions: []SavedVersion{fleetVersion(fleetV1, t0, t0.Add(time.Duration(i)*time.Second))}})
	}
	sites = append(sites, SavedSite{Key: "held.example", Versions: []SavedVersion{fleetVersion(fleetV1, t0.Add(-time.Hour), t0.Add(-time.Hour))}})
	st = small.SetFleet([]FleetPart{{Seen: t0.Add(time.Hour), Sites: sites}}, bodies.get, t0.Add(time.Hour))
	if st.Sites != 4 || st.Held != 1 {
		t.Errorf("SetFleet over MaxHosts 4 = %+v, want 4 sites, the held one among them", st)
	}
}

// A site first published after the view came is published with the
// fleet's versions parsed ahead, with no read of the bodies; one whose
// bodies could not be parsed ahead signals FleetWanted, and AttachFleet
// gives it them.
func TestStoreFleetFirstPublish(t *testing.T) {
	clock := newManualClock()
	s := newTestStore(t, newScriptFetcher(serve(200, fleetV2)), clock, nil)
	t0 := clock.Now()
	bodies := newFleetBodies(fleetV1)
	part := FleetPart{Seen: t0, Sites: []SavedSite{
		{Key: "a.example", Versions: []SavedVersion{fleetVersion(fleetV1, t0, time.Time{})}},
		{Key: "b.example", Versions: []SavedVersion{fleetVersion(fleetV3, t0, time.Time{})}}, // its body is not there yet
	}}
	s.SetFleet([]FleetPart{part}, bodies.get, t0)
	reads := bodies.reads
	if snap := s.Snapshot(t.Context(), "a.example"); snap.Version(VersionHash([]byte(fleetV1)), t0) == nil {
		t.Error("the first snapshot of a site the fleet has versions of lacks them")
	}
	if bodies.reads != reads {
		t.Errorf("the first fetch read %d bodies, want none", bodies.reads-reads)
	}
	select {
	case <-s.FleetWanted():
		t.Fatal("FleetWanted signalled for a site whose versions were parsed ahead")
	default:
	}
	if snap := s.Snapshot(t.Context(), "b.example"); snap.Version(VersionHash([]byte(fleetV3)), t0) != nil {
		t.Fatal("b.example has a version whose body was never read")
	}
	select {
	case <-s.FleetWanted():
	case <-time.After(5 * time.Second):
		t.Fatal("FleetWanted not signalled for a site whose versions were not parsed ahead")
	}
	bodies.mu.Lock()
	bodies.m[sumOf(fleetV3)] = []byte(fleetV3)
	bodies.mu.Unlock()
	if held, _ := s.AttachFleet(bodies.get, t0); held != 1 {
		t.Errorf("AttachFleet gave %d sites versions, want 1 (b.example)", held)
	}
	if s.Snapshot(t.Context(), "b.example").Version(VersionHash([]byte(fleetV3)), t0) == nil {
		t.Error("after AttachFleet, b.example's fleet version is not known")
	}
}

// Bodies of sites the store does not hold are parsed ahead up to
// maxUnheldFleetBytes, those in force last first.
func TestStoreFleetParseBudget(t *testing.T) {
	clock := newManualClock()
	s := newTestStore(t, newScriptFetcher(serve(200, fleetV2)), clock, nil)
	t0 := clock.Now()
	bodies := newFleetBodies()
	const size = 1 << 20
	var sites []SavedSite
	for i := range maxUnheldFleetBytes/size + 4 {
		body := fmt.Sprintf("User-agent: *\nDisallow: /s%d\n#", i) + strings.Repeat("x", size)
		bodies.m[sumOf(body)] = []byte(body)
		sites = append(sites, SavedSite{Key: fmt.Sprintf("s%d.example", i), Versions: []SavedVersion{fleetVersion(body, t0, t0.Add(-time.Duration(i)*time.Second))}})
	}
	s.SetFleet([]FleetPart{{Seen: t0, Sites: sites}}, bodies.get, t0)
	view := s.fleet.Load()
	total := 0
	for _, pb := range view.parsed {
		total += pb.size
	}
	if total > maxUnheldFleetBytes || len(view.parsed) < maxUnheldFleetBytes/size-1 {
		t.Errorf("%d bodies of %d octets parsed ahead, want the most that fit in %d", len(view.parsed), total, maxUnheldFleetBytes)
	}
	if d, _ := digestOf(sites[0].Versions[0]); view.parsed[d] == nil {
		t.Error("the site in force last was not parsed ahead")
	}
	if d, _ := digestOf(sites[len(sites)-1].Versions[0]); view.parsed[d] != nil {
		t.Error("the site in force first was parsed past the budget")
	}
}

// A version in force elsewhere, fetched after this store last checked,
// has the store fetch the file again; at most once a MinRefresh.
func TestStoreFleetRefresh(t *testing.T) {
	clock := newManualClock()
	f := newScriptFetcher(serve(200, fleetV1))
	s := newTestStore(t, f, clock, nil)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	f.set(serve(200, fleetV2))
	clock.Advance(DefaultMinRefresh)
	t1 := clock.Now()
	bodies := newFleetBodies(fleetV2)
	part := FleetPart{Seen: t1, Sites: []SavedSite{{Key: "a.example", Versions: []SavedVersion{fleetVersion(fleetV2, t1, time.Time{})}}}}
	s.SetFleet([]FleetPart{part}, bodies.get, t1)
	settle(t, s, "a.example")
	if calls := f.calls.Load(); calls != 2 {
		t.Fatalf("%d fetches, want 2: the first, and one for the newer version elsewhere", calls)
	}
	if snap := s.Snapshot(t.Context(), "a.example"); snap.Hash != VersionHash([]byte(fleetV2)) {
		t.Errorf("in force after the fleet's hint: %s, want v2", snap.Hash)
	}
	s.SetFleet([]FleetPart{part}, bodies.get, t1)
	settle(t, s, "a.example")
	if calls := f.calls.Load(); calls != 2 {
		t.Errorf("%d fetches, want 2: the store has the version now", calls)
	}
	// A version in force elsewhere since before this store's last check,
	// fetched there again since (a site that answers each instance with
	// another file), starts no fetch.
	clock.Advance(DefaultMinRefresh)
	t2 := clock.Now()
	other := fleetVersion(fleetV3, t0Of(t1), time.Time{})
	other.FetchedAt = t2
	bodies.m[sumOf(fleetV3)] = []byte(fleetV3)
	s.SetFleet([]FleetPart{{Seen: t2, Sites: []SavedSite{{Key: "a.example", Versions: []SavedVersion{other}}}}}, bodies.get, t2)
	settle(t, s, "a.example")
	if calls := f.calls.Load(); calls != 2 {
		t.Errorf("%d fetches, want 2: the version elsewhere came into force before this store's last check", calls)
	}
}

// t0Of returns a time an hour before t.
func t0Of(t time.Time) time.Time { return t.Add(-time.Hour) }

// Views installed while fetches publish never lose a fetch's snapshot
// nor the view's versions (run with -race).
func TestStoreFleetConcurrent(t *testing.T) {
	clock := newManualClock()
	f := newScriptFetcher(serve(200, fleetV2))
	s := newTestStore(t, f, clock, func(c *StoreConfig) { c.MinRefresh = time.Nanosecond })
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	t0 := clock.Now()
	bodies := newFleetBodies(fleetV1)
	part := FleetPart{Seen: t0, Sites: []SavedSite{{Key: "a.example", Versions: []SavedVersion{fleetVersion(fleetV1, t0, time.Time{})}}}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 200 {
			s.SetFleet([]FleetPart{part}, bodies.get, t0)
			s.SetFleet(nil, bodies.get, t0)
		}
		s.SetFleet([]FleetPart{part}, bodies.get, t0)
	})
	wg.Go(func() {
		for i := range 200 {
			if i%2 == 0 {
				f.set(serve(200, fleetV2))
			} else {
				f.set(serve(200, fleetV3))
			}
			e, _ := s.hosts.peek("a.example")
			s.refresh(e)
			s.Snapshot(t.Context(), "a.example")
		}
	})
	wg.Wait()
	settle(t, s, "a.example")
	snap := s.Snapshot(t.Context(), "a.example")
	if snap.Version(VersionHash([]byte(fleetV1)), t0) == nil {
		t.Error("the last view's v1 was lost")
	}
	if own := snap.ownSnapshot(); own.Version(VersionHash([]byte(fleetV1)), t0) != nil {
		t.Error("the fleet's v1 entered the store's own versions")
	}
}

// A view installed between a site's first snapshot and its settling in
// the table finds the site nowhere: once settled, the site is given the
// view's versions parsed ahead, with no read of the storage.
func TestStoreFleetSettled(t *testing.T) {
	clock := newManualClock()
	s := newTestStore(t, newScriptFetcher(serve(200, fleetV2)), clock, nil)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	t0 := clock.Now()
	bodies := newFleetBodies(fleetV1)
	// The view, as SetFleet makes it, but given to no site.
	view := mergeFleet([]FleetPart{{Seen: t0, Sites: []SavedSite{{Key: "a.example", Versions: []SavedVersion{fleetVersion(fleetV1, t0, time.Time{})}}}}}, t0)
	s.parseFleet(view, nil, nil, bodies.get)
	s.fleet.Store(view)
	reads := bodies.reads
	e, _ := s.hosts.peek("a.example")
	s.fleetNeeded(e)
	if s.Snapshot(t.Context(), "a.example").Version(VersionHash([]byte(fleetV1)), t0) == nil {
		t.Error("the settled site was not given the view's version")
	}
	if bodies.reads != reads {
		t.Errorf("giving it read %d bodies, want none", bodies.reads-reads)
	}
}
