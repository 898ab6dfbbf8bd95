package robotstxt

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/maypok86/otter/v2"
)

// The hosts a Store tracks are bounded by MaxHosts, and past the bound one
// must go. Which one decides whether a flood of one-time Host headers (a
// scan, or a client making them up) pushes out the sites in constant use:
// a site pushed out comes back only through the budget of first fetches,
// which the flood has spent, and its crawlers are refused meanwhile.
// Least-recently-used alone cannot tell them apart: within the flood's
// pace, every host is about as recent as every other.
//
// So the table has two parts, after the 2Q policy (Johnson and Shasha,
// 1994). A new host, once its first fetch has ended, waits in a FIFO, the
// doorkeeper, which holds what the main part leaves of MaxHosts, and at
// least a quarter of it. The main part holds what the FIFO leaves: below
// MaxHosts in all, neither part forgets a host, and at the bound the
// FIFO's quarter is taken from the main part's least used. Asked for again while there, in a second but its
// first (a burst of requests is one use, however many), the host moves to
// the main part; pushed out by newer hosts, it is forgotten, and its name
// is kept in a ghost list, so that when it comes back it goes to the main
// part at once. A scan of one-time hosts churns the FIFO and the ghost
// list only, and never reaches a site in use.
//
// The main part and the ghost list are W-TinyLFU caches,
// github.com/maypok86/otter/v2 (the policy of Java's Caffeine): past its
// bound, a name leaving a cache's small LRU window is kept only if a
// count-min sketch of recent use says it is asked for more often than the
// one it would replace. So the ghost list keeps the names that come back
// however many one-time hosts pass between their visits (a site asked for
// once in every 100 requests, between 90 one-time hosts, at max_hosts 30),
// and in the main part the sites asked for all the time sit in a protected
// segment, which hosts asked for twice cannot push them out of. otter
// alone is not enough: its window grows and shrinks by hill climbing on
// the hit rate, which at a few dozen hosts is noise, and a one-time flood
// through it then squeezes the protected segment below the sites in use
// (seen with max_hosts 30 and 10 busy sites: the window grew to 19 of 30).
// Behind the FIFO, one-time hosts never reach the main part.
//
// Every operation is O(1) (amortised in otter), whatever MaxHosts: no
// scan of the table. Cache maintenance (draining the buffers of reads and
// writes, evicting) runs on the goroutine that reads or writes: the table
// starts no goroutine, so nothing outlives Close. The ghost list holds
// names only, as many as MaxHosts.
//
// A host whose first fetch is in flight is beside both parts, in the map
// of the FIFO: that fetch runs to its end with the site's data (see
// SnapshotWith), and its waiters get its answer. A host of the main part
// whose refresh is in flight is pinned: its entry weighs nothing, and
// otter never evicts an entry of weight zero (a host of the FIFO moves to
// the main part before its refresh: it is being asked for). So there is
// one fetch per host at a time: an evicted entry never fetches again, and
// a host that comes back is a new entry. The fetches in flight are
// bounded by MaxHosts, as before: past that, a new host is refused and a
// refresh waits for the next request.
//
// The table bounds the octets its hosts hold too (MaxMemory), the same
// way: the FIFO holds what the main part leaves of MaxMemory, and at
// least a quarter of it; main's otter cache weighs each host by what it
// holds (see store_weight.go), in KiB, and evicts by that weight with
// the same policy. Its bound on hosts, which one weight cannot carry as
// well, is kept by store_budget.go: past it, main's maximum is lowered
// until its policy has let as many hosts go, and set back.

// mainSketchHosts bounds the hosts main's frequency sketch is sized for up
// front (see newHostTable).
const mainSketchHosts = 4 * DefaultMaxHosts

// hostTable is a Store's hosts, by lower-case host. Its fields but the
// caches are guarded by Store.mu, but for the lock-free reads noted.
type hostTable struct {
	main *otter.Cache[string, *hostEntry] // hosts asked for again after their first fetch
	// ghost holds the names of hosts forgotten, each with when its copy
	// was due for a refresh (Unix nanoseconds), to tell a fetch the
	// bounds cost (SiteRefetched).
	ghost *otter.Cache[string, int64]
	// young holds the hosts whose first fetch is in flight and those of
	// the FIFO; it is read without the lock.
	young sync.Map
	fifo  list.List // of *hostEntry, oldest first
	max   int       // MaxHosts, the most fetches in flight too
	floor int       // the least the FIFO holds: 0 when there is no FIFO
	// inFlight counts the fetches in flight: first fetches and pinned
	// refreshes; read without the lock.
	inFlight atomic.Int64
	pinned   int // hosts of main whose refresh is in flight

	budget    int64        // MaxMemory
	byteFloor int64        // the least the FIFO may hold, in octets
	fifoBytes int64        // what the FIFO's hosts hold
	bytes     atomic.Int64 // what every host held holds, those in flight too
	// trimming is set while main evicts for MaxHosts (see fitCount), to
	// tell why a host was forgotten.
	trimming atomic.Bool
	onSite   func(SiteEvent, string)
}

// newHostTable returns a table of at most max hosts holding at most
// budget octets, and as many more whose first fetch is in flight. It
// tells onSite (nil for none) of the hosts it forgets.
func newHostTable(max int, budget int64, onSite func(SiteEvent, string)) *hostTable {
	t := &hostTable{max: max, floor: max / 4, budget: budget, byteFloor: budget / 4, onSite: onSite} // no FIFO below 4 hosts: new hosts go straight to main
	mainMax := max - t.floor
	t.main = otter.Must(&otter.Options[string, *hostEntry]{
		MaximumWeight: kib(budget),
		Weigher: func(_ string, e *hostEntry) uint32 {
			if e.pinned.Load() {
				return 0 // never evicted for size: see pin
			}
			return uint32(kib(e.weight.Load()))
		},
		// The sketch is sized up front for this many hosts, so that uses
		// count from the first; a larger table grows it to its hosts
		// once half full by weight, which a table of small files held
		// to MaxHosts may never be, so the size up front is generous:
		// 4,096 hosts cost 166 KB, where max_hosts 1000000 would cost
		// tens of megabytes for a Store of three sites.
		InitialCapacity: min(mainMax, mainSketchHosts),
		// Under the lock of the entry's bucket: an atomic store, and a
		// write to the other cache, whose locks are its own.
		OnAtomicDeletion: func(ev otter.DeletionEvent[string, *hostEntry]) {
			if ev.WasEvicted() {
				why := SiteForgottenMemory
				if t.trimming.Load() {
					why = SiteForgottenHosts
				}
				t.forgot(ev.Value, why)
			}
		},
		Executor: func(fn func()) { fn() },
	})
	t.ghost = otter.Must(&otter.Options[string, int64]{
		MaximumSize:     max,
		InitialCapacity: min(max, DefaultMaxHosts),
		Executor:        func(fn func()) { fn() },
	})
	return t
}

// get returns the entry of key. It counts no use: see used.
func (t *hostTable) get(key string) (*hostEntry, bool) {
	if en, ok := t.main.GetEntryQuietly(key); ok {
		return en.Value, true
	}
	return t.loadYoung(key)
}

// used counts a use of e, of the main part, in its policy: the Store
// counts one a second (hostEntry.use), as the FIFO does, so that a busy
// host's requests cost a map read each, and a burst is one use.
func (t *hostTable) used(e *hostEntry) { t.main.GetIfPresent(e.host) }

// peek returns the entry of key without counting a use. The young are
// looked up first: an entry leaves them only once it is in main (see
// promote), so that peek cannot miss a host moving between the two.
func (t *hostTable) peek(key string) (*hostEntry, bool) {
	if e, ok := t.loadYoung(key); ok {
		return e, true
	}
	en, ok := t.main.GetEntryQuietly(key)
	return en.Value, ok
}

func (t *hostTable) loadYoung(key string) (*hostEntry, bool) {
	v, ok := t.young.Load(key)
	if !ok {
		return nil, false
	}
	return v.(*hostEntry), true
}

// full reports whether as many fetches as the table may have are in
// flight: a new host or a refresh must wait.
func (t *hostTable) full() bool { return t.inFlight.Load() >= int64(t.max) }

// addPending adds e, a new host whose first fetch is starting. The caller
// holds Store.mu and checked full.
func (t *hostTable) addPending(e *hostEntry) {
	e.pending.Store(true)
	t.inFlight.Add(1)
	t.young.Store(e.host, e)
}

// settle puts e, whose first fetch has ended, in the FIFO, or in main
// when it comes back from the ghost list or there is no FIFO. The caller
// holds Store.mu.
func (t *hostTable) settle(e *hostEntry) {
	t.weigh(e)
	if _, back := t.ghost.GetIfPresent(e.host); back || t.floor == 0 {
		t.ghost.Invalidate(e.host)
		t.toMain(e)
		return
	}
	t.push(e)
}

// push adds e to the FIFO, forgetting its oldest hosts past its room.
func (t *hostTable) push(e *hostEntry) {
	t.trim(t.fifoRoom()-1, t.fifoByteRoom()-e.weight.Load())
	e.elem = t.fifo.PushBack(e)
	e.inFifo.Store(true)
	t.fifoBytes += e.weight.Load()
	t.resize()
}

// resize gives the main part the room the FIFO leaves of MaxHosts and
// MaxMemory, up to its floors: a host promoted below the bounds is always
// admitted, and a FIFO that grows to its floors at the bounds takes its
// room from the main part, whose policy lets its least valuable hosts go.
// Past its floors, the FIFO only holds what the main part leaves (see
// fifoRoom), and takes nothing from it.
func (t *hostTable) resize() {
	t.main.SetMaximum(t.mainByteRoom())
	t.fitCount()
}

// fifoRoom returns how many hosts the FIFO may hold: what main leaves of
// MaxHosts, and at least its floor.
func (t *hostTable) fifoRoom() int { return max(t.floor, t.max-t.mainHeld()) }

// trim forgets the FIFO's oldest hosts until it holds at most room hosts
// and bytes octets, and keeps their names in the ghost list.
func (t *hostTable) trim(room int, bytes int64) {
	for t.fifo.Len() > 0 && (t.fifo.Len() > room || t.fifoBytes > bytes) {
		why := SiteForgottenMemory
		if t.fifo.Len() > room {
			why = SiteForgottenHosts
		}
		old := t.fifo.Remove(t.fifo.Front()).(*hostEntry)
		old.elem = nil
		old.inFifo.Store(false)
		t.fifoBytes -= old.weight.Load()
		t.young.Delete(old.host)
		t.forgot(old, why)
	}
	t.resize()
}

// promote moves e from the FIFO to main: it was asked for again. It
// reports whether e was in the FIFO. The caller holds Store.mu.
func (t *hostTable) promote(e *hostEntry) bool {
	if e.elem == nil {
		return false
	}
	t.fifo.Remove(e.elem)
	e.elem = nil
	e.inFifo.Store(false)
	t.fifoBytes -= e.weight.Load()
	t.resize() // its room in the FIFO is main's now
	t.toMain(e)
	return true
}

// toMain adds e to main, then lets it leave the young: past main's
// bound, the host least likely to be asked for again goes, which may be e.
// A main part that grew leaves the FIFO less room.
func (t *hostTable) toMain(e *hostEntry) {
	t.main.Set(e.host, e)
	t.young.Delete(e.host)
	t.trim(t.fifoRoom(), t.fifoByteRoom())
}

// add puts e, restored, in main, or in the FIFO when fifo is set. The
// caller holds Store.mu.
func (t *hostTable) add(e *hostEntry, fifo bool) {
	t.weigh(e)
	if !fifo || t.floor == 0 {
		t.main.Set(e.host, e)
		t.trim(t.fifoRoom(), t.fifoByteRoom())
		return
	}
	t.young.Store(e.host, e)
	t.push(e)
}

// pin keeps e, whose refresh is starting, from eviction until done, and
// reports whether it could: not when e was evicted, or as many fetches as
// MaxHosts are in flight. A host of the FIFO moves to main first. The
// caller holds Store.mu.
func (t *hostTable) pin(e *hostEntry) bool {
	if t.full() || e.evicted.Load() {
		return false
	}
	e.pinned.Store(true)
	t.pinned++
	t.promote(e)
	if !t.reweigh(e) {
		e.pinned.Store(false)
		t.pinned--
		return false
	}
	t.inFlight.Add(1)
	return true
}

// done lets e go once its fetch has ended: into the FIFO after its first
// fetch, or unpinned after a refresh. Called again, it does nothing. The
// caller holds Store.mu.
func (t *hostTable) done(e *hostEntry) {
	switch {
	case e.pending.CompareAndSwap(true, false):
		t.settle(e)
		t.inFlight.Add(-1)
	case e.pinned.CompareAndSwap(true, false):
		// Weighed before main weighs it again: until then its weight
		// there is zero, and no eviction reads the weight changing.
		t.weigh(e)
		t.pinned--
		t.reweigh(e)
		t.resize() // one host more counts in main
		t.inFlight.Add(-1)
	}
}

// reweigh has main weigh e again, and reports whether e is the entry of
// its host there. otter weighs an entry when it is written: writing e
// over itself updates its weight in place.
func (t *hostTable) reweigh(e *hostEntry) bool {
	v, ok := t.main.ComputeIfPresent(e.host, func(old *hostEntry) (*hostEntry, otter.ComputeOp) {
		if old != e {
			return old, otter.CancelOp
		}
		return e, otter.WriteOp
	})
	return ok && v == e
}

// len returns the number of hosts held, pending first fetches aside,
// those whose refresh is in flight included. The caller holds Store.mu.
func (t *hostTable) len() int { return t.main.EstimatedSize() + t.fifo.Len() }

// hottest returns the hosts held from the most to the least likely to
// stay: main's, as its policy ranks them, then the FIFO's, newest first.
// The caller holds Store.mu. otter holds its eviction lock while it lists
// main: pointers only, no other work. It is for saving and the fleet's
// views, never a request.
func (t *hostTable) hottest() []*hostEntry {
	ranked := make([]*hostEntry, 0, t.len())
	listed := make(map[*hostEntry]bool, t.len())
	for en := range t.main.Hottest() {
		ranked = append(ranked, en.Value)
		listed[en.Value] = true
	}
	// A host moved to main moments ago may still wait in otter's write
	// buffer, out of the policy Hottest walks, though it is in the table:
	// it was just asked for again, and goes first.
	var out []*hostEntry
	for _, e := range t.main.All() {
		if !listed[e] {
			out = append(out, e)
		}
	}
	out = append(out, ranked...)
	return append(out, t.fifoEntries()...)
}

// fifoEntries returns the hosts of the FIFO, newest first. The caller
// holds Store.mu.
func (t *hostTable) fifoEntries() []*hostEntry {
	out := make([]*hostEntry, 0, t.fifo.Len())
	for el := t.fifo.Back(); el != nil; el = el.Prev() {
		out = append(out, el.Value.(*hostEntry))
	}
	return out
}
