package robotstxt

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// manualClock is a clock that moves only when told to.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func newManualClock() *manualClock { return &manualClock{t: snapEpoch} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// scriptFetcher counts calls and answers with a function that tests may
// swap.
type scriptFetcher struct {
	calls  atomic.Int64
	mu     sync.Mutex
	answer func(ctx context.Context, url string) (Response, error)
}

func newScriptFetcher(answer func(ctx context.Context, url string) (Response, error)) *scriptFetcher {
	return &scriptFetcher{answer: answer}
}

func (f *scriptFetcher) Fetch(ctx context.Context, url string, limit int) (Response, error) {
	f.calls.Add(1)
	f.mu.Lock()
	answer := f.answer
	f.mu.Unlock()
	return answer(ctx, url)
}

func (f *scriptFetcher) set(answer func(ctx context.Context, url string) (Response, error)) {
	f.mu.Lock()
	f.answer = answer
	f.mu.Unlock()
}

// serve answers every URL with the same response.
func serve(code int, body string, fields ...string) func(context.Context, string) (Response, error) {
	r := reply(code, body, fields...).resp
	return func(context.Context, string) (Response, error) { return r, nil }
}

// blockUntilDone answers nothing until ctx is done, like a server that
// never responds.
func blockUntilDone(ctx context.Context, url string) (Response, error) {
	<-ctx.Done()
	return Response{}, ctx.Err()
}

func newTestStore(t *testing.T, f Fetcher, clock *manualClock, adjust func(*StoreConfig)) *Store {
	t.Helper()
	cfg := StoreConfig{Fetcher: f, Now: clock.Now}
	if adjust != nil {
		adjust(&cfg)
	}
	s, err := NewStore(cfg)
	if err != nil {
		t.Fatalf("NewStore: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// settle waits for the fetch in flight for host, if any, to end. A request
// for a host returns as soon as its first snapshot is published, a moment
// before the fetch is marked done; tests that move the clock right after it
// settle first, or the next request could find the fetch still in flight
// and start no refresh.
func settle(t *testing.T, s *Store, host string) {
	t.Helper()
	e, ok := s.hosts.peek(host)
	if !ok {
		t.Fatalf("no entry for %s", host)
	}
	for deadline := time.Now().Add(5 * time.Second); e.fetching.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("fetch for %s did not end", host)
		}
	}
}

func TestNewStoreConfig(t *testing.T) {
	f := routeFetcher{}
	tests := []struct {
		name string
		cfg  StoreConfig
		want string // substring of the error; empty for a valid config
	}{
		{"defaults", StoreConfig{Fetcher: f}, ""},
		{"all set", StoreConfig{Fetcher: f, Scheme: "http", MaxSize: 1 << 20, FetchTimeout: time.Second, Refresh: time.Hour,
			MinRefresh: time.Second, MaxHosts: 10, Unreachable: UnreachableAllow, LongUnreachable: UnreachableKeep}, ""},
		{"no fetcher", StoreConfig{}, "a fetcher is required"},
		{"scheme", StoreConfig{Fetcher: f, Scheme: "ftp"}, `scheme "ftp"`},
		{"max size", StoreConfig{Fetcher: f, MaxSize: 1000}, "max size 1000 is less than 512000"},
		{"fetch timeout", StoreConfig{Fetcher: f, FetchTimeout: -time.Second}, "fetch timeout -1s is negative"},
		{"refresh", StoreConfig{Fetcher: f, Refresh: 25 * time.Hour}, "refresh 25h0m0s is not between 0 and 24h"},
		{"negative refresh", StoreConfig{Fetcher: f, Refresh: -time.Hour}, "refresh -1h0m0s is not between"},
		{"min refresh", StoreConfig{Fetcher: f, Refresh: time.Hour, MinRefresh: 2 * time.Hour}, "min refresh 2h0m0s"},
		{"max hosts", StoreConfig{Fetcher: f, MaxHosts: -1}, "max hosts -1"},
		{"unreachable keep", StoreConfig{Fetcher: f, Unreachable: UnreachableKeep}, "unreachable policy keep"},
		{"long unreachable", StoreConfig{Fetcher: f, LongUnreachable: 9}, "long unreachable policy policy(9)"},
		{"all errors", StoreConfig{Scheme: "ftp", MaxSize: 1}, "fetcher is required\nscheme"},
	}
	for _, tt := range tests {
		s, err := NewStore(tt.cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: NewStore() = %v, want no error", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: NewStore() error = %v, want one containing %q", tt.name, err, tt.want)
		}
		if s != nil {
			s.Close()
		}
	}
}

func TestParseUnreachablePolicy(t *testing.T) {
	for _, p := range []UnreachablePolicy{UnreachableDisallow, UnreachableAllow, UnreachableKeep} {
		if got, err := ParseUnreachablePolicy(p.String()); got != p || err != nil {
			t.Errorf("ParseUnreachablePolicy(%q) = %v, %v; want %v", p.String(), got, err, p)
		}
	}
	if _, err := ParseUnreachablePolicy("deny"); err == nil {
		t.Error(`ParseUnreachablePolicy("deny") succeeded`)
	}
}

// What a request for a host gets, for each kind of access (RFC 9309
// §2.3.1); fetch_test.go has the details of reading responses.
func TestStoreSnapshotOutcomes(t *testing.T) {
	const text = "User-agent: *\nDisallow: /private\n"
	tests := []struct {
		name        string
		routes      routeFetcher
		cfg         func(*StoreConfig)
		access      AccessResult
		disallowAll bool
		status      int
		finalURL    string
	}{
		{"200 text", routeFetcher{robotsA: reply(200, text)}, nil, AccessAvailable, false, 200, ""},
		{"200 html page", routeFetcher{robotsA: reply(200, "<!doctype html>")}, nil, AccessUnreachable, true, 200, ""},
		{"200 binary", routeFetcher{robotsA: reply(200, "\x89PNG\x00\x00")}, nil, AccessUnreachable, true, 200, ""},
		{"cross-host redirect", routeFetcher{robotsA: reply(301, "", "Location", "https://b.example/robots.txt"),
			"https://b.example/robots.txt": reply(200, text)}, nil, AccessAvailable, false, 200, "https://b.example/robots.txt"},
		{"6 redirects", redirectChain(6), nil, AccessUnavailable, false, 302, "https://a.example/hop5"},
		{"404", routeFetcher{robotsA: reply(404, "")}, nil, AccessUnavailable, false, 404, ""},
		{"403", routeFetcher{robotsA: reply(403, "")}, nil, AccessUnavailable, false, 403, ""},
		{"429", routeFetcher{robotsA: reply(429, "")}, nil, AccessUnreachable, true, 429, ""},
		{"503", routeFetcher{robotsA: reply(503, "")}, nil, AccessUnreachable, true, 503, ""},
		{"network error", routeFetcher{}, nil, AccessUnreachable, true, 0, ""},
		{"unreachable, allowed", routeFetcher{}, func(c *StoreConfig) { c.Unreachable = UnreachableAllow }, AccessUnreachable, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, tt.routes, newManualClock(), tt.cfg)
			snap := s.Snapshot(t.Context(), "A.Example")
			if snap.Access != tt.access || snap.DisallowAll != tt.disallowAll || snap.HTTPStatus != tt.status || snap.FinalURL != tt.finalURL {
				t.Errorf("Snapshot() = %v disallowAll=%v status %d final %q; want %v %v %d %q",
					snap.Access, snap.DisallowAll, snap.HTTPStatus, snap.FinalURL, tt.access, tt.disallowAll, tt.status, tt.finalURL)
			}
			// RFC 9309 §2.3.1.2: whatever the redirects, the rules are
			// those of the host asked for.
			if snap.Source != robotsA || (snap.Robots != nil) != (tt.access == AccessAvailable) || !snap.FetchedAt.Equal(snapEpoch) {
				t.Errorf("Snapshot() source %q robots %v fetched %v", snap.Source, snap.Robots != nil, snap.FetchedAt)
			}
			// Snapshot returns once the first snapshot is published, a
			// moment before the fetch is marked done and its host counted.
			settle(t, s, "a.example")
			if n := held(s); n != 1 {
				t.Errorf("%d hosts tracked, want 1", n)
			}
		})
	}
}

// RFC 9309 §2.5: a body cut at the limit is parsed up to it, and the cut
// reported.
func TestStoreTruncatedBody(t *testing.T) {
	f := FetcherFunc(func(ctx context.Context, url string, limit int) (Response, error) {
		body := []byte("User-agent: *\n" + strings.Repeat("Disallow: /x\n", limit/13+1))
		return Response{StatusCode: 200, Body: body[:limit], Truncated: true}, nil
	})
	s := newTestStore(t, f, newManualClock(), nil)
	snap := s.Snapshot(t.Context(), "a.example")
	if snap.Access != AccessAvailable || !snap.Truncated || !hasDiagnostic(snap.Robots, rules.CodeSizeLimit) {
		t.Errorf("Snapshot() = %v truncated=%v, diagnostics %v", snap.Access, snap.Truncated, snap.Robots.Diagnostics())
	}
}

// RFC 9309 §2.3.1.4: a fetch that never answers times out as unreachable.
func TestStoreFetchTimeout(t *testing.T) {
	s := newTestStore(t, newScriptFetcher(blockUntilDone), newManualClock(),
		func(c *StoreConfig) { c.FetchTimeout = 20 * time.Millisecond })
	snap := s.Snapshot(t.Context(), "a.example")
	if snap.Access != AccessUnreachable || !snap.DisallowAll || !strings.Contains(snap.Err, "deadline exceeded") {
		t.Errorf("Snapshot() = %v disallowAll=%v err %q; want unreachable, complete disallow, a deadline", snap.Access, snap.DisallowAll, snap.Err)
	}
}

// A request waiting for a first fetch gives up with its context.
func TestStoreColdWaitFollowsContext(t *testing.T) {
	f := newScriptFetcher(blockUntilDone)
	s := newTestStore(t, f, newManualClock(), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	snap := s.Snapshot(ctx, "a.example")
	if snap.Access != AccessUnreachable || !snap.DisallowAll || !strings.Contains(snap.Err, "waiting for https://a.example/robots.txt") {
		t.Errorf("Snapshot() = %v disallowAll=%v err %q", snap.Access, snap.DisallowAll, snap.Err)
	}
	if _, ok := s.hosts.peek("a.example"); !ok || f.calls.Load() != 1 {
		t.Errorf("the first fetch should go on for later requests: entry %v, calls %d", ok, f.calls.Load())
	}
}

// RFC 9309 §2.4: the file is fetched again when its time is up, no sooner,
// and the copy in force is served meanwhile.
func TestStoreRefresh(t *testing.T) {
	tests := []struct {
		name   string
		first  func(context.Context, string) (Response, error)
		before time.Duration // no fetch after this long
		due    time.Duration // a fetch after this long
	}{
		{"24 hours", serve(200, "User-agent: *\nDisallow: /v1\n"), 24*time.Hour - time.Second, 24 * time.Hour},
		{"max-age", serve(200, "", "Cache-Control", "max-age=600"), 599 * time.Second, 10 * time.Minute},
		{"no-store", serve(200, "", "Cache-Control", "no-store"), 59 * time.Second, time.Minute},
		{"backoff after failure", serve(503, ""), 59 * time.Second, time.Minute},
		{"unavailable", serve(404, ""), 24*time.Hour - time.Second, 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newManualClock()
			f := newScriptFetcher(tt.first)
			s := newTestStore(t, f, clock, nil)
			first := s.Snapshot(t.Context(), "a.example")
			settle(t, s, "a.example")
			clock.Advance(tt.before)
			if got := s.Snapshot(t.Context(), "a.example"); got != first || f.calls.Load() != 1 {
				t.Fatalf("after %v: %d fetches, snapshot replaced %v; want 1, false", tt.before, f.calls.Load(), got != first)
			}
			f.set(serve(200, "User-agent: *\nDisallow: /v2\n"))
			clock.Advance(tt.due - tt.before)
			if got := s.Snapshot(t.Context(), "a.example"); got != first {
				t.Errorf("the request that starts a refresh got a new snapshot; want the one in force")
			}
			settle(t, s, "a.example")
			got := s.Snapshot(t.Context(), "a.example")
			if f.calls.Load() != 2 || got.Access != AccessAvailable || got.Robots.Allowed("bot", "/v2") || !got.FetchedAt.Equal(clock.Now()) {
				t.Errorf("after %v: %d fetches, %v, /v2 allowed %v; want 2, the new file", tt.due, f.calls.Load(), got.Access, got.Robots.Allowed("bot", "/v2"))
			}
		})
	}
}

// RFC 9309 §2.3.1.4, §2.4: an unreachable file keeps the last copy in
// force, and its Earlier records the content change when one happens.
func TestStoreKeepsCopyAndRecordsChange(t *testing.T) {
	clock := newManualClock()
	f := newScriptFetcher(serve(200, "User-agent: *\nDisallow: /old\n"))
	s := newTestStore(t, f, clock, nil)
	old := s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")

	f.set(serve(500, ""))
	clock.Advance(24 * time.Hour)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	kept := s.Snapshot(t.Context(), "a.example")
	if kept.Robots != old.Robots || kept.Hash != old.Hash || kept.Err == "" || kept.Failures != 1 {
		t.Fatalf("after a 500: robots kept %v, hash %q, err %q, failures %d", kept.Robots == old.Robots, kept.Hash, kept.Err, kept.Failures)
	}

	f.set(serve(200, "User-agent: *\nDisallow: /new\n"))
	clock.Advance(BackoffStart)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	now := clock.Now()
	cur := s.Snapshot(t.Context(), "a.example")
	if cur.Hash == old.Hash || cur.Version(old.Hash, now) == nil || cur.Version(old.Hash, now.Add(GraceWindow-time.Second)) == nil || cur.Version(old.Hash, now.Add(GraceWindow)) != nil {
		t.Errorf("after the change: hash %q, earlier %v, grace ends %v", cur.Hash, cur.Earlier, cur.ChangedAt.Add(GraceWindow))
	}
}

// Hosts that are not authorities are not tracked or fetched, and hosts
// compare without regard to case.
func TestStoreHosts(t *testing.T) {
	f := newScriptFetcher(serve(404, ""))
	s := newTestStore(t, f, newManualClock(), nil)
	for _, h := range []string{"", "a.example/x", "user@a.example", "a.example?q", "a.example#f", "a example", strings.Repeat("a", 400),
		"http://", "https://a.example/x", "http://user@a.example", "ftp://a.example", "http://http://a.example"} {
		snap := s.Snapshot(t.Context(), h)
		if snap.Access != AccessUnreachable || snap.Err == "" {
			t.Errorf("Snapshot(%.20q) = %v err %q, want unreachable with an error", h, snap.Access, snap.Err)
		}
	}
	if f.calls.Load() != 0 || held(s) != 0 {
		t.Errorf("invalid hosts: %d fetches, %d tracked; want none", f.calls.Load(), held(s))
	}
	a := s.Snapshot(t.Context(), "Example.COM:8443")
	if b := s.Snapshot(t.Context(), "example.com:8443"); a != b || f.calls.Load() != 1 || a.Source != "https://example.com:8443/robots.txt" {
		t.Errorf("hosts differing in case: same snapshot %v, %d fetches, source %q", a == b, f.calls.Load(), a.Source)
	}
	// An origin names its own scheme.
	for _, c := range []struct{ key, source string }{
		{"HTTP://Example.COM:8080", "http://example.com:8080/robots.txt"},
		{"https://example.net", "https://example.net/robots.txt"},
	} {
		if snap := s.Snapshot(t.Context(), c.key); snap.Source != c.source || snap.Access != AccessUnavailable {
			t.Errorf("Snapshot(%q) = %v from %q, want %v (the fetcher's 404) from %q", c.key, snap.Access, snap.Source, AccessUnavailable, c.source)
		}
	}
}

// The path of every request once its host is fetched: a map read, a clock
// read and two atomic loads, no allocation.
func BenchmarkStoreSnapshotWarm(b *testing.B) {
	s, err := NewStore(StoreConfig{Fetcher: newScriptFetcher(serve(200, "User-agent: *\nDisallow: /\n"))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	s.Snapshot(ctx, "a.example")
	b.ReportAllocs()
	for b.Loop() {
		s.Snapshot(ctx, "a.example")
	}
}

// TestStoreFixedURLAndOrigin checks that a Store configured with a URL
// fetches that URL for a host, and that its Fetcher can tell, through a
// redirect chain, which robots.txt the chain started from.
func TestStoreFixedURLAndOrigin(t *testing.T) {
	const fixed = "https://cdn.example.net/shared/robots.txt"
	var mu sync.Mutex
	var seen [][2]string // url, origin
	f := FetcherFunc(func(ctx context.Context, url string, limit int) (Response, error) {
		mu.Lock()
		seen = append(seen, [2]string{url, FetchOrigin(ctx)})
		mu.Unlock()
		if url == fixed {
			return reply(301, "", "Location", "/shared/robots-v2.txt").resp, nil
		}
		return reply(200, "User-agent: *\nDisallow: /x\n").resp, nil
	})
	s := newTestStore(t, f, newManualClock(), func(c *StoreConfig) { c.URL = fixed })
	snap := s.Snapshot(t.Context(), "example.com")
	if snap.Robots == nil || snap.Robots.Allowed("a", "/x") {
		t.Fatalf("snapshot = %+v, want the fixed URL's rules", snap)
	}
	mu.Lock()
	defer mu.Unlock()
	want := [][2]string{{fixed, fixed}, {"https://cdn.example.net/shared/robots-v2.txt", fixed}}
	if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("fetches (url, origin) = %q, want %q", seen, want)
	}
	if got := FetchOrigin(t.Context()); got != "" {
		t.Errorf("FetchOrigin outside a fetch = %q, want empty", got)
	}
}
