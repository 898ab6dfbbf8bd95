package enforce

// A ledger is a map bounded in entries, in which no one group of entries
// (the entries of one client address, say) can take more than its share:
// the tables whose entries are consequences of what clients send (who
// was served which robots.txt, who is escalated) keep their entries in
// one, so that a client inventing names or addresses can neither grow
// them without bound nor push out what others' requests put there. Every
// operation is O(1): when the ledger is full, the entry added first goes;
// when a group is full, the group's entry added first goes. It is not
// safe for concurrent use: its owner locks it.
type ledger[K comparable, V any] struct {
	max, perGroup int
	m             map[K]*ledgerEntry[K, V]
	// all lists every entry, oldest first; groups lists each group's.
	all    ledgerList[K, V]
	groups map[string]*ledgerList[K, V]
}

// A ledgerEntry is one entry of a ledger, in two lists: the ledger's and
// its group's.
type ledgerEntry[K comparable, V any] struct {
	key   K
	group string
	value V

	prev, next           *ledgerEntry[K, V] // in the ledger's list
	groupPrev, groupNext *ledgerEntry[K, V] // in the group's list
}

// ledgerList is a list of entries, oldest first, and its length.
type ledgerList[K comparable, V any] struct {
	head, tail *ledgerEntry[K, V]
	n          int
}

// newLedger returns a ledger of at most max entries, perGroup of them in
// one group (0: no bound but max).
func newLedger[K comparable, V any](max, perGroup int) *ledger[K, V] {
	if perGroup <= 0 || perGroup > max {
		perGroup = max
	}
	return &ledger[K, V]{max: max, perGroup: perGroup, m: make(map[K]*ledgerEntry[K, V]),
		groups: make(map[string]*ledgerList[K, V])}
}

// get returns the value of key, and whether it is held.
func (l *ledger[K, V]) get(key K) (*V, bool) {
	e, ok := l.m[key]
	if !ok {
		return nil, false
	}
	return &e.value, true
}

// put returns the value of key, adding a zero one, in group, when it is
// not held: making room first, by letting the group's oldest entry go
// when the group is full, or else the ledger's oldest when the ledger is.
// A key held already becomes the newest of the ledger and of its group,
// so that what goes first is what was put last longest ago. evicted, when
// not nil, is told of each entry let go.
func (l *ledger[K, V]) put(key K, group string, evicted func(K, *V)) *V {
	if e, ok := l.m[key]; ok {
		l.all.unlink(e, false)
		l.all.pushBack(e, false)
		if g := l.groups[e.group]; g != nil {
			g.unlink(e, true)
			g.pushBack(e, true)
		}
		return &e.value
	}
	g := l.groups[group]
	switch {
	case g != nil && g.n >= l.perGroup:
		l.evict(g.head, evicted)
	case len(l.m) >= l.max:
		l.evict(l.all.head, evicted)
	}
	e := &ledgerEntry[K, V]{key: key, group: group}
	l.m[key] = e
	l.all.pushBack(e, false)
	if g = l.groups[group]; g == nil {
		g = &ledgerList[K, V]{}
		l.groups[group] = g
	}
	g.pushBack(e, true)
	return &e.value
}

// groupLen returns how many entries group holds.
func (l *ledger[K, V]) groupLen(group string) int {
	if g := l.groups[group]; g != nil {
		return g.n
	}
	return 0
}

// remove lets key go, if held.
func (l *ledger[K, V]) remove(key K) {
	if e, ok := l.m[key]; ok {
		l.evict(e, nil)
	}
}

// evict lets e go, telling evicted.
func (l *ledger[K, V]) evict(e *ledgerEntry[K, V], evicted func(K, *V)) {
	if evicted != nil {
		evicted(e.key, &e.value)
	}
	delete(l.m, e.key)
	l.all.unlink(e, false)
	if g := l.groups[e.group]; g != nil {
		g.unlink(e, true)
		if g.n == 0 {
			delete(l.groups, e.group)
		}
	}
}

// len returns how many entries the ledger holds.
func (l *ledger[K, V]) len() int { return len(l.m) }

// oldest returns the entry added first, nil when there is none.
func (l *ledger[K, V]) oldest() *ledgerEntry[K, V] { return l.all.head }

// each calls f with each entry, oldest first, until f returns false.
func (l *ledger[K, V]) each(f func(K, *V) bool) {
	for e := l.all.head; e != nil; e = e.next {
		if !f(e.key, &e.value) {
			return
		}
	}
}

// eachInGroup calls f with each entry of group, oldest first, until f
// returns false: O(the group's entries), whatever the ledger holds.
func (l *ledger[K, V]) eachInGroup(group string, f func(K, *V) bool) {
	g := l.groups[group]
	if g == nil {
		return
	}
	for e := g.head; e != nil; e = e.groupNext {
		if !f(e.key, &e.value) {
			return
		}
	}
}

// pruneOldest lets the oldest entries go while gone says they may.
func (l *ledger[K, V]) pruneOldest(gone func(*V) bool) {
	for e := l.all.head; e != nil && gone(&e.value); e = l.all.head {
		l.evict(e, nil)
	}
}

func (ls *ledgerList[K, V]) pushBack(e *ledgerEntry[K, V], group bool) {
	if group {
		e.groupPrev, e.groupNext = ls.tail, nil
		if ls.tail != nil {
			ls.tail.groupNext = e
		} else {
			ls.head = e
		}
	} else {
		e.prev, e.next = ls.tail, nil
		if ls.tail != nil {
			ls.tail.next = e
		} else {
			ls.head = e
		}
	}
	ls.tail = e
	ls.n++
}

func (ls *ledgerList[K, V]) unlink(e *ledgerEntry[K, V], group bool) {
	prev, next := e.prev, e.next
	if group {
		prev, next = e.groupPrev, e.groupNext
	}
	if prev != nil {
		if group {
			prev.groupNext = next
		} else {
			prev.next = next
		}
	} else {
		ls.head = next
	}
	if next != nil {
		if group {
			next.groupPrev = prev
		} else {
			next.prev = prev
		}
	} else {
		ls.tail = prev
	}
	if group {
		e.groupPrev, e.groupNext = nil, nil
	} else {
		e.prev, e.next = nil, nil
	}
	ls.n--
}
