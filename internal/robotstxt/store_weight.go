package robotstxt

import (
	"unsafe"

	"github.com/robotsenforce/caddy-robots-enforce/internal/heapsize"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// What a site weighs. A Store bounds the octets its sites hold
// (StoreConfig.MaxMemory), and a site holds its snapshot in force: the
// parsed file (rules.Robots.HeldSize), the index of its groups, its body
// when kept, and the versions of Earlier. An earlier version is kept only
// for compliance, which judges a request again by its allow and disallow
// rules (package enforce): it holds the file as rules.DecisionsOnly keeps
// it, without usage preferences, records or diagnostics, and an index of
// its groups without what a header's cached choice needs (Choice is made
// on the version in force only). Each part is counted as the heap holds
// it (package heapsize); TestSiteWeightCount checks the sum against the
// runtime's heap figures.

// siteOverhead is what a tracked site holds besides its snapshots: its
// entry, its place in the table's caches and maps (its name and URL are
// counted apart). A bound, checked by TestSiteOverhead: about 480 octets
// measured.
const siteOverhead = 768

// siteReserve is what a site's snapshots leave of its share of the budget
// (see fit) for the rest of what it holds: siteOverhead, and a name and
// URL of MaxHostLen octets.
const siteReserve = siteOverhead + 2*(MaxHostLen+32)

// siteWeight returns the octets the site whose snapshot in force is s
// holds, overhead included.
func siteWeight(s *Snapshot) int64 {
	if s == nil {
		return siteOverhead
	}
	return siteOverhead + s.weight()
}

// weight returns the octets s holds, Earlier included.
func (s *Snapshot) weight() int64 {
	n := s.held
	if n == 0 {
		n = int64(heapsize.Alloc(int(unsafe.Sizeof(*s)), true)) // not weighed: a refusal or an undefined file
	}
	for _, e := range s.Earlier {
		n += e.held
	}
	return n
}

// weigh notes in s what it holds of its own: itself, its strings, its
// body, its parsed file and the index of its groups, and the list of its
// earlier versions (not they, which are weighed each on its own). The
// Source URL is its site's and counted with it. It is called before s is
// published.
func (s *Snapshot) weigh() {
	n := heapsize.Alloc(int(unsafe.Sizeof(*s)), true)
	n += heapsize.String(s.FinalURL) + heapsize.String(s.Err)
	if s.Hash != "" {
		n += heapsize.Alloc(2*len(s.sum), false) // Hash is the start of the whole digest in hex
	}
	n += heapsize.Slice(cap(s.Body), 1, false)
	n += heapsize.Slice(cap(s.Earlier), 8, true)
	if s.Robots != nil {
		n += s.Robots.HeldSize()
	}
	n += s.groups.held()
	s.held = int64(n)
}

// held returns the octets x holds, but for the file it indexes.
func (x *GroupIndex) held() int {
	if x == nil {
		return 0
	}
	n := heapsize.Alloc(int(unsafe.Sizeof(*x)), true)
	if x.google != nil {
		n += heapsize.Map(len(x.google), 2*unsafe.Sizeof(uintptr(0)), true)
		for _, gg := range x.google {
			n += heapsize.Alloc(int(unsafe.Sizeof(*gg)), true)
			n += heapsize.String(gg.text)
			n += heapsize.Slice(cap(gg.rules), unsafe.Sizeof(googleRule{}), false)
		}
	}
	n += heapsize.Slice(cap(x.named), 8, true)
	if x.places != nil {
		n += heapsize.Map(len(x.places), unsafe.Sizeof(uintptr(0))+unsafe.Sizeof(uint16(0)), true)
	}
	return n
}

// forCompliance returns the version s as an earlier version keeps it: its
// file as rules.DecisionsOnly keeps it, with an index of its own, and no
// body or earlier versions; s itself when it is one already.
func (s *Snapshot) forCompliance() *Snapshot {
	if s.lean {
		return s
	}
	v := *s
	v.Earlier, v.Body, v.lean = nil, nil, true
	if s.Robots != nil {
		v.Robots = s.Robots.DecisionsOnly()
		v.groups = newComplianceIndex(v.Robots)
	}
	v.weigh()
	return &v
}

// newComplianceIndex builds the index of r that compliance reads: its
// filter and Google's reading of its groups, without the places a
// header's cached choice names groups by (see Choice), which only the
// version in force is asked for.
func newComplianceIndex(r *rules.Robots) *GroupIndex {
	x := NewGroupIndex(r)
	x.named, x.places = nil, nil
	return x
}
