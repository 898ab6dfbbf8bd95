package robotstxt

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// The soak test's restart: 10 sites in regular use among one-time hosts
// at max_hosts 30, saved and restored; then, before any of them is asked
// for, a flood of one-time hosts that spends the budget of first fetches,
// and hosts asked for three times each, which reach the table's main
// part. The sites in use are in force at once, never wait for a first
// fetch, never need the budget, and are not pushed out: their requests
// cost one background refresh each, and none is refused.
func TestStoreRestoreKeepsSitesInUse(t *testing.T) {
	const (
		maxHosts = 30
		hot      = 10
		budget   = 100
	)
	clock := newManualClock()
	f := newURLCounter("User-agent: *\nDisallow: /private/\n")
	var mu sync.Mutex
	bodies := map[string][]byte{}
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.MaxHosts, c.NewHosts = maxHosts, 1<<20
		c.OnVersion = func(sum string, body []byte) {
			mu.Lock()
			defer mu.Unlock()
			bodies[sum] = append([]byte(nil), body...)
		}
	})
	for round := range 20 {
		for i := range 100 {
			host := fmt.Sprintf("before-%d-%d.example", round, i)
			if i%10 == 0 {
				host = fmt.Sprintf("hot%d.example", i/10)
			}
			s.Snapshot(t.Context(), host)
			clock.Advance(50 * time.Millisecond)
		}
	}
	waitUnpinned(t, s)
	b, err := json.Marshal(s.Save())
	if err != nil {
		t.Fatal(err)
	}
	var saved []SavedSite
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}

	clock.Advance(time.Hour)
	g := newURLCounter("User-agent: *\nDisallow: /private/\n")
	r := newTestStore(t, g, clock, func(c *StoreConfig) {
		c.MaxHosts, c.NewHosts, c.NewHostsPer = maxHosts, budget, time.Hour
	})
	mu.Lock()
	n := r.Restore(saved, func(sum string) ([]byte, bool) { b, ok := bodies[sum]; return b, ok }, clock.Now())
	mu.Unlock()
	if n != maxHosts {
		t.Fatalf("restored %d sites, want %d", n, maxHosts)
	}
	// Hosts asked for three times, then one-time hosts past the budget.
	for i := range 20 {
		for range 3 {
			r.Snapshot(t.Context(), fmt.Sprintf("thrice%d.example", i))
			clock.Advance(time.Second)
		}
	}
	refused := 0
	for i := range 2 * budget {
		if snap := r.Snapshot(t.Context(), fmt.Sprintf("after-%d.example", i)); snap.Refusal == RefusalHostBudget {
			refused++
		}
		clock.Advance(50 * time.Millisecond)
	}
	if refused == 0 {
		t.Fatalf("no one-time host refused: the flood did not spend the budget of %d", budget)
	}
	for round := range 3 {
		for i := range hot {
			host := fmt.Sprintf("hot%d.example", i)
			snap := r.Snapshot(t.Context(), host)
			if snap.Refusal != RefusalNone || snap.Robots == nil || snap.Robots.Allowed("a", "/private/x") {
				t.Errorf("round %d after the restart: Snapshot(%s) = %v, refusal %q, err %q; want the restored file", round, host, snap.Access, snap.Refusal, snap.Err)
				continue
			}
			settle(t, r, host)
			clock.Advance(time.Second)
		}
	}
	for i := range hot {
		if n := g.count(fmt.Sprintf("https://hot%d.example/robots.txt", i)); n != 1 {
			t.Errorf("hot%d.example fetched %d times after the restart, want 1: the refresh of its restored copy", i, n)
		}
	}
}

// A restored site's uses count as the sketch would have: up to 15,
// halved for each whole day unused before the restart.
func TestWarmth(t *testing.T) {
	now := snapEpoch
	for _, tt := range []struct {
		uses     uint32
		lastUsed time.Time
		want     int
	}{
		{0, now, 0},
		{1, now, 1},
		{9, now.Add(-time.Hour), 9},
		{1000, now, maxWarmth},
		{1000, now.Add(-25 * time.Hour), maxWarmth / 2},
		{1000, now.Add(-49 * time.Hour), maxWarmth / 4},
		{1000, now.Add(-30 * 24 * time.Hour), 0},
		{8, time.Time{}, 8},        // saved before last_used was kept
		{8, now.Add(time.Hour), 8}, // a clock that went back
	} {
		if got := warmth(tt.uses, tt.lastUsed, now); got != tt.want {
			t.Errorf("warmth(%d, %v) = %d, want %d", tt.uses, now.Sub(tt.lastUsed), got, tt.want)
		}
	}
}

// The saved state learns of a host's use without a new snapshot: Changes
// moves when uses reaches 2, 4, 8 and 16, and on the first use of a day,
// not with every second of use, so that a saver that saves on change
// saves what restoring needs and no more.
func TestStoreChangesWithUse(t *testing.T) {
	clock := newManualClock()
	s := newTestStore(t, newScriptFetcher(serve(404, "")), clock, nil)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	var moved []int
	for sec := 2; sec <= 20; sec++ {
		clock.Advance(time.Second)
		before := s.Changes()
		s.Snapshot(t.Context(), "a.example")
		s.Snapshot(t.Context(), "a.example") // the same second: one use
		if s.Changes() != before {
			moved = append(moved, sec)
		}
	}
	if got, want := fmt.Sprint(moved), "[2 4 8 16]"; got != want {
		t.Errorf("Changes moved at uses %s, want %s", got, want)
	}
	before := s.Changes()
	clock.Advance(24 * time.Hour)
	s.Snapshot(t.Context(), "a.example") // a refresh, besides
	settle(t, s, "a.example")
	if s.Changes() < before+2 {
		t.Errorf("Changes moved by %d on the first use of a day, with a refresh; want 2", s.Changes()-before)
	}
}
