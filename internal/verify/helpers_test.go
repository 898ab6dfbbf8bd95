package verify

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testTimeout bounds each wait for background work; a test never sleeps.
const testTimeout = 10 * time.Second

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// memStorage is an in-memory Storage.
type memStorage struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemStorage() *memStorage { return &memStorage{m: make(map[string][]byte)} }

func (s *memStorage) Load(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return v, nil
}

func (s *memStorage) Store(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = append([]byte(nil), value...)
	return nil
}

// fakeResolver answers from tables and counts queries.
type fakeResolver struct {
	mu      sync.Mutex
	ptr     map[string][]string // addr → names
	fwd     map[string][]string // name → addrs
	ptrErr  error
	panicky bool
	gate    chan struct{} // when set, PTR lookups wait for it
	ptrQ    atomic.Int64
	fwdQ    atomic.Int64
}

func (f *fakeResolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	f.ptrQ.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.panicky {
		panic("resolver bug")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptrErr != nil {
		return nil, f.ptrErr
	}
	if names, ok := f.ptr[addr]; ok {
		return names, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: addr, IsNotFound: true}
}

func (f *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.fwdQ.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []net.IPAddr
	for _, a := range f.fwd[strings.TrimSuffix(host, ".")] {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	if out == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// listServer serves range lists on 127.0.0.1 by path, counting requests.
type listServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string]string
	status map[string]int
	hits   atomic.Int64
}

func newListServer(t testing.TB, bodies map[string]string) *listServer {
	s := &listServer{bodies: bodies, status: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if r.UserAgent() != DefaultUserAgent {
			http.Error(w, "unnamed client", http.StatusForbidden)
			return
		}
		s.mu.Lock()
		body, ok := s.bodies[r.URL.Path]
		code := s.status[r.URL.Path]
		s.mu.Unlock()
		if code != 0 {
			w.WriteHeader(code)
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *listServer) set(path, body string, code int) {
	s.mu.Lock()
	s.bodies[path] = body
	s.status[path] = code
	s.mu.Unlock()
}

// rangeJSON writes a range list of prefixes.
func rangeJSON(prefixes ...string) string {
	var b strings.Builder
	b.WriteString(`{"creationTime":"2026-11-01T00:00:00.000000","prefixes":[`)
	for i, p := range prefixes {
		if i > 0 {
			b.WriteByte(',')
		}
		key := "ipv4Prefix"
		if strings.Contains(p, ":") {
			key = "ipv6Prefix"
		}
		fmt.Fprintf(&b, `{%q:%q}`, key, p)
	}
	b.WriteString("]}")
	return b.String()
}

// newTestVerifier builds, starts and schedules the closing of a verifier.
func newTestVerifier(t testing.TB, cfg Config) *Verifier {
	t.Helper()
	if cfg.Resolver == nil {
		cfg.Resolver = &fakeResolver{}
	}
	if cfg.lists == nil && !cfg.NoBuiltinLists {
		cfg.lists = []PublishedList{} // never the network
	}
	v, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	v.Start()
	t.Cleanup(func() { v.Close() })
	return v
}

// waitFor calls VerifyNow and fails the test on a timeout.
func waitFor(t testing.TB, v *Verifier, token, addr string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := v.VerifyNow(ctx, token, netip.MustParseAddr(addr))
	if err != nil {
		t.Fatalf("VerifyNow(%s, %s): %v", token, addr, err)
	}
	return res
}

func writeFile(t testing.TB, name, body string) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
