package robotstxt

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Readers, refreshes and offers on a few hosts at once, with answers
// changing between 200, 404 and 503 as the clock moves: meant for go test
// -race. It checks that no host ever has two fetches in flight, and that
// every snapshot a reader sees is whole.
func TestStoreConcurrentReadersAndRefreshes(t *testing.T) {
	hosts := []string{"a.example", "b.example", "c.example", "d.example"}
	var inFlight sync.Map // URL → *atomic.Int32
	for _, h := range hosts {
		inFlight.Store("https://"+h+"/robots.txt", new(atomic.Int32))
	}
	var round atomic.Int64
	f := FetcherFunc(func(ctx context.Context, url string, limit int) (Response, error) {
		v, _ := inFlight.Load(url)
		n := v.(*atomic.Int32)
		if n.Add(1) > 1 {
			t.Errorf("two fetches in flight for %s", url)
		}
		defer n.Add(-1)
		time.Sleep(50 * time.Microsecond) // let readers overlap the fetch
		switch r := round.Add(1); r % 4 {
		case 0:
			return reply(503, "").resp, nil
		case 1:
			return reply(404, "").resp, nil
		default:
			return reply(200, fmt.Sprintf("User-agent: *\nDisallow: /v%d\n", r)).resp, nil
		}
	})
	clock := newManualClock()
	s := newTestStore(t, f, clock, func(c *StoreConfig) { c.MaxHosts = 3 })

	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 16 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				host := hosts[(r+i)%len(hosts)]
				if r%4 == 0 && i%8 == 0 {
					// A client's robots.txt passing through, a hint
					// while fetches and other hints may be in flight.
					s.Hint(host, VersionHash(fmt.Appendf(nil, "User-agent: *\nDisallow: /offered%d\n", i)))
				}
				snap := s.Snapshot(context.Background(), host)
				if err := checkWhole(snap); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 300 {
		clock.Advance(10 * time.Minute)
		time.Sleep(100 * time.Microsecond)
	}
	close(stop)
	readers.Wait()
	s.Close()
}

// checkWhole reports a snapshot whose fields contradict each other.
func checkWhole(s *Snapshot) error {
	switch {
	case s == nil:
		return fmt.Errorf("nil snapshot")
	case (s.Robots != nil) != (s.Access == AccessAvailable):
		return fmt.Errorf("%v snapshot with robots %v", s.Access, s.Robots != nil)
	case (s.Hash != "") != (s.Access == AccessAvailable):
		return fmt.Errorf("%v snapshot with hash %q", s.Access, s.Hash)
	case s.Access == AccessAvailable && s.DisallowAll:
		return fmt.Errorf("available snapshot that disallows all")
	case len(s.Earlier) >= MaxVersions:
		return fmt.Errorf("%d earlier versions, want fewer than %d", len(s.Earlier), MaxVersions)
	case slices.ContainsFunc(s.Earlier, func(e *Snapshot) bool { return e.Earlier != nil || e.ReplacedAt.IsZero() }):
		return fmt.Errorf("an earlier version with earlier versions of its own, or no end")
	case (s.Failures == 0) != s.FailingSince.IsZero():
		return fmt.Errorf("%d failures since %v", s.Failures, s.FailingSince)
	case s.Source == "":
		return fmt.Errorf("snapshot without a source")
	}
	return nil
}

// Requests never wait for a refresh, and one refresh at a time runs per
// host.
func TestStoreRefreshDoesNotBlockReaders(t *testing.T) {
	clock := newManualClock()
	f := newScriptFetcher(serve(200, "User-agent: *\nDisallow: /v1\n"))
	s := newTestStore(t, f, clock, nil)
	v1 := s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")

	release := make(chan struct{})
	started := make(chan struct{}, 10)
	f.set(func(ctx context.Context, url string) (Response, error) {
		started <- struct{}{}
		<-release
		return reply(200, "User-agent: *\nDisallow: /v2\n").resp, nil
	})
	clock.Advance(MaxRefresh)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			if got := s.Snapshot(context.Background(), "a.example"); got != v1 {
				t.Error("a reader got a new snapshot before the refresh ended")
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("readers blocked on a refresh")
	}
	<-started
	if n := f.calls.Load(); n != 2 {
		t.Errorf("%d fetches, want 2: one refresh in flight", n)
	}
	close(release)
	settle(t, s, "a.example")
	if got := s.Snapshot(t.Context(), "a.example"); got == v1 || got.Robots.Allowed("bot", "/v2") {
		t.Error("the refresh was not published")
	}
}

// However many requests arrive for a host not fetched yet, it is fetched
// once.
func TestStoreSingleFlightOnColdHost(t *testing.T) {
	release := make(chan struct{})
	f := newScriptFetcher(func(ctx context.Context, url string) (Response, error) {
		<-release
		return reply(200, "User-agent: *\nDisallow: /\n").resp, nil
	})
	s := newTestStore(t, f, newManualClock(), nil)
	const readers = 500
	var started, finished sync.WaitGroup
	got := make([]*Snapshot, readers)
	for i := range readers {
		started.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			started.Done()
			got[i] = s.Snapshot(context.Background(), "a.example")
		}()
	}
	started.Wait()
	close(release)
	finished.Wait()
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d fetches for %d concurrent requests, want 1", n, readers)
	}
	for i, snap := range got {
		if snap != got[0] || snap.Access != AccessAvailable {
			t.Fatalf("reader %d got %v, want the one snapshot fetched", i, snap)
		}
	}
}

// Close stops every fetch and goroutine, and no fetch starts after it.
func TestStoreClose(t *testing.T) {
	baseline := runtime.NumGoroutine()
	clock := newManualClock()
	f := newScriptFetcher(serve(200, "User-agent: *\nDisallow: /\n"))
	s, err := NewStore(StoreConfig{Fetcher: f, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	warm := s.Snapshot(t.Context(), "warm.example")
	settle(t, s, "warm.example")
	f.set(blockUntilDone)
	clock.Advance(MaxRefresh)
	s.Snapshot(t.Context(), "warm.example") // a refresh that blocks
	var waiters sync.WaitGroup
	cold := make([]*Snapshot, 10)
	for i := range cold {
		waiters.Add(1)
		go func() {
			defer waiters.Done()
			cold[i] = s.Snapshot(context.Background(), fmt.Sprintf("cold%d.example", i))
		}()
	}
	for f.calls.Load() < 12 {
		runtime.Gosched()
	}
	s.Close()
	waiters.Wait()
	// A closing store knows nothing of the hosts it never fetched: the
	// requests caught in between are refused (complete disallow for those
	// the rules bind), never let through because the configuration was
	// being replaced.
	for i, snap := range cold {
		if snap.Access != AccessUnreachable || !snap.DisallowAll || snap.Refusal != RefusalClosed || !strings.Contains(snap.Err, "closed") {
			t.Errorf("cold host %d after Close: %v, disallow all %v, refusal %v, err %q", i, snap.Access, snap.DisallowAll, snap.Refusal, snap.Err)
		}
	}
	calls := f.calls.Load()
	if got := s.Snapshot(t.Context(), "warm.example"); got != warm {
		t.Error("a warm host lost its snapshot on Close")
	}
	if got := s.Snapshot(t.Context(), "new.example"); got.Access != AccessUnreachable || !got.DisallowAll || got.Refusal != RefusalClosed {
		t.Errorf("new host after Close: %v, disallow all %v, refusal %v", got.Access, got.DisallowAll, got.Refusal)
	}
	if f.calls.Load() != calls {
		t.Errorf("%d fetches after Close, want none", f.calls.Load()-calls)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > baseline; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close, %d before the store", runtime.NumGoroutine(), baseline)
		}
	}
}

// When as many fetches as MaxHosts are in flight, a new host is not
// tracked: fetches in flight stay bounded by MaxHosts too.
func TestStoreBoundsFetchesInFlight(t *testing.T) {
	f := newScriptFetcher(blockUntilDone)
	s := newTestStore(t, f, newManualClock(), func(c *StoreConfig) { c.MaxHosts = 2 })
	for _, h := range []string{"a.example", "b.example"} {
		go s.Snapshot(context.Background(), h)
	}
	for f.calls.Load() < 2 {
		runtime.Gosched()
	}
	snap := s.Snapshot(t.Context(), "c.example")
	if snap.Access != AccessUnreachable || !strings.Contains(snap.Err, "fetches in flight") || f.calls.Load() != 2 {
		t.Errorf("third host: %v err %q, %d fetches; want unreachable, not tracked, 2 fetches", snap.Access, snap.Err, f.calls.Load())
	}
}
