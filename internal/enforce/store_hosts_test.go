package enforce

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Hosts not seen before start a fetch within the budget only; a host over
// budget is refused (complete disallow, even with "unreachable allow"),
// is not tracked, and gets its fetch once the budget allows.
func TestStoreNewHostBudget(t *testing.T) {
	clock := newManualClock()
	f := newScriptFetcher(serve(404, ""))
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.NewHosts, c.NewHostsPer = 5, 10*time.Second
		c.Unreachable = UnreachableAllow
	})
	for i := range 5 {
		if snap := s.Snapshot(t.Context(), fmt.Sprintf("h%d.example", i)); snap.Refusal != RefusalNone || snap.Access != AccessUnavailable {
			t.Fatalf("host %d within budget: %v, refusal %v", i, snap.Access, snap.Refusal)
		}
	}
	over := s.Snapshot(t.Context(), "h5.example")
	if over.Refusal != RefusalHostBudget || !over.DisallowAll || over.Robots != nil || !strings.Contains(over.Err, "new hosts") {
		t.Errorf("host over budget: refusal %v, disallow all %v, err %q; want host_budget, complete disallow", over.Refusal, over.DisallowAll, over.Err)
	}
	if _, ok := s.hosts.peek("h5.example"); ok || f.calls.Load() != 5 {
		t.Errorf("host over budget tracked %v, %d fetches; want untracked, 5 fetches", ok, f.calls.Load())
	}
	// Known hosts are not charged.
	if snap := s.Snapshot(t.Context(), "h0.example"); snap.Refusal != RefusalNone {
		t.Errorf("a known host was refused: %v", snap.Refusal)
	}
	clock.Advance(2 * time.Second) // one more first fetch allowed
	if snap := s.Snapshot(t.Context(), "h5.example"); snap.Refusal != RefusalNone {
		t.Errorf("after the budget refilled: refusal %v", snap.Refusal)
	}
	if snap := s.Snapshot(t.Context(), "h6.example"); snap.Refusal != RefusalHostBudget {
		t.Errorf("second host after one refill: refusal %v, want host_budget", snap.Refusal)
	}
}

// A key that names no site is refused, and disallows everything even with
// "unreachable allow".
func TestStoreRefusesInvalidHost(t *testing.T) {
	f := newScriptFetcher(serve(404, ""))
	s := newTestStore(t, f, newManualClock(), func(c *StoreConfig) { c.Unreachable = UnreachableAllow })
	for _, h := range []string{"", "a.example/x", "user@a.example", strings.Repeat("a", 400)} {
		snap := s.Snapshot(t.Context(), h)
		if snap.Refusal != RefusalInvalidHost || !snap.DisallowAll {
			t.Errorf("Snapshot(%.20q): refusal %v, disallow all %v; want invalid_host, complete disallow", h, snap.Refusal, snap.DisallowAll)
		}
	}
	if f.calls.Load() != 0 {
		t.Errorf("%d fetches for invalid hosts, want none", f.calls.Load())
	}
}

// The data given with SnapshotWith reaches every fetch of the host, its
// first included, whatever evictions happen meanwhile; data replaced
// after a failure is tried at once.
func TestStoreSnapshotWithData(t *testing.T) {
	clock := newManualClock()
	type route struct{ name string }
	seen := make(chan any, 16)
	f := newScriptFetcher(func(ctx context.Context, url string) (Response, error) {
		d := FetchData(ctx)
		seen <- d
		if r, _ := d.(*route); r == nil || r.name == "old" {
			return Response{}, fmt.Errorf("no route")
		}
		return reply(200, "User-agent: *\nDisallow: /x\n").resp, nil
	})
	s := newTestStore(t, f, clock, nil)
	old, cur := &route{"old"}, &route{"new"}
	snap := s.SnapshotWith(t.Context(), "a.example", old)
	if got := <-seen; got != any(old) || snap.Failures != 1 {
		t.Fatalf("first fetch had data %v, failures %d; want the old route, 1 failure", got, snap.Failures)
	}
	// The same data again: nothing happens.
	s.SnapshotWith(t.Context(), "a.example", old)
	settle(t, s, "a.example")
	if f.calls.Load() != 1 {
		t.Fatalf("%d fetches after the same data, want 1", f.calls.Load())
	}
	// New data after a failure: fetched again at once, with it.
	s.SnapshotWith(t.Context(), "a.example", cur)
	if got := <-seen; got != any(cur) {
		t.Fatalf("refetch had data %v, want the new route", got)
	}
	settle(t, s, "a.example")
	if snap := s.Snapshot(t.Context(), "a.example"); snap.Robots == nil {
		t.Errorf("after the new route: %v, want the file", snap.Access)
	}
	if FetchData(t.Context()) != nil {
		t.Error("FetchData outside a fetch is not nil")
	}
}

// Past MaxHosts, eviction passes over a host whose first fetch is in
// flight: it can neither lose its data nor be fetched twice.
func TestStoreEvictionSparesPendingFirstFetch(t *testing.T) {
	clock := newManualClock()
	release := make(chan struct{})
	f := newScriptFetcher(func(ctx context.Context, url string) (Response, error) {
		if strings.Contains(url, "slow.example") {
			select {
			case <-release:
			case <-ctx.Done():
				return Response{}, ctx.Err()
			}
			if FetchData(ctx) == nil {
				return reply(404, "").resp, nil // the route's variables lost: "no rules"
			}
			return reply(200, "User-agent: *\nDisallow: /\n").resp, nil
		}
		return reply(404, "").resp, nil
	})
	s := newTestStore(t, f, clock, func(c *StoreConfig) { c.MaxHosts = 2; c.NewHosts = 1000 })
	done := make(chan *Snapshot)
	go func() { done <- s.SnapshotWith(context.Background(), "slow.example", &struct{ v int }{1}) }()
	for f.calls.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	for i := range 50 {
		s.Snapshot(t.Context(), fmt.Sprintf("flood%d.example", i))
		clock.Advance(time.Second)
	}
	if _, ok := s.hosts.peek("slow.example"); !ok {
		t.Fatal("the host being fetched was evicted")
	}
	close(release)
	snap := <-done
	if snap.Robots == nil || snap.Robots.Allowed("GPTBot", "/secret") {
		t.Errorf("first fetch after the flood: %v; want the file that disallows /", snap.Access)
	}
	if n := f.calls.Load(); n > 51 {
		t.Errorf("%d fetches, want at most one per host", n)
	}
}

// A panic in the store's own callbacks ends that fetch only: waiters get
// an answer, and the process goes on.
func TestStoreSurvivesPanickingCallback(t *testing.T) {
	f := newScriptFetcher(serve(200, "User-agent: *\nDisallow: /\n"))
	s := newTestStore(t, f, newManualClock(), func(c *StoreConfig) {
		c.OnChange = func(string, *Snapshot, *Snapshot) { panic("callback") }
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	snap := s.Snapshot(ctx, "a.example")
	if snap == nil || strings.Contains(snap.Err, "waiting") {
		t.Fatalf("Snapshot() = %+v; want an answer, not a timeout", snap)
	}
	settle(t, s, "a.example")
}
