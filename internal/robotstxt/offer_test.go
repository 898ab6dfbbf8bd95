package robotstxt

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

const (
	offerV1 = "User-agent: *\nDisallow: /private/\n"
	offerV2 = "User-agent: *\nDisallow: /drafts/\n"
)

// TestStoreHint checks that a client's answer is only ever a hint: a
// version other than the one in force starts a fetch of the store's own,
// whose answer, not the client's, is put in force.
func TestStoreHint(t *testing.T) {
	clock := newManualClock()
	f := newScriptFetcher(serve(http.StatusOK, offerV1))
	s := newTestStore(t, f, clock, nil)
	first := s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	v1, v2 := VersionHash([]byte(offerV1)), VersionHash([]byte(offerV2))
	if first.Hash != v1 {
		t.Fatalf("snapshot hash %s, VersionHash %s: want the same name for one version", first.Hash, v1)
	}
	clock.Advance(time.Hour)

	// The version in force: nothing to do.
	if s.Hint("a.example", v1) || f.calls.Load() != 1 {
		t.Fatalf("hint of the version in force started a fetch (%d fetches)", f.calls.Load())
	}
	// A client was served a variant (a site that varies robots.txt by
	// User-Agent): the store fetches again, and keeps what its own
	// request gets.
	if !s.Hint("A.example", v2) {
		t.Fatal("hint of another version: no fetch")
	}
	settle(t, s, "a.example")
	if snap := s.Snapshot(t.Context(), "a.example"); snap.Hash != v1 || snap.Robots.Allowed("bot", "/private/x") {
		t.Errorf("after a variant's hint: version %s, want %s (the store's own answer)", snap.Hash, v1)
	}
	// Within OfferInterval of that fetch, hints start nothing.
	if s.Hint("a.example", v2) {
		t.Error("a hint within OfferInterval of the last fetch started one")
	}
	// The file did change: the next hint finds it.
	f.set(serve(http.StatusOK, offerV2))
	clock.Advance(OfferInterval)
	if !s.Hint("a.example", v2) {
		t.Fatal("hint after the interval: no fetch")
	}
	settle(t, s, "a.example")
	if snap := s.Snapshot(t.Context(), "a.example"); snap.Hash != v2 {
		t.Errorf("after the file changed: version %s, want %s", snap.Hash, v2)
	}
	// Unknown hosts, and a closed store, start nothing.
	clock.Advance(time.Hour)
	if s.Hint("b.example", v1) {
		t.Error("hint for a host never fetched started a fetch")
	}
	s.Close()
	if s.Hint("a.example", v1) {
		t.Error("hint on a closed store started a fetch")
	}
}

// TestStoreOnChange follows one host through fetches and hints: OnChange
// hears of the first snapshot, of each new file, of a new failure and of
// its end, and of nothing that only confirms what is in force.
func TestStoreOnChange(t *testing.T) {
	type change struct {
		host, old, new string // "" for no snapshot; else access and file
	}
	describe := func(s *Snapshot) string {
		if s == nil {
			return ""
		}
		d := s.Access.String()
		if s.Robots != nil {
			d += " " + s.Hash[:4]
		}
		if s.Err != "" {
			d += " failing"
		}
		return d
	}
	var mu sync.Mutex
	var heard []change
	clock := newManualClock()
	f := newScriptFetcher(serve(http.StatusOK, offerV1))
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.OnChange = func(host string, old, new *Snapshot) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, change{host, describe(old), describe(new)})
		}
	})
	step := func(answer func(context.Context, string) (Response, error)) {
		t.Helper()
		f.set(answer)
		clock.Advance(25 * time.Hour) // past any refresh or backoff
		s.Snapshot(t.Context(), "a.example")
		settle(t, s, "a.example")
	}
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	v1 := describe(s.Snapshot(t.Context(), "a.example"))
	step(serve(http.StatusOK, offerV1)) // the same file: no news
	step(serve(http.StatusOK, offerV2))
	v2 := describe(s.Snapshot(t.Context(), "a.example"))
	step(serve(http.StatusServiceUnavailable, "")) // kept, but failing
	step(serve(http.StatusServiceUnavailable, "")) // the same failure: no news
	step(serve(http.StatusOK, offerV2))            // reachable again
	// Two hints that the file went back to its first version: the first
	// fetch finds it, the second is no news.
	f.set(serve(http.StatusOK, offerV1))
	for range 2 {
		clock.Advance(OfferInterval)
		s.Hint("a.example", "0000000000000000")
		settle(t, s, "a.example")
	}

	want := []change{
		{"a.example", "", v1},
		{"a.example", v1, v2},
		{"a.example", v2, v2 + " failing"},
		{"a.example", v2 + " failing", v2},
		{"a.example", v2, v1},
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(heard) != fmt.Sprint(want) {
		t.Errorf("OnChange heard\n%v\nwant\n%v", heard, want)
	}
}
