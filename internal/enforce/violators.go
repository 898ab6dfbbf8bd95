package enforce

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// EscalationMode says what a crawler recorded with a violation gets next.
type EscalationMode uint8

const (
	// EscalateOff: nothing; a violation is recorded, and that is all.
	EscalateOff EscalationMode = iota
	// EscalateEnforce: what its group disallows is denied, in log mode
	// too.
	EscalateEnforce
	// EscalateBlock: everything but /robots.txt is denied.
	EscalateBlock
)

var escalationNames = [...]string{EscalateOff: "off", EscalateEnforce: "enforce", EscalateBlock: "block"}

// String returns "off", "enforce" or "block".
func (m EscalationMode) String() string {
	if int(m) < len(escalationNames) {
		return escalationNames[m]
	}
	return fmt.Sprintf("escalation(%d)", uint8(m))
}

// ParseEscalationMode reads an EscalationMode by name; "" is EscalateOff.
func ParseEscalationMode(s string) (EscalationMode, error) {
	if s == "" {
		return EscalateOff, nil
	}
	for m, name := range escalationNames {
		if name == s && m != int(EscalateOff) {
			return EscalationMode(m), nil
		}
	}
	return 0, fmt.Errorf("violators %q: want enforce or block", s)
}

// Bounds of a Violators table, each with its reason.
const (
	// DefaultEscalation is how long an escalation lasts: a day, as long as
	// a crawler may keep a robots.txt (RFC 9309 §2.4), so that an honest
	// crawler's stale copy never costs it more than a day.
	DefaultEscalation = 24 * time.Hour
	// DefaultMaxViolators bounds the crawlers a table holds, proven and
	// not each: violators are few, and a flood of forged names from new
	// addresses cannot grow it past a megabyte or two; past it, the
	// escalation begun first goes, never a proven crawler's for an
	// unproven one.
	DefaultMaxViolators = 10000
	// maxPerAddress bounds the escalations of one client address (an
	// IPv6 /64) that proves no token: a violator inventing a name for
	// each request fills its own share, and past it the address itself
	// is escalated (see Violators.Begin), so that changing names is no
	// way out and no one address can push out another's escalations.
	maxPerAddress = 8
	// anyToken is the token of an escalation of a whole address.
	anyToken = "*"
)

// An Escalation is what a crawler's violation started: since when and
// until when it is escalated, and the violation that started it.
type Escalation struct {
	Since, Until time.Time
	// Site, URI and Versions are the starting violation's: the site, the
	// target as sent, and the robots.txt versions it was judged against.
	Site, URI string
	Versions  []string
}

// violatorKey names a crawler escalated on a site: a token it proved,
// or, for a client that proved none, the token it claimed and its
// address (an address key, see addressKey), so that no one can get
// another crawler escalated by claiming its name.
type violatorKey struct {
	site  string
	token string     // lower-case; anyToken for a whole address
	addr  netip.Addr // the zero Addr for a proven token
}

// Violators remembers the crawlers recorded with a violation, and when
// their escalation ends: a proven crawler by its token, wherever it asks
// from; a client that proved none by its address and the token it
// claimed. Its memory is bounded (DefaultMaxViolators proven and as many
// unproven, maxPerAddress of one address, names cut to a few dozen
// octets) whatever clients send, and each operation is O(1). It is safe
// for concurrent use; a table with no escalation in force costs a lookup
// one atomic load.
type Violators struct {
	mu               sync.Mutex
	proven, unproven *ledger[violatorKey, Escalation]
	n                atomic.Int64 // entries held, read without the lock
	changes          atomic.Int64
	// begun, when set, is called (without the lock) after an escalation
	// begins: the owner saves the table at once, so that a crash a moment
	// later does not lose it.
	begun atomic.Pointer[func()]
	// fleet holds the escalations the rest of the fleet began (see
	// SetFleet), fleetN how many; nil and 0 when there are none.
	fleet  atomic.Pointer[fleetEscalations]
	fleetN atomic.Int64
}

// NewViolators returns an empty table holding at most max crawlers proven
// and max unproven (0 means DefaultMaxViolators).
func NewViolators(max int) *Violators {
	if max <= 0 {
		max = DefaultMaxViolators
	}
	return &Violators{proven: newLedger[violatorKey, Escalation](max, 0),
		unproven: newLedger[violatorKey, Escalation](max, maxPerAddress)}
}

// OnBegin has f called after each escalation begins, outside the table's
// lock; nil stops it.
func (v *Violators) OnBegin(f func()) {
	if f == nil {
		v.begun.Store(nil)
		return
	}
	v.begun.Store(&f)
}

// Changes returns a count that grows with every escalation begun: a
// caller that saves the table saves it again only when the count moved.
func (v *Violators) Changes() int64 { return v.changes.Load() }

// Len returns the number of crawlers held, the fleet's included (see
// SetFleet); 0 for a nil table.
func (v *Violators) Len() int {
	if v == nil {
		return 0
	}
	return int(v.n.Load() + v.fleetN.Load())
}

// OwnLen returns the number of crawlers the table escalated itself.
func (v *Violators) OwnLen() int { return int(v.n.Load()) }

// keyOf returns the key of the crawler token of site, proven as it or
// else at addr; false when it cannot be held (a name too long, a client
// with no address).
func keyOf(site, token string, addr netip.Addr, proven bool) (violatorKey, bool) {
	if token == "" || len(token) > maxServedToken || len(site) > robotstxt.MaxHostLen+len("https://") {
		return violatorKey{}, false
	}
	k := violatorKey{site: site, token: lowerKey(token)}
	if !proven {
		if k.addr = addressKey(addr); !k.addr.IsValid() {
			return violatorKey{}, false
		}
	}
	return k, true
}

// lowerKey returns tok lower-case, uncopied when it is already.
func lowerKey(tok string) string {
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(tok)
		}
	}
	return tok
}

// Lookup returns the escalation in force at now for the crawler token of
// site, proven as it or, if not, at address addr (or for the whole
// address); nil when there is none.
//
// An escalation the rest of the fleet began (see SetFleet) counts too;
// for a crawler escalated here and elsewhere, the one begun first.
func (v *Violators) Lookup(site, token string, addr netip.Addr, proven bool, now time.Time) *Escalation {
	if v == nil || v.n.Load()+v.fleetN.Load() == 0 {
		return nil
	}
	k, ok := keyOf(site, token, addr, proven)
	if !ok {
		return nil
	}
	if e := earliest(v.lookupOwn(k, proven, now), v.fleetLookup(k, now)); e != nil || proven {
		return e
	}
	k.token = anyToken
	return earliest(v.lookupOwn(k, proven, now), v.fleetLookup(k, now))
}

// lookupOwn returns the table's own escalation of k in force at now, nil
// when there is none.
func (v *Violators) lookupOwn(k violatorKey, proven bool, now time.Time) *Escalation {
	if v.n.Load() == 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	l := v.unproven
	if proven {
		l = v.proven
	}
	if e, ok := l.get(k); ok && now.Before(e.Until) {
		return e
	}
	return nil
}

// Begin escalates the crawler token of site (proven as it, or at address
// addr) for d from now, for the violation e describes, unless an
// escalation is already in force; it reports whether it began one. An
// address that proves no token and would pass its share of escalations
// is escalated as a whole instead: a client that invents a name for each
// violation is one violator.
func (v *Violators) Begin(site, token string, addr netip.Addr, proven bool, now time.Time, d time.Duration, e Escalation) bool {
	k, ok := keyOf(site, token, addr, proven)
	if !ok {
		return false
	}
	if v.fleetLookup(k, now) != nil {
		return false // in force: the fleet's
	}
	if !proven {
		if all := (violatorKey{site: k.site, token: anyToken, addr: k.addr}); v.fleetLookup(all, now) != nil {
			return false
		}
	}
	v.mu.Lock()
	began := v.beginLocked(k, proven, now, d, e)
	v.mu.Unlock()
	if began {
		v.changes.Add(1)
		if f := v.begun.Load(); f != nil {
			(*f)()
		}
	}
	return began
}

func (v *Violators) beginLocked(k violatorKey, proven bool, now time.Time, d time.Duration, e Escalation) bool {
	l := v.unproven
	if proven {
		l = v.proven
	}
	// Escalations end in about the order they began: those ended go
	// first, so that the table holds those in force.
	l.pruneOldest(func(e *Escalation) bool { return !now.Before(e.Until) })
	if old, ok := l.get(k); ok && now.Before(old.Until) {
		return false
	}
	group := ""
	if !proven {
		all := violatorKey{site: k.site, token: anyToken, addr: k.addr}
		if whole, ok := l.get(all); ok && now.Before(whole.Until) {
			return false // the address is escalated already
		}
		group = k.addr.String()
		if l.groupLen(group) >= maxPerAddress-1 {
			// Its share is full: the address itself is escalated, and
			// its escalations by name on this site go.
			var names []violatorKey
			l.eachInGroup(group, func(o violatorKey, _ *Escalation) bool {
				if o.site == k.site {
					names = append(names, o)
				}
				return true
			})
			for _, o := range names {
				l.remove(o)
			}
			k = all
		}
	}
	e.Since, e.Until = now, now.Add(d)
	e.Site, e.URI = strings.Clone(e.Site), strings.Clone(truncate(e.URI, maxEscalationURI))
	e.Versions = append([]string(nil), e.Versions...)
	k.site, k.token = strings.Clone(k.site), strings.Clone(k.token)
	*l.put(k, group, nil) = e
	v.n.Store(int64(v.proven.len() + v.unproven.len()))
	return true
}

// maxEscalationURI bounds the target an escalation keeps of its violation.
const maxEscalationURI = 512

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// An EscalatedCrawler is one entry of a Violators table, for saving it
// and for reports.
type EscalatedCrawler struct {
	Site  string `json:"site"`
	Token string `json:"token"`
	// IP is the address of a client that proved no token, as its
	// escalation keys it (an IPv6 /64 by its first address); "" for a
	// proven token. Token is "*" for an address escalated as a whole.
	IP       string    `json:"ip,omitempty"`
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
	URI      string    `json:"uri"`
	Versions []string  `json:"versions,omitempty"`
}

// Save returns the escalations in force at now, oldest first.
func (v *Violators) Save(now time.Time) []EscalatedCrawler {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []EscalatedCrawler
	for _, l := range [...]*ledger[violatorKey, Escalation]{v.proven, v.unproven} {
		l.each(func(k violatorKey, e *Escalation) bool {
			if now.Before(e.Until) {
				ip := ""
				if k.addr.IsValid() {
					ip = k.addr.String()
				}
				out = append(out, EscalatedCrawler{Site: k.site, Token: k.token, IP: ip, Since: e.Since, Until: e.Until, URI: e.URI, Versions: e.Versions})
			}
			return true
		})
	}
	return out
}

// Restore puts saved escalations still in force at now back in the table,
// up to its bounds.
func (v *Violators) Restore(saved []EscalatedCrawler, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range saved {
		k, ok := savedViolatorKey(&s)
		if !ok || !now.Before(s.Until) || s.Until.Sub(s.Since) <= 0 {
			continue
		}
		l, group := v.proven, ""
		if k.addr.IsValid() {
			l, group = v.unproven, k.addr.String()
		}
		*l.put(k, group, nil) = Escalation{Since: s.Since, Until: s.Until, Site: s.Site, URI: truncate(s.URI, maxEscalationURI), Versions: s.Versions}
	}
	v.n.Store(int64(v.proven.len() + v.unproven.len()))
}
