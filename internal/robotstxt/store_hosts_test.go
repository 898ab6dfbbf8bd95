package robotstxt

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

// The fetcher given with SnapshotWith makes every fetch of the host, its
// first included, whatever evictions happen meanwhile; a fetcher replaced
// after a failure is tried at once.
func TestStoreSnapshotWithFetcher(t *testing.T) {
	clock := newManualClock()
	seen := make(chan string, 16)
	route := func(name string) *scriptFetcher {
		return newScriptFetcher(func(ctx context.Context, url string) (Response, error) {
			seen <- name
			if name == "old" {
				return Response{}, fmt.Errorf("no route")
			}
			return reply(200, "User-agent: *\nDisallow: /x\n").resp, nil
		})
	}
	def := route("default")
	s := newTestStore(t, def, clock, nil)
	old, cur := route("old"), route("new")
	snap := s.SnapshotWith(t.Context(), "a.example", old)
	if got := <-seen; got != "old" || snap.Failures != 1 {
		t.Fatalf("first fetch by %s, failures %d; want the old route's, 1 failure", got, snap.Failures)
	}
	// The same fetcher again: nothing happens.
	s.SnapshotWith(t.Context(), "a.example", old)
	settle(t, s, "a.example")
	if old.calls.Load() != 1 {
		t.Fatalf("%d fetches after the same fetcher, want 1", old.calls.Load())
	}
	// A new fetcher after a failure: fetched again at once, with it.
	s.SnapshotWith(t.Context(), "a.example", cur)
	if got := <-seen; got != "new" {
		t.Fatalf("refetch by %s, want the new route's", got)
	}
	settle(t, s, "a.example")
	if snap := s.Snapshot(t.Context(), "a.example"); snap.Robots == nil {
		t.Errorf("after the new route: %v, want the file", snap.Access)
	}
	if def.calls.Load() != 0 {
		t.Errorf("the store's own fetcher made %d fetches of a site given its own, want none", def.calls.Load())
	}
}

// Past MaxHosts, eviction passes over a host whose first fetch is in
// flight: it can neither lose its fetcher nor be fetched twice.
func TestStoreEvictionSparesPendingFirstFetch(t *testing.T) {
	clock := newManualClock()
	release := make(chan struct{})
	// The store's own fetcher answers "no rules", as a route without its
	// variables would; the slow site's own fetcher has the file.
	f := newScriptFetcher(serve(404, ""))
	slow := newScriptFetcher(func(ctx context.Context, url string) (Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return Response{}, ctx.Err()
		}
		return reply(200, "User-agent: *\nDisallow: /\n").resp, nil
	})
	s := newTestStore(t, f, clock, func(c *StoreConfig) { c.MaxHosts = 2; c.NewHosts = 1000 })
	done := make(chan *Snapshot)
	go func() { done <- s.SnapshotWith(context.Background(), "slow.example", slow) }()
	for slow.calls.Load() < 1 {
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
	if n, m := f.calls.Load(), slow.calls.Load(); n > 50 || m != 1 {
		t.Errorf("%d fetches of the flood and %d of the slow site, want at most one per host", n, m)
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
