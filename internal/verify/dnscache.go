package verify

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// dnsShards spreads the cache over independently locked maps, so that
// concurrent requests rarely wait on one another.
const dnsShards = 16

// maxPTRNames bounds the PTR names of one address that are forward
// checked: genuine crawler addresses have one, and each name costs a
// query.
const maxPTRNames = 4

// dnsState is where a cached lookup stands.
type dnsState uint8

const (
	dnsPending dnsState = iota // a lookup is queued or under way
	dnsDone                    // the answer is in: names holds the confirmed names
	dnsFailed                  // the lookup failed; the answer is unknown
)

// dnsEntry is one address's reverse DNS answer. Its fields other than
// refreshing never change once it is in the cache.
type dnsEntry struct {
	state   dnsState
	names   []string // forward-confirmed PTR names under some known suffix
	expires int64    // Unix nanoseconds
	// started is when a pending lookup began (Unix nanoseconds), and retry
	// that it replaced an earlier answer or failure: only an address's
	// first lookup is an answer on its way (see checkDNS).
	started int64
	retry   bool
	// refreshing is set while a stale done entry is being looked up again.
	refreshing atomic.Bool
}

// dnsCache holds at most cap entries in total.
type dnsCache struct {
	shards   [dnsShards]dnsShard
	perShard int
}

type dnsShard struct {
	mu sync.RWMutex
	m  map[[16]byte]*dnsEntry // by the address's 16-byte form: hashes faster than netip.Addr
}

func newDNSCache(capacity int) *dnsCache {
	c := &dnsCache{perShard: max(1, capacity/dnsShards)}
	for i := range c.shards {
		c.shards[i].m = make(map[[16]byte]*dnsEntry)
	}
	return c
}

func (c *dnsCache) shard(b [16]byte) *dnsShard {
	return &c.shards[(b[15]^b[14]^b[11])%dnsShards]
}

func (c *dnsCache) get(addr netip.Addr) *dnsEntry {
	a := addr.As16()
	s := c.shard(a)
	s.mu.RLock()
	e := s.m[a]
	s.mu.RUnlock()
	return e
}

// insertIfAbsent adds e for a unless an unexpired entry is there, evicting
// to stay within the bound; it reports whether e was added.
func (c *dnsCache) insertIfAbsent(addr netip.Addr, e *dnsEntry, now int64) bool {
	a := addr.As16()
	s := c.shard(a)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.m[a]
	if old != nil && (old.state == dnsPending || now < old.expires) {
		return false
	}
	e.retry = old != nil
	c.makeRoom(s, a, now)
	s.m[a] = e
	return true
}

// replace installs e for a if the entry there is still old (a lookup whose
// entry was evicted meanwhile is dropped rather than growing the cache).
func (c *dnsCache) replace(addr netip.Addr, old, e *dnsEntry) {
	a := addr.As16()
	s := c.shard(a)
	s.mu.Lock()
	if s.m[a] == old {
		s.m[a] = e
	}
	s.mu.Unlock()
}

// remove deletes a's entry if it is still e.
func (c *dnsCache) remove(addr netip.Addr, e *dnsEntry) {
	a := addr.As16()
	s := c.shard(a)
	s.mu.Lock()
	if s.m[a] == e {
		delete(s.m, a)
	}
	s.mu.Unlock()
}

// makeRoom evicts from a full shard: an expired entry among the first few
// the map's random iteration yields, or else the first. Random eviction
// keeps the bound without the bookkeeping of an LRU list; the entries of
// genuine crawlers are few and come back at the next lookup.
func (c *dnsCache) makeRoom(s *dnsShard, keep [16]byte, now int64) {
	if len(s.m) < c.perShard {
		return
	}
	const probe = 8
	var victim [16]byte
	found := false
	n := 0
	for a, e := range s.m {
		if a == keep {
			continue
		}
		if !found {
			victim, found = a, true
		}
		if e.state != dnsPending && now >= e.expires {
			victim = a
			break
		}
		if n++; n >= probe {
			break
		}
	}
	delete(s.m, victim)
}

// len counts entries (for tests and the flood figures).
func (c *dnsCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}

// tokenBucket is a rate limiter driven by the injected clock.
type tokenBucket struct {
	mu     sync.Mutex
	rate   float64 // tokens per second
	burst  float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate float64, burst int) *tokenBucket {
	return &tokenBucket{rate: rate, burst: float64(burst), tokens: float64(burst)}
}

// allow takes a token if one is there at now.
func (b *tokenBucket) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
