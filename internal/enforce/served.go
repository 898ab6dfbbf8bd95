package enforce

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	// maxServedName bounds the crawler name of a pair: product tokens are
	// short, and an IPv6 address is at most 45 octets as text. Longer
	// names are not remembered.
	maxServedName = 64
)

// A ServedLink says how a crawler was tied to a robots.txt it was served.
type ServedLink uint8

const (
	// LinkNone: no robots.txt was served to the crawler.
	LinkNone ServedLink = iota
	// LinkToken: the fetch named the crawler's product token.
	LinkToken
	// LinkIP: the fetch came from the crawler's client IP, under another
	// name (some crawlers fetch robots.txt with a library's User-Agent).
	LinkIP
)

var linkNames = [...]string{LinkNone: "", LinkToken: "token", LinkIP: "ip"}

// String returns "token", "ip", or "" for none.
func (l ServedLink) String() string {
	if int(l) < len(linkNames) {
		return linkNames[l]
	}
	return "link(?)"
}

// A ServedVersion is one robots.txt version served, and when.
type ServedVersion struct {
	Hash string // as VersionHash names it
	At   time.Time
}

// Served remembers which robots.txt versions were served to which crawler
// of which site within GraceWindow, by product token and by client IP, so
// that a decision can tell what the crawler was told (RFC 9309 §2.4: it
// may keep using a version it fetched for a day). Its memory is bounded
// (DefaultMaxServed pairs of MaxServedVersions each, names cut to a few
// dozen octets) whatever clients send. It is safe for concurrent use.
type Served struct {
	mu      sync.Mutex
	max     int
	pairs   map[servedKey]*servedVersions
	changes atomic.Int64
}

// Changes returns a count that grows with every serve noted: a caller
// that saves the table saves it again only when the count moved.
func (s *Served) Changes() int64 { return s.changes.Load() }

type servedKey struct {
	site string
	ip   bool // name is a client IP, not a product token
	name string
}

type servedVersions struct {
	v    [MaxServedVersions]ServedVersion
	n    int
	last time.Time
}

// NewServed returns an empty table remembering at most max pairs (0 means
// DefaultMaxServed).
func NewServed(max int) *Served {
	if max <= 0 {
		max = DefaultMaxServed
	}
	return &Served{max: max, pairs: make(map[servedKey]*servedVersions)}
}

// Note records that the robots.txt of site, in version hash, was served at
// at to a client with the given product tokens and client IP.
func (s *Served) Note(site string, tokens []string, ip, hash string, at time.Time) {
	if len(site) > maxHostLen+len("https://") || hash == "" {
		return
	}
	s.changes.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range tokens {
		s.noteLocked(servedKey{site: site, name: strings.ToLower(tok)}, hash, at)
	}
	if ip != "" {
		s.noteLocked(servedKey{site: site, ip: true, name: ip}, hash, at)
	}
}

func (s *Served) noteLocked(k servedKey, hash string, at time.Time) {
	if k.name == "" || len(k.name) > maxServedName {
		return
	}
	p := s.pairs[k]
	if p == nil {
		if len(s.pairs) >= s.max {
			s.shrinkLocked(at)
		}
		k.site, k.name = strings.Clone(k.site), strings.Clone(k.name)
		p = &servedVersions{}
		s.pairs[k] = p
	}
	p.last = at
	for i := range p.n {
		if p.v[i].Hash == hash {
			p.v[i].At = at
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

// shrinkLocked makes room: pairs not served within GraceWindow go first;
// if none are, an arbitrary tenth.
func (s *Served) shrinkLocked(now time.Time) {
	for k, p := range s.pairs {
		if now.Sub(p.last) > GraceWindow {
			delete(s.pairs, k)
		}
	}
	drop := max(s.max/10, 1)
	for k := range s.pairs {
		if len(s.pairs) < s.max || drop == 0 {
			break
		}
		delete(s.pairs, k)
		drop--
	}
}

// Lookup returns the versions of site's robots.txt served within
// GraceWindow before now to the crawler named token, or, when none was
// served under that name, to its client IP, newest first, and how the
// crawler was tied to them.
func (s *Served) Lookup(site, token, ip string, now time.Time) ([]ServedVersion, ServedLink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token != "" && len(token) <= maxServedName {
		if vs := s.recentLocked(servedKey{site: site, name: strings.ToLower(token)}, now); len(vs) > 0 {
			return vs, LinkToken
		}
	}
	if ip != "" {
		if vs := s.recentLocked(servedKey{site: site, ip: true, name: ip}, now); len(vs) > 0 {
			return vs, LinkIP
		}
	}
	return nil, LinkNone
}

func (s *Served) recentLocked(k servedKey, now time.Time) []ServedVersion {
	p := s.pairs[k]
	if p == nil {
		return nil
	}
	var out []ServedVersion
	for _, v := range p.v[:p.n] {
		if age := now.Sub(v.At); age >= 0 && age <= GraceWindow {
			out = append(out, v)
		}
	}
	for i := 1; i < len(out); i++ { // newest first; a handful at most
		for j := i; j > 0 && out[j].At.After(out[j-1].At); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Len returns the number of pairs remembered.
func (s *Served) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pairs)
}
