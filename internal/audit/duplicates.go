package audit

import (
	"cmp"
	"hash/maphash"
	"slices"
	"time"
)

// The same request recorded more than once. A request reaches one Caddy
// instance, which writes one record of it; the audit of several
// instances' logs can still read a request's record twice:
//
//   - a copy of a log read beside it: a log shipped with Caddy's net
//     writer and also kept locally, a rotated file copied under another
//     name. The copies are the same line: the same instance (the record's
//     instance, or, without one, each log is an instance of its own) and
//     the same time, to the nanosecond;
//   - two instances in a row, one proxying to the other, both judging the
//     request: two records from two instances, a moment apart.
//
// So, when the logs are read in two passes (ReadInputs), two denials are
// one request when they agree on site, product token, client address,
// method and request target, and were recorded at the same time by the
// same instance, or within DuplicateWindow of each other by different
// instances. Of each such group the audit counts one record, the earliest
// (then the least instance name), and leaves the others out of every
// count (MergeStats.Duplicates). Two denials of one instance at different
// times are two requests, however alike; so are a crawler's requests to
// two instances more than DuplicateWindow apart. An escalation is not a
// violation: the escalations of several instances are listed by the
// escalation's own key (see escalation.go).
//
// Allowed requests are not checked: a copy of a log counts its allowed
// requests twice. Past MaxDuplicateChecks denials, later denials are
// counted as read (MergeStats.DuplicatesUnchecked).

// DuplicateWindow is how far apart two instances' records of one request
// may be: two handlers in a row judge it within milliseconds, and a
// crawler's retry of a refused request comes later than this.
const DuplicateWindow = time.Second

// MaxDuplicateChecks bounds the denials checked for copies: 24 octets
// each, 24 MiB for all (and as much again while the list grows). A log of
// 8 million records holds some 2 million denials; the first million read
// are checked.
const MaxDuplicateChecks = 1 << 20

// dupEntry is one denial noted: what makes it one request (fp), its time
// and instance, how many identical copies of it the first pass read, how
// many the second has counted, and whether another record of its request
// counts for it.
type dupEntry struct {
	fp       uint64
	ns       int64
	instance uint32
	copies   uint8 // saturating
	counted  uint8
	dup      bool
}

// duplicates finds the records of one request. The first pass appends
// entries; group sorts them by fingerprint and time, after which the
// second pass finds each by binary search: no map, 24 octets a denial.
type duplicates struct {
	entries   []dupEntry
	max       int // MaxDuplicateChecks
	unchecked int64
	h         maphash.Hash
}

func newDuplicates(max int) duplicates {
	d := duplicates{max: max}
	d.h.SetSeed(maphash.MakeSeed())
	return d
}

// fingerprint hashes what makes two denials one request.
func (d *duplicates) fingerprint(rec *rawRecord) uint64 {
	d.h.Reset()
	for _, f := range [][]byte{siteOf(rec), rec.agent, rec.clientIP} {
		for _, c := range f {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			d.h.WriteByte(c)
		}
		d.h.WriteByte(0)
	}
	d.h.Write(rec.reqMethod)
	d.h.WriteByte(0)
	d.h.Write(rec.uri)
	return d.h.Sum64()
}

// note notes a denial of the first pass.
func (d *duplicates) note(rec *rawRecord, ns int64, inst uint32) {
	if len(d.entries) >= d.max {
		d.unchecked++
		return
	}
	d.entries = append(d.entries, dupEntry{fp: d.fingerprint(rec), ns: ns, instance: inst, copies: 1})
}

// group marks, after the first pass, the entries whose request another
// entry counts for. Identical entries (a line read twice) become one,
// with its copies counted. Then, by fingerprint, in time order (then by
// instance name, so that the outcome does not depend on the order of the
// logs), an entry joins the earliest group begun within DuplicateWindow
// before it that has no entry of its instance, else begins one.
func (d *duplicates) group(name func(uint32) string) {
	es := d.entries
	slices.SortFunc(es, func(x, y dupEntry) int {
		return cmp.Or(cmp.Compare(x.fp, y.fp), cmp.Compare(x.ns, y.ns), cmp.Compare(name(x.instance), name(y.instance)), cmp.Compare(x.instance, y.instance))
	})
	// Identical entries: one, with its copies.
	out := es[:0]
	for _, e := range es {
		if n := len(out); n > 0 && out[n-1].fp == e.fp && out[n-1].ns == e.ns && out[n-1].instance == e.instance {
			if out[n-1].copies < ^uint8(0) {
				out[n-1].copies++
			}
			continue
		}
		out = append(out, e)
	}
	d.entries = slices.Clip(out)
	type group struct {
		start     int64
		instances []uint32
	}
	var open []group
	for i := 0; i < len(d.entries); {
		j := i + 1
		for j < len(d.entries) && d.entries[j].fp == d.entries[i].fp {
			j++
		}
		if j-i > 1 {
			open = open[:0]
			for k := i; k < j; k++ {
				e := &d.entries[k]
				open = slices.DeleteFunc(open, func(g group) bool { return e.ns-g.start > int64(DuplicateWindow) })
				at := slices.IndexFunc(open, func(g group) bool { return !slices.Contains(g.instances, e.instance) })
				if at < 0 {
					open = append(open, group{start: e.ns, instances: []uint32{e.instance}})
					continue
				}
				open[at].instances = append(open[at].instances, e.instance)
				e.dup = true
			}
		}
		i = j
	}
}

// duplicate reports, in the second pass, whether a denial is another
// record of a request already counted.
func (d *duplicates) duplicate(rec *rawRecord, ns int64, inst uint32) bool {
	fp := d.fingerprint(rec)
	i, _ := slices.BinarySearchFunc(d.entries, dupEntry{fp: fp, ns: ns}, func(e, t dupEntry) int {
		return cmp.Or(cmp.Compare(e.fp, t.fp), cmp.Compare(e.ns, t.ns))
	})
	for ; i < len(d.entries) && d.entries[i].fp == fp && d.entries[i].ns == ns; i++ {
		e := &d.entries[i]
		if e.instance != inst {
			continue
		}
		if e.dup {
			return true
		}
		if e.counted < ^uint8(0) {
			e.counted++
		}
		return e.counted > 1
	}
	return false
}
