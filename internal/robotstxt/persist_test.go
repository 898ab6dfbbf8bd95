package robotstxt

import (
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// A store's versions survive a restart: saved, encoded, and restored into
// a new store with the bodies it named.
func TestStoreSaveRestore(t *testing.T) {
	clock := newManualClock()
	var mu sync.Mutex
	bodies := map[string][]byte{}
	keep := func(c *StoreConfig) {
		c.OnVersion = func(sum string, body []byte) {
			mu.Lock()
			defer mu.Unlock()
			bodies[sum] = append([]byte(nil), body...)
		}
	}
	f := newScriptFetcher(serve(200, "User-agent: *\nDisallow: /v1\n"))
	s := newTestStore(t, f, clock, keep)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	v1 := s.Snapshot(t.Context(), "a.example")
	f.set(serve(200, "User-agent: *\nDisallow: /v2\n"))
	clock.Advance(MaxRefresh)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	v2 := s.Snapshot(t.Context(), "a.example")
	if v2.Hash == v1.Hash || len(v2.Earlier) != 1 || len(bodies) != 2 {
		t.Fatalf("before the restart: versions %s, %s, %d earlier, %d bodies kept", v1.Hash, v2.Hash, len(v2.Earlier), len(bodies))
	}
	b, err := json.Marshal(s.Save())
	if err != nil {
		t.Fatal(err)
	}
	var back []SavedSite
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	body := func(sum string) ([]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		b, ok := bodies[sum]
		return b, ok
	}

	// Restarted within the day: the copy is in force at once, and the
	// first request refreshes it in the background.
	clock.Advance(time.Hour)
	f2 := newScriptFetcher(serve(200, "User-agent: *\nDisallow: /v2\n"))
	r := newTestStore(t, f2, clock, keep)
	if n := r.Restore(back, body, clock.Now()); n != 1 {
		t.Fatalf("restored %d sites, want 1", n)
	}
	got := r.Snapshot(t.Context(), "a.example")
	if got.Hash != v2.Hash || got.Version(v1.Hash, clock.Now()) == nil || got.Robots.Allowed("x", "/v2") {
		t.Errorf("after the restart: version %s, knows v1 %v; want %s with v1 earlier", got.Hash, got.Version(v1.Hash, clock.Now()) != nil, v2.Hash)
	}
	settle(t, r, "a.example")
	if f2.calls.Load() != 1 {
		t.Errorf("%d fetches after the first request, want 1 (a refresh in the background)", f2.calls.Load())
	}

	// Restarted two days later: the copy is too old to be in force; the
	// first request waits for a fetch, and the old version stays known.
	f3 := newScriptFetcher(serve(200, "User-agent: *\nDisallow: /v3\n"))
	late := newTestStore(t, f3, clock, nil)
	clock.Advance(47 * time.Hour)
	late.Restore(back, body, clock.Now())
	got = late.Snapshot(t.Context(), "a.example")
	if got.Robots.Allowed("x", "/v3") || got.Version(v2.Hash, clock.Now()) == nil || f3.calls.Load() != 1 {
		t.Errorf("after a late restart: v3 in force %v, knows v2 %v, %d fetches", !got.Robots.Allowed("x", "/v3"), got.Version(v2.Hash, clock.Now()) != nil, f3.calls.Load())
	}

	// A lost body leaves its version out; a site with none left is not
	// restored.
	lost := newTestStore(t, newScriptFetcher(serve(404, "")), clock, nil)
	if n := lost.Restore(back, func(string) ([]byte, bool) { return []byte("not the body"), true }, clock.Now()); n != 0 {
		t.Errorf("restored %d sites from bodies that are not theirs, want 0", n)
	}
}
