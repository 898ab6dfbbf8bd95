package enforce

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Limits and defaults of a Store; each says why it has its value.
const (
	// DefaultFetchTimeout bounds one access, redirects included: long
	// enough for a slow origin, short enough that a request waiting on a
	// host's first fetch is not held for long.
	DefaultFetchTimeout = 10 * time.Second
	// DefaultMaxHosts bounds the hosts a Store tracks, so that requests
	// with random Host headers cannot grow its memory without limit.
	DefaultMaxHosts = 1024
	// maxHostLen bounds a host name (253 octets for DNS, with room for a
	// port or an IPv6 literal): longer Host headers are not tracked.
	maxHostLen = 300
	// waitSlack lets a first fetch, bounded by the same timeout as its
	// waiters, report its own outcome before they give up on it.
	waitSlack = 100 * time.Millisecond
)

// StoreConfig configures a Store. Every field but Fetcher has a default,
// selected by its zero value.
type StoreConfig struct {
	// Fetcher sends the robots.txt requests. Required.
	Fetcher Fetcher
	// Now returns the current time; nil means time.Now. Fetch timeouts
	// run on real timers whatever it returns.
	Now func() time.Time
	// Scheme is the scheme of the robots.txt URLs: "https" (the default)
	// or "http".
	Scheme string
	// URL, when set, is where every host's robots.txt is fetched from,
	// instead of Scheme://host/robots.txt: one file shared by the sites
	// behind a handler. Callers then usually ask for one host only.
	URL string
	// MaxSize is how many octets of a robots.txt are parsed; the rest is
	// dropped and reported. The default is rules.DefaultMaxSize, 500 KiB;
	// less is refused, since RFC 9309 §2.5 has crawlers parse at least as
	// much, and the enforcer must not judge them by less.
	MaxSize int
	// FetchTimeout bounds one access, redirects included; the default is
	// DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Refresh is how long a fetched robots.txt is used before it is
	// fetched again; the response's Cache-Control max-age or Expires can
	// shorten it. The default and the maximum is MaxRefresh, 24 hours.
	Refresh time.Duration
	// MinRefresh is the shortest time between fetches for one host; the
	// default is DefaultMinRefresh. It may not exceed Refresh.
	MinRefresh time.Duration
	// MaxHosts bounds the hosts tracked; the default is DefaultMaxHosts.
	// Past it, the host used least recently is forgotten.
	MaxHosts int
	// Unreachable applies while a host's robots.txt is unreachable and no
	// earlier answer was ever fetched: UnreachableDisallow (the default,
	// as RFC 9309 §2.3.1.4 requires of crawlers) or UnreachableAllow.
	Unreachable UnreachablePolicy
	// LongUnreachable applies once a host's robots.txt has been unreachable
	// for UnreachableExpiry: UnreachableAllow (the default), UnreachableKeep
	// or UnreachableDisallow. RFC 9309 §2.3.1.4 then lets a crawler either
	// treat the file as unavailable or keep its cached copy; the default
	// allows, so that no crawler is blocked for doing what the RFC permits.
	LongUnreachable UnreachablePolicy
	// OnChange, when set, is told of each snapshot that says something
	// new about a host: its first, a change of access or of file, a new
	// error and the end of one (a failure repeating the last one is not
	// news). old is nil for the first. It is called from the goroutine that fetched, or
	// that offered (see Offer), after the snapshot is in force, and must
	// not block.
	OnChange func(host string, old, new *Snapshot)
}

// checkMaxSize returns the parse limit for a configured MaxSize.
func checkMaxSize(n int) (int, error) {
	switch {
	case n == 0:
		return rules.DefaultMaxSize, nil
	case n < rules.DefaultMaxSize:
		return 0, fmt.Errorf("max size %d is less than %d octets, the 500 KiB RFC 9309 §2.5 requires", n, rules.DefaultMaxSize)
	}
	return n, nil
}

// withDefaults returns cfg with its defaults filled in, or the reasons it is
// invalid.
func (cfg StoreConfig) withDefaults() (StoreConfig, error) {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Fetcher == nil {
		fail("a fetcher is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	switch cfg.Scheme {
	case "":
		cfg.Scheme = "https"
	case "http", "https":
	default:
		fail("scheme %q: want http or https", cfg.Scheme)
	}
	var err error
	if cfg.MaxSize, err = checkMaxSize(cfg.MaxSize); err != nil {
		errs = append(errs, err)
	}
	cfg.FetchTimeout = cmp.Or(cfg.FetchTimeout, DefaultFetchTimeout)
	cfg.Refresh = cmp.Or(cfg.Refresh, MaxRefresh)
	cfg.MinRefresh = cmp.Or(cfg.MinRefresh, DefaultMinRefresh)
	if cfg.FetchTimeout < 0 {
		fail("fetch timeout %v is negative", cfg.FetchTimeout)
	}
	if cfg.Refresh < 0 || cfg.Refresh > MaxRefresh {
		fail("refresh %v is not between 0 and 24h: RFC 9309 §2.4 has crawlers fetch robots.txt again within 24 hours", cfg.Refresh)
	}
	if cfg.MinRefresh <= 0 || cfg.MinRefresh > cfg.Refresh {
		fail("min refresh %v must be positive and at most refresh %v", cfg.MinRefresh, cfg.Refresh)
	}
	if cfg.MaxHosts == 0 {
		cfg.MaxHosts = DefaultMaxHosts
	} else if cfg.MaxHosts < 0 {
		fail("max hosts %d is negative", cfg.MaxHosts)
	}
	switch cfg.Unreachable {
	case UnreachableDefault:
		cfg.Unreachable = UnreachableDisallow
	case UnreachableDisallow, UnreachableAllow:
	default:
		fail("unreachable policy %v: want disallow or allow", cfg.Unreachable)
	}
	switch cfg.LongUnreachable {
	case UnreachableDefault:
		cfg.LongUnreachable = UnreachableAllow
	case UnreachableDisallow, UnreachableAllow, UnreachableKeep:
	default:
		fail("long unreachable policy %v: want allow, keep or disallow", cfg.LongUnreachable)
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, fmt.Errorf("robots.txt store config: %w", err)
	}
	return cfg, nil
}

// robotsURL returns the robots.txt URL of a host key (RFC 9309 §2.3): a
// host, fetched with scheme, or an origin naming its own ("http://host").
// It refuses a key that would make the URL name another authority or
// path.
func robotsURL(scheme, key string) (string, error) {
	host := key
	for _, s := range [...]string{"http", "https"} {
		if rest, ok := strings.CutPrefix(key, s+"://"); ok {
			scheme, host = s, rest
			break
		}
	}
	if host == "" || len(host) > maxHostLen {
		return "", fmt.Errorf("host %.40q: empty or longer than %d octets", host, maxHostLen)
	}
	raw := scheme + "://" + host + "/robots.txt"
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("host %q: %w", host, err)
	}
	if u.Host != host || u.User != nil || u.Path != "/robots.txt" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("host %q is not an authority", host)
	}
	return raw, nil
}

// undefined is the snapshot for a host whose file is not known and will
// not be fetched now (invalid host, caller gave up waiting): the file is
// undefined, and the unreachable policy applies (RFC 9309 §2.3.1.4); or,
// when the store is closed, no rules apply. It is not stored.
func (l *lifecycle) undefined(source string, now time.Time, err error) *Snapshot {
	if errors.Is(err, errStoreClosed) {
		// The store is shutting down (a config reload replaces it), which
		// says nothing about the host: no rules apply to the requests
		// caught in between, rather than the unreachable policy, which
		// would hold a crawler to the server's own reload.
		return &Snapshot{Access: AccessUnavailable, Source: source, FetchedAt: now, ChangedAt: now, CheckedAt: now, Err: err.Error()}
	}
	return &Snapshot{
		Access:      AccessUnreachable,
		DisallowAll: l.unreachable != UnreachableAllow,
		Source:      source,
		FetchedAt:   now,
		ChangedAt:   now,
		CheckedAt:   now,
		Err:         err.Error(),
	}
}

// A Store keeps, for each host, the robots.txt in force, fetched from the
// host itself and kept current by the access rules of RFC 9309 §2.3.1 and
// the caching rules of §2.4. It is safe for concurrent use.
//
// A request for a host not seen before waits for that host's first fetch;
// however many requests arrive together, there is one fetch. After that,
// requests never wait: they get the current snapshot, and the first one
// after it is due for refresh starts a fetch in the background, one at a
// time per host, whose result replaces the snapshot as a whole.
type Store struct {
	cfg     StoreConfig
	life    lifecycle
	stopped context.Context // done once Close is called; fetches derive from it
	stop    context.CancelFunc
	fetches sync.WaitGroup

	hosts  sync.Map   // lower-case host → *hostEntry
	mu     sync.Mutex // serialises adding and evicting hosts, and starting fetches against Close
	count  int        // hosts in the map; guarded by mu
	closed atomic.Bool
}

var _ Source = (*Store)(nil)

// hostEntry is the state of one host.
type hostEntry struct {
	host     string // its key in the store
	url      string
	snap     atomic.Pointer[Snapshot] // nil until the first fetch ends
	ready    chan struct{}            // closed when snap is first set
	fetching atomic.Bool              // a fetch is in flight: only it sets snap
	lastUsed atomic.Int64             // Unix seconds of the latest request
	evicted  bool                     // no longer in the map; guarded by Store.mu
}

// NewStore returns a Store, or an error saying what in cfg is invalid.
func NewStore(cfg StoreConfig) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Store{
		cfg: cfg,
		life: lifecycle{
			maxSize:     cfg.MaxSize,
			refresh:     cfg.Refresh,
			minRefresh:  cfg.MinRefresh,
			unreachable: cfg.Unreachable,
			longUnreach: cfg.LongUnreachable,
		},
	}
	s.stopped, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// Snapshot returns the snapshot in force for host, an authority such as
// "example.com" or "example.com:8443", compared without regard to case,
// whose robots.txt is fetched with the configured Scheme; or an origin
// naming its scheme, such as "http://example.com:8080". (A host and the
// origin of the same URL are two keys: a caller uses one form per site.)
// For a host not fetched yet it waits for the first fetch, no longer than
// the fetch timeout or ctx allow. When it has no snapshot to give (it gave
// up waiting, the host is not an authority, every tracked host is being
// fetched, or the store is closed) it returns one of an unreachable file,
// not stored, with Err saying why. It never returns nil.
func (s *Store) Snapshot(ctx context.Context, host string) *Snapshot {
	return s.snapshotAt(ctx, host, s.cfg.Now())
}

func (s *Store) snapshotAt(ctx context.Context, host string, now time.Time) *Snapshot {
	key := strings.ToLower(host)
	e, err := s.entry(key, now)
	if err != nil {
		return s.life.undefined(key, now, err)
	}
	// One-second resolution: a busy host's entry is written at most once a
	// second, not by every request.
	if sec := now.Unix(); e.lastUsed.Load() < sec {
		e.lastUsed.Store(sec)
	}
	if snap := e.snap.Load(); snap != nil {
		if !now.Before(snap.RefreshAt) {
			s.refresh(e)
		}
		return snap
	}
	wait, cancel := context.WithTimeout(ctx, s.cfg.FetchTimeout+waitSlack)
	defer cancel()
	select {
	case <-e.ready:
		return e.snap.Load()
	case <-wait.Done():
		return s.life.undefined(e.url, now, fmt.Errorf("waiting for %s: %w", e.url, wait.Err()))
	}
}

var errStoreClosed = errors.New("robots.txt store closed")

// entry returns the entry of host key, adding it and starting its first
// fetch when there is none.
func (s *Store) entry(key string, now time.Time) (*hostEntry, error) {
	if v, ok := s.hosts.Load(key); ok {
		return v.(*hostEntry), nil
	}
	u, err := robotsURL(s.cfg.Scheme, key)
	if s.cfg.URL != "" {
		u = s.cfg.URL
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, errStoreClosed
	}
	if v, ok := s.hosts.Load(key); ok {
		return v.(*hostEntry), nil
	}
	if s.count >= s.cfg.MaxHosts && !s.evictLocked() {
		return nil, fmt.Errorf("tracking %d hosts, all being fetched", s.count)
	}
	e := &hostEntry{host: key, url: u, ready: make(chan struct{})}
	e.lastUsed.Store(now.Unix())
	e.fetching.Store(true)
	s.hosts.Store(key, e)
	s.count++
	s.fetches.Add(1)
	go s.fetch(e)
	return e, nil
}

// evictLocked forgets the host used least recently, to the second, among
// those with no fetch in flight, and reports whether there was one. An exact
// LRU would need a shared list updated on every request; this scan of at
// most MaxHosts entries happens only when a new host arrives at the bound.
// Passing over hosts being fetched bounds the fetches in flight by MaxHosts
// too, and keeps one fetch at a time per host: an evicted entry never
// fetches again.
func (s *Store) evictLocked() bool {
	var oldest any
	var oldestUse int64
	s.hosts.Range(func(k, v any) bool {
		e := v.(*hostEntry)
		if t := e.lastUsed.Load(); !e.fetching.Load() && (oldest == nil || t < oldestUse) {
			oldest, oldestUse = k, t
		}
		return true
	})
	if oldest == nil {
		return false
	}
	v, _ := s.hosts.LoadAndDelete(oldest)
	v.(*hostEntry).evicted = true
	s.count--
	return true
}

// refresh starts a background fetch for e, unless one is in flight, the
// store is closed or e was evicted.
func (s *Store) refresh(e *hostEntry) {
	if !e.fetching.CompareAndSwap(false, true) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() || e.evicted {
		e.fetching.Store(false)
		return
	}
	s.fetches.Add(1)
	go s.fetch(e)
}

// fetch accesses e's robots.txt and publishes the snapshot that follows.
func (s *Store) fetch(e *hostEntry) {
	defer s.fetches.Done()
	ctx, cancel := context.WithTimeout(s.stopped, s.cfg.FetchTimeout)
	o := fetchRobots(ctx, s.cfg.Fetcher, e.url, s.life.maxSize+1)
	cancel()
	prev := e.snap.Load()
	var next *Snapshot
	switch {
	case s.stopped.Err() == nil:
		next = s.life.next(prev, e.url, o, s.cfg.Now())
	case prev == nil:
		// Closed during the first fetch: its waiters need an answer,
		// and a canceled fetch says nothing about the host.
		next = s.life.undefined(e.url, s.cfg.Now(), errStoreClosed)
	}
	if next != nil {
		s.publish(e, prev, next)
		if prev == nil {
			close(e.ready)
		}
	}
	e.fetching.Store(false)
}

// publish puts next in force for e, in place of prev, and tells OnChange
// when it is news.
func (s *Store) publish(e *hostEntry, prev, next *Snapshot) {
	e.snap.Store(next)
	if s.cfg.OnChange != nil && newsOf(prev, next) {
		s.cfg.OnChange(e.host, prev, next)
	}
}

// newsOf reports whether next says something prev did not: see
// StoreConfig.OnChange.
func newsOf(prev, next *Snapshot) bool {
	return prev == nil || prev.Access != next.Access || prev.Hash != next.Hash || prev.Err != next.Err
}

// Close stops the fetches in flight and waits for their goroutines to end.
// Afterwards Snapshot returns the snapshots already fetched and starts no
// fetch. Close always returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed.Store(true)
	s.mu.Unlock()
	s.stop()
	s.fetches.Wait()
	return nil
}
