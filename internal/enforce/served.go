package enforce

import (
	"crypto/sha256"
	"encoding/hex"
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
)

// A ServedLink says how a crawler was tied to a robots.txt it was served.
type ServedLink uint8

const (
	// LinkNone: no robots.txt was served to the crawler.
	LinkNone ServedLink = iota
	// LinkToken: the file was served under the crawler's product token to
	// a client that proved it, or the token has no method of proof.
	LinkToken
	// LinkClient: the file was served to the same client: the same
	// address with the same product token, or, for a client with no
	// token, the same address with the same User-Agent.
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
	Hash string // as VersionHash names it
	At   time.Time
}

// A Serving is one robots.txt served to a client, whole.
type Serving struct {
	Site string
	// ClientIP is the client's address, as the handler resolved it.
	ClientIP string
	// UserAgent is the client's header: the name of a client with no
	// product token.
	UserAgent string
	// Tokens are the product tokens of the header; Credited those of them
	// the client proved, or that no method can prove: the fetch counts
	// for them wherever the crawler asks from, and for the others only
	// when the same client asks.
	Tokens, Credited []string
	Version          string
	At               time.Time
}

// Served remembers which robots.txt versions were served to which crawler
// of which site within GraceWindow, so that a decision can tell what the
// crawler was told (RFC 9309 §2.4: it may keep using a version it fetched
// for a day). A fetch is credited only to whom it proves anything about:
// to a product token when the client proved that token (or the token has
// no method of proof, so that nobody could), and otherwise to the same
// client alone, never to another crawler at its address. Its memory is
// bounded (DefaultMaxServed pairs of MaxServedVersions each, names cut to
// a few dozen octets) whatever clients send. It is safe for concurrent use.
type Served struct {
	mu      sync.Mutex
	max     int
	pairs   map[servedKey]*servedVersions
	changes atomic.Int64
}

// Changes returns a count that grows with every serve noted: a caller
// that saves the table saves it again only when the count moved.
func (s *Served) Changes() int64 { return s.changes.Load() }

// servedKind says what a pair's name is.
type servedKind uint8

const (
	// servedToken: a product token, lower-case.
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

// Note records a robots.txt served whole to a client.
func (s *Served) Note(sv *Serving) {
	if len(sv.Site) > robotstxt.MaxHostLen+len("https://") || sv.Version == "" {
		return
	}
	s.changes.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range sv.Credited {
		s.noteLocked(servedKey{sv.Site, servedToken, strings.ToLower(tok)}, sv.Version, sv.At)
	}
	if sv.ClientIP == "" {
		return
	}
	for _, tok := range sv.Tokens {
		s.noteLocked(servedKey{sv.Site, servedClient, clientName(sv.ClientIP, tok)}, sv.Version, sv.At)
	}
	if len(sv.Tokens) == 0 {
		s.noteLocked(servedKey{sv.Site, servedAgent, agentName(sv.ClientIP, sv.UserAgent)}, sv.Version, sv.At)
	}
}

// clientName names a client by address and product token.
func clientName(ip, token string) string {
	if len(token) > maxServedToken {
		return ""
	}
	return ip + " " + strings.ToLower(token)
}

// agentName names a client with no product token by address and a digest
// of its User-Agent, so that a long header costs no more than a short one.
func agentName(ip, ua string) string {
	sum := sha256.Sum256([]byte(ua))
	return ip + " " + hex.EncodeToString(sum[:8])
}

func (s *Served) noteLocked(k servedKey, hash string, at time.Time) {
	if k.name == "" || len(k.name) > maxServedToken+64 {
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
		if now.Sub(p.last) > robotstxt.GraceWindow {
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

// An Asker is the crawler a decision is about, as Served.Lookup ties it
// to what it was served.
type Asker struct {
	// Token is the decision's product token; "" for a client with none.
	Token string
	// Credited reports that the client proved Token, or that no method
	// can: what was served under the token to anyone who proved it is
	// then what this crawler was told.
	Credited bool
	// ClientIP and UserAgent name the client itself.
	ClientIP, UserAgent string
}

// Lookup returns the versions of site's robots.txt served within
// GraceWindow before now to the crawler a, newest first, and how it was
// tied to them: under its token when a is credited with it, else as the
// same client.
func (s *Served) Lookup(site string, a *Asker, now time.Time) ([]ServedVersion, ServedLink) {
	return s.AppendLookup(nil, site, a, now)
}

// AppendLookup is Lookup appending the versions to dst, for a caller that
// keeps the room: a record's evidence, on every denial.
func (s *Served) AppendLookup(dst []ServedVersion, site string, a *Asker, now time.Time) ([]ServedVersion, ServedLink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := len(dst)
	if a.Token != "" && a.Credited && len(a.Token) <= maxServedToken {
		if dst = s.appendRecentLocked(dst, servedKey{site, servedToken, strings.ToLower(a.Token)}, now); len(dst) > start {
			return dst, LinkToken
		}
	}
	if a.ClientIP == "" {
		return dst, LinkNone
	}
	k := servedKey{site, servedClient, clientName(a.ClientIP, a.Token)}
	if a.Token == "" {
		k = servedKey{site, servedAgent, agentName(a.ClientIP, a.UserAgent)}
	}
	if dst = s.appendRecentLocked(dst, k, now); len(dst) > start {
		return dst, LinkClient
	}
	return dst, LinkNone
}

// appendRecentLocked appends k's versions served within GraceWindow before
// now, newest first.
func (s *Served) appendRecentLocked(out []ServedVersion, k servedKey, now time.Time) []ServedVersion {
	p := s.pairs[k]
	if p == nil || k.name == "" {
		return out
	}
	start := len(out)
	for _, v := range p.v[:p.n] {
		if age := now.Sub(v.At); age >= 0 && age <= robotstxt.GraceWindow {
			out = append(out, v)
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
	return len(s.pairs)
}
