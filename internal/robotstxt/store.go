package robotstxt

import (
	"container/list"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

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

	hosts    *hostTable    // bounded by MaxHosts; see store_table.go
	mu       sync.Mutex    // serialises adding and moving hosts in the table, and starting fetches against Close
	newHosts *rate.Limiter // the budget of first fetches; guarded by mu
	closed   atomic.Bool
	changes  atomic.Int64 // snapshots published, for savers to tell what is new
	// fleet is the versions the rest of the fleet had in force (see
	// SetFleet), nil when there are none; fleetWanted is signalled when a
	// site is first published that the fleet has versions of.
	fleet       atomic.Pointer[fleetView]
	fleetWanted chan struct{}
}

// Changes returns a count that grows with every snapshot the store puts in
// force, and as its hosts' use says more about how they are used (see
// Save): a caller that saves the store's state saves it again only when
// the count moved.
func (s *Store) Changes() int64 { return s.changes.Load() }

var _ Source = (*Store)(nil)

// hostEntry is the state of one host.
type hostEntry struct {
	host     string // its key in the store
	url      string
	snap     atomic.Pointer[Snapshot]      // nil until the first fetch ends
	ready    chan struct{}                 // closed when snap is first set
	fetching atomic.Bool                   // a fetch is in flight: only it sets snap
	pending  atomic.Bool                   // its first fetch is in flight (hostTable.addPending)
	inFifo   atomic.Bool                   // in the table's FIFO: not asked for in a second but its first
	elem     *list.Element                 // its place in the FIFO, or nil; guarded by Store.mu
	pinned   atomic.Bool                   // kept from eviction while its refresh is in flight (hostTable.pin)
	evicted  atomic.Bool                   // no longer in the table: it never fetches again
	lastUsed atomic.Int64                  // Unix seconds of the latest request
	uses     atomic.Uint32                 // how many distinct seconds it was asked for in, saved for eviction
	via      atomic.Pointer[siteVia]       // the fetcher the caller gave for its fetches, if any
	seed     *Snapshot                     // a restored copy too old to be in force, that the first fetch follows
	fleet    atomic.Pointer[fleetVersions] // the fleet's versions of the host, published with its own (see SetFleet)
	weight   atomic.Int64                  // the octets it holds, as the table counts them (see hostTable.weigh)
}

// use notes a request at now, and reports whether it is the first of its
// second, and whether the saved state should learn of it (see Changes):
// when uses reaches 2, 4, 8 or 16, which restoring tells apart (see
// warmth), or the first use of a day, which it ages by. One-second
// resolution: a busy host's entry is written at most once a second, not
// by every request, and uses counts the seconds in which the host was
// asked for: how often it is used, in a measure no burst inflates.
func (e *hostEntry) use(now time.Time) (first, news bool) {
	sec := now.Unix()
	last := e.lastUsed.Load()
	if last >= sec || !e.lastUsed.CompareAndSwap(last, sec) {
		return false, false
	}
	n := e.uses.Add(1)
	const day = 24 * 60 * 60
	return true, n&(n-1) == 0 && n <= 2*maxWarmth || last/day != sec/day
}

// siteVia holds a caller's fetcher for a host's fetches (see SnapshotWith).
type siteVia struct{ f Fetcher }

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
			keepBody:    cfg.KeepBody,
			maxSite:     cfg.MaxMemory/4 - siteReserve,
			onSite:      cfg.OnSite,
		},
	}
	s.hosts = newHostTable(cfg.MaxHosts, cfg.MaxMemory, cfg.OnSite)
	s.newHosts = rate.NewLimiter(rate.Limit(float64(cfg.NewHosts)/cfg.NewHostsPer.Seconds()), cfg.NewHosts)
	s.stopped, s.stop = context.WithCancel(context.Background())
	s.fleetWanted = make(chan struct{}, 1)
	return s, nil
}

// Snapshot returns the snapshot in force for host, an authority such as
// "example.com" or "example.com:8443", compared without regard to case,
// whose robots.txt is fetched with the configured Scheme; or an origin
// naming its scheme, such as "http://example.com:8080" (see SiteKey). (A
// host and the origin of the same URL are two keys: a caller uses one form
// per site.) For a host not fetched yet it waits for the first fetch, no
// longer than the fetch timeout or ctx allow. When it has no snapshot of
// the host's to give, it returns one, not stored, with Err saying why: of
// an unreachable file when it gave up waiting, and one that refuses the
// host (see Refusal) when the host is not an authority, is new and over
// the budget of first fetches, or the store is closed. It never returns
// nil.
func (s *Store) Snapshot(ctx context.Context, host string) *Snapshot {
	return s.snapshotAt(ctx, host, s.cfg.Now(), nil)
}

// SnapshotWith is Snapshot for a caller that fetches each host's
// robots.txt its own way: via, which the host's fetches use from now on
// in place of StoreConfig.Fetcher. A fetcher that sends the request
// through a server's own route is bound to that route, say, and to what
// the route's earlier handlers set for the request. The host keeps the
// fetcher given last, and a host added for a request has its fetcher
// from the start, so that its first fetch is never made without it; a
// fetcher replaced after a failed fetch is tried at once, since it may
// succeed where the old failed. via must be comparable (a pointer, or a
// struct of pointers): passing the same one again costs nothing. A nil
// via is Snapshot.
func (s *Store) SnapshotWith(ctx context.Context, host string, via Fetcher) *Snapshot {
	return s.snapshotAt(ctx, host, s.cfg.Now(), via)
}

func (s *Store) snapshotAt(ctx context.Context, host string, now time.Time, via Fetcher) *Snapshot {
	key := strings.ToLower(host)
	e, err := s.entry(key, now, via)
	if err != nil {
		return s.life.undefined(key, now, err)
	}
	if first, news := e.use(now); first {
		if news {
			s.changes.Add(1)
		}
		if e.inFifo.Load() {
			s.promote(e) // asked for in another second: in use
		} else {
			s.hosts.used(e)
		}
	}
	retry := false
	if via != nil {
		if d := e.via.Load(); d == nil || d.f != via {
			e.via.Store(&siteVia{via})
			retry = d != nil
		}
	}
	if snap := e.snap.Load(); snap != nil {
		if !now.Before(snap.RefreshAt) || retry && snap.Failures > 0 {
			s.refresh(e)
		}
		return snap
	}
	// No answer yet: a first fetch is in flight, or, for a site restored
	// with a copy too old to be in force, starts now.
	s.fetchUnanswered(e)
	wait, cancel := context.WithTimeout(ctx, s.cfg.FetchTimeout+waitSlack)
	defer cancel()
	select {
	case <-e.ready:
		return e.snap.Load()
	case <-wait.Done():
		return s.life.undefined(e.url, now, fmt.Errorf("waiting for %s: %w", e.url, wait.Err()))
	}
}

// promote moves e from the table's FIFO to its main part.
func (s *Store) promote(e *hostEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hosts.promote(e)
}

// done lets e go in the table once its fetch has ended (hostTable.done).
func (s *Store) done(e *hostEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hosts.done(e)
}

// refresh starts a background fetch for e, unless one is in flight, the
// store is closed, e was evicted or as many fetches as MaxHosts are in
// flight, and reports whether it started one. The entry is pinned (see
// hostTable.pin) until the fetch ends.
func (s *Store) refresh(e *hostEntry) bool { return s.startFetch(e, false) }

// fetchUnanswered is refresh for e, which had no snapshot when its caller
// looked: a first fetch may have published one, and ended, since, and a
// second would ask the site again for nothing.
func (s *Store) fetchUnanswered(e *hostEntry) { s.startFetch(e, true) }

// startFetch starts refresh's fetch; with unanswered, only while e has
// no snapshot.
func (s *Store) startFetch(e *hostEntry, unanswered bool) bool {
	if e.evicted.Load() || !e.fetching.CompareAndSwap(false, true) {
		return false
	}
	if unanswered && e.snap.Load() != nil { // published before fetching was cleared
		e.fetching.Store(false)
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() || !s.hosts.pin(e) {
		e.fetching.Store(false)
		return false
	}
	s.fetches.Add(1)
	go s.fetch(e)
	return true
}

// fetch accesses e's robots.txt and publishes the snapshot that follows.
// A panic past the Fetcher's (which fetchRobots already turns into an
// unreachable outcome), in OnChange say, ends this fetch alone: a first
// fetch's waiters then get an unreachable file, and the host is fetched
// again later.
func (s *Store) fetch(e *hostEntry) {
	defer s.fetches.Done()
	defer func() {
		// Let go (if a panic did not let it) before fetching is cleared,
		// so that a fetch starting next pins the entry after this one.
		s.done(e)
		e.fetching.Store(false)
	}()
	defer func() {
		if v := recover(); v != nil {
			select {
			case <-e.ready:
			default: // only this goroutine closes ready
				if e.snap.Load() == nil {
					now := s.cfg.Now()
					snap := s.life.undefined(e.url, now, fmt.Errorf("fetching %s: panic: %v", e.url, v))
					snap.RefreshAt = now.Add(BackoffStart)
					e.snap.Store(snap)
				}
				s.done(e)
				close(e.ready)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(s.stopped, s.cfg.FetchTimeout)
	fetcher := s.cfg.Fetcher
	if d := e.via.Load(); d != nil {
		fetcher = d.f
	}
	o := fetchRobots(ctx, fetcher, e.url, s.life.maxSize+1)
	cancel()
	prev := e.snap.Load().ownSnapshot() // what this store found: the fleet's versions are added anew
	first := prev == nil
	if first {
		prev = e.seed
	}
	var next *Snapshot
	switch {
	case s.stopped.Err() == nil:
		next = s.life.next(prev, e.url, o, s.cfg.Now())
		if s.cfg.OnVersion != nil && next.Robots != nil && (prev == nil || prev.sum != next.sum) {
			s.cfg.OnVersion(hex.EncodeToString(next.sum[:]), o.body)
		}
	case first:
		// Closed during the first fetch: its waiters need an answer,
		// and a canceled fetch says nothing about the host.
		next = s.life.undefined(e.url, s.cfg.Now(), &refusedError{why: RefusalClosed, err: errStoreClosed})
	}
	if next != nil {
		s.publish(e, e.snap.Load(), next)
	}
	// Let go before the waiters of a first fetch go on: the fetches the
	// table counts in flight are then the ones really in flight, and the
	// host is in the table for their next request.
	s.done(e)
	if first && next != nil {
		s.fleetNeeded(e) // in the table now: AttachFleet finds it
		close(e.ready)
	}
}

// publish puts next in force for e, in place of prev, and tells OnChange
// when it is news.
func (s *Store) publish(e *hostEntry, prev, next *Snapshot) {
	s.install(e, next)
	s.changes.Add(1)
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

// Stats tells, at now, how many hosts the store tracks by the access of
// the content in force (available, unavailable, unreachable: the last also
// for long_unreachable), and the age of the oldest available copy (0 when
// there is none). It reads every host: for metrics, not requests.
func (s *Store) Stats(now time.Time) (byAccess map[AccessResult]int, oldest time.Duration) {
	byAccess = make(map[AccessResult]int, 3)
	s.mu.Lock()
	young := s.hosts.fifoEntries()
	s.mu.Unlock()
	for _, e := range s.hosts.main.All() {
		young = append(young, e)
	}
	for _, e := range young {
		snap := e.snap.Load()
		if snap == nil || snap.Refusal != RefusalNone {
			continue
		}
		a := snap.Access
		if a == AccessLongUnreachable {
			a = AccessUnreachable
		}
		byAccess[a]++
		if snap.Robots != nil {
			oldest = max(oldest, now.Sub(snap.FetchedAt))
		}
	}
	return byAccess, oldest
}
