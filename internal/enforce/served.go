package enforce

import (
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// Bounds of a Served table, each with its reason.
const (
	// DefaultMaxServed bounds the (site, crawler) pairs a Served table
	// remembers: a few hundred crawlers over a few dozen sites fit, and a
	// client inventing names or addresses cannot grow it past a few
	// megabytes.
	DefaultMaxServed = 10000
	// MaxServedVersions is how many versions one pair remembers, the most
	// recent: a site rarely publishes more than a couple a day, and a
	// crawler past this many is judged, for the older ones, by the
	// versions in force (see Served.Lookup).
	MaxServedVersions = 8
	// maxServedToken bounds the product token of a pair: tokens are short,
	// and longer ones are not remembered.
	maxServedToken = 64
	// servedPerAddress bounds the pairs of one client address (an IPv6
	// /64): a crawler is known by MaxNames names, and a few headers fit;
	// a client sending a new header with every fetch pushes out its own
	// pairs, never another client's.
	servedPerAddress = 4 * MaxNames
)

// A ServedLink says how a crawler was tied to a robots.txt it was served.
type ServedLink uint8

const (
	// LinkNone: no robots.txt was served to the crawler.
	LinkNone ServedLink = iota
	// LinkToken: the file was served under the crawler's product token to
	// a client that proved it (by its address, reverse DNS or signature).
	LinkToken
	// LinkClient: the file was served to the same client: the same
	// address (an IPv6 /64) under a product token its header names too,
	// or, for a client with none, the same address with the same
	// User-Agent.
	LinkClient
)

var linkNames = [...]string{LinkNone: "", LinkToken: record.LinkToken, LinkClient: record.LinkClient}

// String returns "token", "client", or "" for none.
func (l ServedLink) String() string {
	if int(l) < len(linkNames) {
		return linkNames[l]
	}
	return "link(?)"
}

// A ServedVersion is one robots.txt version served, and when.
type ServedVersion struct {
	Hash string // as robotstxt.VersionHash names it
	At   time.Time
}

// A Serving is one robots.txt served to a client, whole.
type Serving struct {
	Site string
	// Addr is the client's address, as the handler resolved it.
	Addr netip.Addr
	// Names are the product tokens the client is known by (clientNames),
	// lower-case; Agent names a client with none (a digest of its
	// User-Agent). Proven are the tokens the client proved, lower-case:
	// the fetch counts for them wherever those crawlers ask from, and for
	// the client itself always.
	Names, Proven []string
	Agent         string
	Version       string
	At            time.Time
}

// Served remembers which robots.txt versions were served to which crawler
// of which site within GraceWindow, so that a decision can tell what the
// crawler was told (RFC 9309 §2.4: it may keep using a version it fetched
// for a day). A fetch is credited only to whom it proves anything about:
// to a product token when the client proved that token (a token no
// method can prove is proven by nobody), and otherwise to the same
// client alone (its address, an IPv6 /64, and each of its names), never
// to another crawler at another address. Its memory is bounded
// (DefaultMaxServed pairs of MaxServedVersions each, servedPerAddress of
// one address, names cut to a few dozen octets) whatever clients send,
// and each of its operations is O(1) in the pairs it holds. It is safe
// for concurrent use.
type Served struct {
	mu      sync.Mutex
	pairs   *ledger[servedKey, servedVersions]
	changes atomic.Int64
	// fleet is what the rest of the fleet served (see SetFleet); nil
	// when there is none.
	fleet atomic.Pointer[fleetServed]
}

// Changes returns a count that grows with every serve noted: a caller
// that saves the table saves it again only when the count moved.
func (s *Served) Changes() int64 { return s.changes.Load() }

// servedKind says what a pair's name is.
type servedKind uint8

const (
	// servedToken: a product token, lower-case, proven.
	servedToken servedKind = iota + 1
	// servedClient: a client address and a product token, lower-case.
	servedClient
	// servedAgent: a client address and a digest of its User-Agent.
	servedAgent
)

var servedKindNames = [...]string{servedToken: "token", servedClient: "client", servedAgent: "agent"}

type servedKey struct {
	site string
	kind servedKind
	addr netip.Addr // an address key (see addressKey); none for servedToken
	name string
}

type servedVersions struct {
	v [MaxServedVersions]ServedVersion
	n int
}

// NewServed returns an empty table remembering at most max pairs (0 means
// DefaultMaxServed).
func NewServed(max int) *Served {
	if max <= 0 {
		max = DefaultMaxServed
	}
	return &Served{pairs: newLedger[servedKey, servedVersions](max, servedPerAddress)}
}

// Note records a robots.txt served whole to a client.
func (s *Served) Note(sv *Serving) {
	if len(sv.Site) > robotstxt.MaxHostLen+len("https://") || sv.Version == "" {
		return
	}
	s.changes.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range sv.Proven {
		s.noteLocked(servedKey{sv.Site, servedToken, netip.Addr{}, tok}, "token "+tok, sv.Version, sv.At)
	}
	addr := addressKey(sv.Addr)
	if !addr.IsValid() {
		return
	}
	group := addr.String()
	for _, tok := range sv.Names {
		s.noteLocked(servedKey{sv.Site, servedClient, addr, tok}, group, sv.Version, sv.At)
	}
	if len(sv.Names) == 0 && sv.Agent != "" {
		s.noteLocked(servedKey{sv.Site, servedAgent, addr, sv.Agent}, group, sv.Version, sv.At)
	}
}

func (s *Served) noteLocked(k servedKey, group, hash string, at time.Time) {
	if k.name == "" || len(k.name) > maxServedToken {
		return
	}
	fresh := false
	if _, ok := s.pairs.get(k); !ok {
		k.site, k.name, fresh = strings.Clone(k.site), strings.Clone(k.name), true
	}
	p := s.pairs.put(k, group, nil)
	if fresh {
		*p = servedVersions{}
	}
	for i := range p.n {
		if p.v[i].Hash == hash {
			if at.After(p.v[i].At) {
				p.v[i].At = at
			}
			return
		}
	}
	if p.n < MaxServedVersions {
		p.v[p.n] = ServedVersion{Hash: strings.Clone(hash), At: at}
		p.n++
		return
	}
	oldest := 0
	for i := 1; i < p.n; i++ {
		if p.v[i].At.Before(p.v[oldest].At) {
			oldest = i
		}
	}
	p.v[oldest] = ServedVersion{Hash: strings.Clone(hash), At: at}
}

// An Asker is the crawler a decision is about, as Served.Lookup ties it
// to what it was served.
type Asker struct {
	// Token is the decision's product token, lower-case; Proven reports
	// that the client proved it: what was served under the token to
	// anyone who proved it is then what this crawler was told.
	Token  string
	Proven bool
	// Addr, Names and Agent name the client itself, as Serving does.
	Addr  netip.Addr
	Names []string
	Agent string
}

// Lookup returns the versions of site's robots.txt served within
// GraceWindow before now to the crawler a, newest first, and how it was
// tied to them: under its token when a proved it, and as the same client.
func (s *Served) Lookup(site string, a *Asker, now time.Time) ([]ServedVersion, ServedLink) {
	return s.AppendLookup(nil, site, a, now)
}

// AppendLookup is Lookup appending the versions to dst, for a caller that
// keeps the room: a record's evidence, on every denial. It appends at
// most MaxServedVersions, the newest.
func (s *Served) AppendLookup(dst []ServedVersion, site string, a *Asker, now time.Time) ([]ServedVersion, ServedLink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start, link := len(dst), LinkNone
	if a.Token != "" && a.Proven {
		if dst = s.appendRecentLocked(dst, start, servedKey{site, servedToken, netip.Addr{}, a.Token}, now); len(dst) > start {
			link = LinkToken
		}
	}
	addr := addressKey(a.Addr)
	if !addr.IsValid() {
		return dst, link
	}
	before := len(dst)
	for _, name := range a.Names {
		dst = s.appendRecentLocked(dst, start, servedKey{site, servedClient, addr, name}, now)
	}
	if len(a.Names) == 0 && a.Agent != "" {
		dst = s.appendRecentLocked(dst, start, servedKey{site, servedAgent, addr, a.Agent}, now)
	}
	if link == LinkNone && len(dst) > before {
		link = LinkClient
	}
	return dst, link
}

// appendRecentLocked merges k's versions served within GraceWindow before
// now into out[start:], each version once (at its latest serve), newest
// first, at most MaxServedVersions: the table's own, then the fleet's.
func (s *Served) appendRecentLocked(out []ServedVersion, start int, k servedKey, now time.Time) []ServedVersion {
	if p, ok := s.pairs.get(k); ok {
		out = appendRecent(out, start, p, now)
	}
	if f := s.fleet.Load(); f != nil {
		if p := f.pairs[k]; p != nil {
			out = appendRecent(out, start, p, now)
		}
	}
	return out
}

// appendRecent merges p's versions served within GraceWindow before now
// into out[start:], as appendRecentLocked does.
func appendRecent(out []ServedVersion, start int, p *servedVersions, now time.Time) []ServedVersion {
next:
	for _, v := range p.v[:p.n] {
		if age := now.Sub(v.At); age < 0 || age > robotstxt.GraceWindow {
			continue
		}
		for i := start; i < len(out); i++ {
			if out[i].Hash == v.Hash {
				if v.At.After(out[i].At) {
					out[i].At = v.At
				}
				continue next
			}
		}
		if len(out)-start < MaxServedVersions {
			out = append(out, v)
			continue
		}
		oldest := start // full: v replaces the oldest, if it is newer
		for i := start + 1; i < len(out); i++ {
			if out[i].At.Before(out[oldest].At) {
				oldest = i
			}
		}
		if v.At.After(out[oldest].At) {
			out[oldest] = v
		}
	}
	vs := out[start:]
	for i := 1; i < len(vs); i++ { // newest first; a handful at most
		for j := i; j > 0 && vs[j].At.After(vs[j-1].At); j-- {
			vs[j], vs[j-1] = vs[j-1], vs[j]
		}
	}
	return out
}

// Len returns the number of pairs remembered.
func (s *Served) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pairs.len()
}
