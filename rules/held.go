package rules

import (
	"unsafe"

	"github.com/robotsenforce/caddy-robots-enforce/internal/heapsize"
)

// What a parsed file holds, counted. A host that holds a parsed file for
// each of many sites bounds them by the octets they hold (see
// docs/internals.md), so the count must be the heap's own: each table by
// its capacity, each allocation rounded up as Go's allocator rounds it,
// and what several parts share counted once. TestHeldSizeCount checks it
// against the runtime's heap figures.

// HeldSize returns the octets of heap r holds: the Robots itself, its
// backing text, its tables and indexes by capacity, its groups' usage
// preferences, and the folded twins of its groups built so far (see
// Group.Folded), each allocation rounded up to the size Go's allocator
// gives it. It allocates a little, to count shared parts once: a caller
// that bounds memory calls it when it takes a file in, not per request.
func (r *Robots) HeldSize() int {
	h := heldCounter{text: r.text}
	h.add(unsafe.Sizeof(*r), true)
	h.add(uintptr(len(r.text)), false)
	h.table(cap(r.sources), unsafe.Sizeof(sourceRec{}))
	h.table(cap(r.delays), unsafe.Sizeof(delayRec{}))
	h.table(cap(r.agents), unsafe.Sizeof(agentRec{}))
	h.table(cap(r.rules), unsafe.Sizeof(ruleRec{}))
	h.table(cap(r.usage), unsafe.Sizeof(usageRec{}))
	h.table(cap(r.records), unsafe.Sizeof(recordRec{}))
	h.table(cap(r.diags), unsafe.Sizeof(diagRec{}))
	h.table(cap(r.ranks), 4)
	h.table(cap(r.groupSrc), 4)
	h.table(cap(r.tokens.slots), 4)
	h.table(cap(r.tokens.named), unsafe.Sizeof(namedToken{}))
	if cap(r.groups) > 0 {
		h.add(uintptr(cap(r.groups))*unsafe.Sizeof(Group{}), true)
	}
	for i := range r.groups {
		g := &r.groups[i]
		h.matcher(g.m)
		h.usageSet(g.usage)
		if f := g.fold.Load(); f != nil && h.first(unsafe.Pointer(f)) {
			h.add(unsafe.Sizeof(*f), true)
			h.matcher(f.m)
		}
	}
	return h.n
}

// heldCounter adds up allocations, each once.
type heldCounter struct {
	n    int
	text string // the backing text: strings in it are counted with it
	seen map[unsafe.Pointer]bool
}

// first reports whether p is counted for the first time, and notes it.
func (h *heldCounter) first(p unsafe.Pointer) bool {
	if h.seen == nil {
		h.seen = make(map[unsafe.Pointer]bool)
	}
	if h.seen[p] {
		return false
	}
	h.seen[p] = true
	return true
}

// add counts an allocation of size octets; pointers says whether it holds
// any.
func (h *heldCounter) add(size uintptr, pointers bool) { h.n += heapsize.Alloc(int(size), pointers) }

// table counts a pointer-free table of n entries of size octets.
func (h *heldCounter) table(n int, size uintptr) {
	if n > 0 {
		h.add(uintptr(n)*size, false)
	}
}

// string counts s, once, unless it is in the backing text or empty.
func (h *heldCounter) string(s string) {
	if len(s) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.StringData(s))
	if h.inText(p) {
		return
	}
	if h.first(p) {
		h.add(uintptr(len(s)), false)
	}
}

// inText reports whether p points into the backing text.
func (h *heldCounter) inText(p unsafe.Pointer) bool {
	if len(h.text) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(h.text)))
	return uintptr(p) >= start && uintptr(p) < start+uintptr(len(h.text))
}

// matcher counts m and its indexes, once.
func (h *heldCounter) matcher(m *matcher) {
	if m == nil || !h.first(unsafe.Pointer(m)) {
		return
	}
	h.add(unsafe.Sizeof(*m), true)
	h.string(m.text) // the backing text, or a text of its own: a usage index's, a folded twin's
	h.table(cap(m.pats), unsafe.Sizeof(cpat{}))
	h.table(cap(m.byPrefix.heads), 8)
	h.table(cap(m.byPrefix.keys), unsafe.Sizeof(prefixKey{}))
	h.table(cap(m.byPrefix.filed), 4)
	if x := m.floating; x != nil {
		h.add(unsafe.Sizeof(*x), true)
		if x.starts != &isDelimiter {
			h.add(unsafe.Sizeof(*x.starts), false)
		}
		h.add(unsafe.Sizeof(*x.filter), false)
		h.table(cap(x.start), 4)
		h.table(cap(x.entries), unsafe.Sizeof(keyedRank{}))
	}
}

// usageSet counts s and its indexes, once.
func (h *heldCounter) usageSet(s *usageSet) {
	if s == nil || !h.first(unsafe.Pointer(s)) {
		return
	}
	h.add(unsafe.Sizeof(*s), true)
	h.usages(s.pairs)
	for _, x := range [...]*usageIndex{s.usage, s.signal} {
		if x == nil || !h.first(unsafe.Pointer(x)) {
			continue
		}
		h.add(unsafe.Sizeof(*x), true)
		h.matcher(x.m)
		h.usages(x.usages)
		h.table(cap(x.classEnd), 4)
	}
}

// usages counts a table of preferences and what they describe.
func (h *heldCounter) usages(us []Usage) {
	if cap(us) == 0 {
		return
	}
	h.add(uintptr(cap(us))*unsafe.Sizeof(Usage{}), true)
	for _, u := range us {
		h.decision(u.d)
	}
}

// decision counts d, once, with its header, rules and members; the
// decisions it combines are counted where they are held.
func (h *heldCounter) decision(d *usageDecision) {
	if d == nil || !h.first(unsafe.Pointer(d)) {
		return
	}
	h.add(unsafe.Sizeof(*d), true)
	h.string(d.header)
	if cap(d.rules) > 0 {
		h.add(uintptr(cap(d.rules))*unsafe.Sizeof(UsageRule{}), true) // their strings are the backing text's
	}
	if cap(d.extras) > 0 {
		h.add(uintptr(cap(d.extras))*unsafe.Sizeof(usageMember{}), true)
		for _, m := range d.extras {
			h.string(m.key)
			h.string(m.text)
		}
	}
	if cap(d.parts) > 0 {
		h.add(uintptr(cap(d.parts))*unsafe.Sizeof(d), true)
	}
	for _, p := range d.parts {
		h.decision(p)
	}
}
