package audit

import (
	"cmp"
	"math"
	"net/netip"
	"slices"
	"strconv"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// What a row keeps beyond its counts, for a dispute: the client addresses
// it came from and how many requests each sent, the User-Agent headers it
// sent, and its violating requests one by one (and, for the evidence, its
// grace denials), each bounded.

// Bounds of a row's detail, each with its reason.
const (
	// DefaultMaxRequests is how many violating requests a row lists in a
	// report: the earliest, enough to show what the crawler did; the
	// evidence of one crawler lists MaxEvidenceRequests.
	DefaultMaxRequests = 10
	// MaxEvidenceRequests is how many violating requests (and as many
	// grace denials) a row lists in the evidence of one crawler: a
	// crawler that breaks robots.txt more often than this is proven by
	// the first of them, and the counts give the rest.
	MaxEvidenceRequests = 10000
	// maxTargetLength cuts a listed request target: a target with its
	// query, as a dispute quotes it, within what a line of a report can
	// hold. A cut target is marked (Request.TargetCut).
	maxTargetLength = 2048
	// maxUserAgents is how many User-Agent headers a row counts apart: a
	// crawler sends a few; past it, the most frequent are kept, as paths
	// are (an estimate, marked).
	maxUserAgents = 16
	// maxPrefixes bounds the address prefixes a row counts when it came
	// from more than MaxClientIPs addresses.
	maxPrefixes = 256
)

// rowDetail is a row's detail.
type rowDetail struct {
	// addrs count the exact addresses, until there are more than
	// MaxClientIPs; then prefixes counts them by prefix (prefixBits 24:
	// /24 and /64; 16: /16 and /48), and other those past every prefix
	// kept and those that are no address.
	addrs      map[string]*AddressCount
	prefixes   map[netip.Prefix]*AddressCount
	prefixBits int
	other      AddressCount
	uas        *spaceSaving
	violations requestList
	grace      requestList
}

// addAddress counts a request (and whether it is a violation) from ip.
// Addresses are counted exactly up to MaxClientIPs; past it, all of the
// row's by /24 (IPv4) and /64 (IPv6) prefix, and past maxPrefixes of
// those by /16 and /48; past that, as OtherAddresses. Which form a row
// shows depends only on how many addresses it came from, not on their
// order.
func (d *rowDetail) addAddress(ip []byte, violation bool) {
	ip = cut(ip, maxClientIPLength)
	var a *AddressCount
	switch {
	case d.prefixBits == 0:
		if a = d.addrs[string(ip)]; a == nil {
			if len(d.addrs) >= MaxClientIPs {
				d.coarsen()
				d.addAddress(ip, violation)
				return
			}
			if d.addrs == nil {
				d.addrs = make(map[string]*AddressCount, 4)
			}
			a = &AddressCount{Address: string(ip)}
			d.addrs[a.Address] = a
		}
	case d.prefixBits > 0:
		p, ok := prefixOf(string(ip), d.prefixBits)
		if !ok {
			a = &d.other
			break
		}
		if a = d.prefixes[p]; a == nil {
			if len(d.prefixes) >= maxPrefixes {
				d.coarsen()
				d.addAddress(ip, violation)
				return
			}
			a = &AddressCount{}
			d.prefixes[p] = a
		}
	default:
		a = &d.other
	}
	a.Requests++
	if violation {
		a.Violations++
	}
}

// coarsen folds the row's addresses into the next wider prefixes.
func (d *rowDetail) coarsen() {
	old, oldPrefixes := d.addrs, d.prefixes
	d.addrs = nil
	switch d.prefixBits {
	case 0:
		d.prefixBits = 24
	case 24:
		d.prefixBits = 16
	default:
		d.prefixBits = -1 // every address is OtherAddresses from now
	}
	d.prefixes = nil
	if d.prefixBits > 0 {
		d.prefixes = make(map[netip.Prefix]*AddressCount)
	}
	fold := func(p netip.Prefix, ok bool, a *AddressCount) {
		n := &d.other
		if ok && d.prefixBits > 0 {
			if n = d.prefixes[p]; n == nil {
				n = &AddressCount{}
				d.prefixes[p] = n
			}
		}
		n.Requests += a.Requests
		n.Violations += a.Violations
	}
	for k, a := range old {
		p, ok := prefixOf(k, d.prefixBits)
		fold(p, ok, a)
	}
	for p, a := range oldPrefixes {
		q, err := p.Addr().Prefix(prefixLength(p.Addr(), d.prefixBits))
		fold(q, err == nil && d.prefixBits > 0, a)
	}
}

// OtherAddresses counts the addresses past every prefix a row keeps, and
// those that are no IP address.
const OtherAddresses = "(other)"

// prefixOf returns an address's prefix of bits (see prefixLength), and
// false for a string that is no address, or for bits -1.
func prefixOf(s string, bits int) (netip.Prefix, bool) {
	if bits < 0 {
		return netip.Prefix{}, false
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	addr = addr.Unmap().WithZone("")
	p, err := addr.Prefix(prefixLength(addr, bits))
	return p, err == nil
}

// prefixLength is /bits of IPv4, /(2*bits+16) of IPv6: 24 gives /24 and
// /64, 16 gives /16 and /48.
func prefixLength(addr netip.Addr, bits int) int {
	if addr.Is6() {
		return 2*bits + 16
	}
	return bits
}

// addresses returns the row's address counts.
func (d *rowDetail) addresses() []AddressCount {
	var out []AddressCount
	for _, a := range d.addrs {
		out = append(out, *a)
	}
	for p, a := range d.prefixes {
		c := *a
		c.Address = p.String()
		out = append(out, c)
	}
	if d.other.Requests > 0 {
		c := d.other
		c.Address = OtherAddresses
		out = append(out, c)
	}
	return out
}

// addUserAgent counts a User-Agent header.
func (d *rowDetail) addUserAgent(ua []byte) {
	if d.uas == nil {
		d.uas = newSpaceSaving(maxUserAgents)
	}
	d.uas.add(ua)
}

// requestEntry is one request listed.
type requestEntry struct {
	ns                  int64 // math.MaxInt64 for a record without a time
	instance            string
	method, target      string
	targetCut           bool
	clientIP, userAgent string
	rule, reason        string
	ruleLine            int64
	hash                string
	versions            []string
	served              bool
	recorded, counted   outcome
}

// compare orders entries by time, then by what they hold, so that which
// are kept does not depend on the order of the logs.
func (e *requestEntry) compare(o *requestEntry) int {
	return cmp.Or(cmp.Compare(e.ns, o.ns), cmp.Compare(e.target, o.target), cmp.Compare(e.instance, o.instance),
		cmp.Compare(e.clientIP, o.clientIP), cmp.Compare(e.method, o.method), cmp.Compare(e.userAgent, o.userAgent))
}

// requestList keeps the max earliest requests added, as a max-heap, and
// counts the others.
type requestList struct {
	heap []*requestEntry
	more int64
}

// add offers e to the list of at most limit entries.
func (l *requestList) add(e *requestEntry, limit int) {
	if limit <= 0 {
		l.more++
		return
	}
	if len(l.heap) < limit {
		l.heap = append(l.heap, e)
		for i := len(l.heap) - 1; i > 0; {
			p := (i - 1) / 2
			if l.heap[p].compare(l.heap[i]) >= 0 {
				break
			}
			l.heap[p], l.heap[i] = l.heap[i], l.heap[p]
			i = p
		}
		return
	}
	l.more++
	if e.compare(l.heap[0]) >= 0 {
		return
	}
	l.heap[0] = e
	for i := 0; ; {
		big, left := i, 2*i+1
		if left < len(l.heap) && l.heap[left].compare(l.heap[big]) > 0 {
			big = left
		}
		if r := left + 1; r < len(l.heap) && l.heap[r].compare(l.heap[big]) > 0 {
			big = r
		}
		if big == i {
			return
		}
		l.heap[i], l.heap[big] = l.heap[big], l.heap[i]
		i = big
	}
}

// sorted returns the entries kept, earliest first.
func (l *requestList) sorted() []*requestEntry {
	out := slices.Clone(l.heap)
	slices.SortFunc(out, func(x, y *requestEntry) int { return x.compare(y) })
	return out
}

// newRequestEntry makes the entry of a decision record, which counted as
// rj says, recorded by instance.
func newRequestEntry(rec *rawRecord, ns int64, timed bool, instance string, rj *rejudgement, recorded outcome) *requestEntry {
	e := &requestEntry{
		ns: ns, instance: instance,
		method: string(cut(rec.reqMethod, 16)), target: string(cut(rec.uri, maxTargetLength)), targetCut: len(rec.uri) > maxTargetLength,
		clientIP: string(cut(rec.clientIP, maxClientIPLength)), userAgent: string(rec.userAgent),
		rule: string(cut(rec.rule, MaxPathLength)), reason: string(cut(rec.reason, 32)), hash: string(cut(rec.hash, maxVersionName)),
		versions: slices.Clone(rj.versions), served: rj.served,
		recorded: recorded, counted: rj.outcome,
	}
	if !timed {
		e.ns = math.MaxInt64
	}
	if n, err := strconv.ParseInt(string(rec.ruleLine), 10, 64); err == nil && rec.has&hasRuleLine != 0 {
		e.ruleLine = n
	}
	return e
}

// addDetail adds a record to its row's detail: its address, its
// User-Agent, and, when it counts as a violation (or, listing grace, as
// grace), the request itself.
func (a *Auditor) addDetail(c *crawler, rec *rawRecord, ns int64, timed bool, inst uint32, rj *rejudgement, recorded outcome) {
	d := &c.detail
	if rec.has&hasClientIP != 0 && len(rec.clientIP) > 0 {
		d.addAddress(rec.clientIP, rec.outcome == outViolation)
	}
	if rec.has&hasUserAgent != 0 {
		d.addUserAgent(cut(rec.userAgent, record.MaxUserAgent))
	}
	var l *requestList
	switch {
	case rec.outcome == outViolation:
		l = &d.violations
	case rec.outcome == outGrace && a.opts.ListGrace:
		l = &d.grace
	default:
		return
	}
	at := ns
	if !timed {
		at = math.MaxInt64
	}
	if !l.wants(at, a.opts.MaxRequests) {
		l.more++
		return
	}
	l.add(newRequestEntry(rec, ns, timed, a.instances.name(inst), rj, recorded), a.opts.MaxRequests)
}

// wants reports whether an entry of time ns may be kept: the list has
// room, or ns is no later than its latest entry's.
func (l *requestList) wants(ns int64, limit int) bool {
	return len(l.heap) < limit || len(l.heap) > 0 && ns <= l.heap[0].ns
}
