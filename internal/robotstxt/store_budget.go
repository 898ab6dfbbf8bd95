package robotstxt

import (
	"math"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/heapsize"
)

// The table's two bounds (see store_table.go). Main's otter cache carries
// one weight: what a host holds, in KiB, which its policy evicts by. The
// bound on hosts is kept beside it: when main holds more hosts than its
// room, its maximum is lowered below what it holds, which has its policy
// let go of the host it values least (the same choice its own eviction
// makes), until the count fits, and the maximum is set back. What the
// FIFO holds is counted here, in hosts and octets. Every step is O(1)
// per host let go.

// kib returns n octets in KiB, rounded up, at least 1 and at most what a
// weight of otter's holds.
func kib(n int64) uint64 {
	return uint64(min(max((n+1023)>>10, 1), math.MaxUint32))
}

// weigh notes in e, and in the table's count of octets, what e holds now
// (see siteWeight): its name, URL and snapshot, or the restored copy it
// waits to follow. The caller holds Store.mu, and e weighs nothing in
// main while it is weighed (it is new, young, or pinned).
func (t *hostTable) weigh(e *hostEntry) {
	snap := e.snap.Load()
	if snap == nil {
		snap = e.seed
	}
	w := siteWeight(snap) + int64(heapsize.String(e.host)+heapsize.String(e.url))
	t.bytes.Add(w - e.weight.Swap(w))
}

// forgot counts e out of the table, which let it go for the reason why,
// and keeps its name in the ghost list, with when its copy was due for a
// refresh.
func (t *hostTable) forgot(e *hostEntry, why SiteEvent) {
	e.evicted.Store(true)
	t.bytes.Add(-e.weight.Load())
	var due int64
	if snap := e.snap.Load(); snap != nil {
		due = snap.RefreshAt.UnixNano()
	}
	t.ghost.Set(e.host, due)
	t.tell(why, e.host)
}

// tell tells onSite of ev.
func (t *hostTable) tell(ev SiteEvent, site string) {
	if t.onSite != nil {
		t.onSite(ev, site)
	}
}

// fetchingAgain tells onSite when key, a site whose first fetch is
// starting, was forgotten before its copy was due for a refresh: the
// fetch is one the bounds cost.
func (t *hostTable) fetchingAgain(key string, now time.Time) {
	if en, ok := t.ghost.GetEntryQuietly(key); ok && now.UnixNano() < en.Value {
		t.tell(SiteRefetched, key)
	}
}

// mainHeld returns the hosts main holds, those whose refresh is in flight
// aside (see pin). The caller holds Store.mu.
func (t *hostTable) mainHeld() int { return t.main.EstimatedSize() - t.pinned }

// mainByteRoom returns, in KiB, what main may hold: what the FIFO leaves
// of MaxMemory, up to its floor.
func (t *hostTable) mainByteRoom() uint64 {
	return kib(t.budget - min(t.fifoBytes, t.byteFloor))
}

// fifoByteRoom returns the octets the FIFO may hold: what main leaves of
// MaxMemory, and at least its floor.
func (t *hostTable) fifoByteRoom() int64 {
	return max(t.byteFloor, t.budget-int64(t.main.WeightedSize())<<10)
}

// fitCount has main let go of the hosts its policy values least until it
// holds no more than what the FIFO leaves of MaxHosts, up to its floor
// (see resize). The caller holds Store.mu.
func (t *hostTable) fitCount() {
	room := t.max - min(t.fifo.Len(), t.floor)
	if t.mainHeld() <= room {
		return
	}
	t.trimming.Store(true)
	for t.mainHeld() > room {
		held, w := t.mainHeld(), t.main.WeightedSize()
		if w == 0 {
			break // only hosts in flight: they weigh nothing
		}
		t.main.SetMaximum(w - 1)
		if t.mainHeld() >= held {
			break
		}
	}
	t.trimming.Store(false)
	t.main.SetMaximum(t.mainByteRoom())
}

// Bytes returns the octets the sites the store tracks hold (see
// StoreConfig.MaxMemory), those whose fetch is in flight included, as
// the table counts them: for metrics.
func (s *Store) Bytes() int64 { return s.hosts.bytes.Load() }
