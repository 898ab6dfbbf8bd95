package enforce

import (
	"fmt"
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
	// DefaultMaxViolators bounds the crawlers a table holds: violators are
	// few, and a flood of forged names from new addresses cannot grow it
	// past a megabyte or two; past it, the escalation ending soonest goes.
	DefaultMaxViolators = 10000
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

// violatorKey names a crawler: its verified token, or, for a claim that
// was not verified, the token and the address it came from, so that no
// one can get another crawler escalated by claiming its name.
type violatorKey struct {
	site  string
	token string // lower-case
	ip    string // "" for a verified token
}

// Violators remembers the crawlers recorded with a violation, and when
// their escalation ends. Its memory is bounded (max entries, names cut to
// a few dozen octets) whatever clients send. It is safe for concurrent
// use; a table with no escalation in force costs a lookup one atomic load.
type Violators struct {
	mu      sync.Mutex
	max     int
	m       map[violatorKey]*Escalation
	n       atomic.Int64 // len(m), read without the lock
	changes atomic.Int64
}

// NewViolators returns an empty table holding at most max crawlers (0
// means DefaultMaxViolators).
func NewViolators(max int) *Violators {
	if max <= 0 {
		max = DefaultMaxViolators
	}
	return &Violators{max: max, m: make(map[violatorKey]*Escalation)}
}

// Changes returns a count that grows with every escalation begun: a
// caller that saves the table saves it again only when the count moved.
func (v *Violators) Changes() int64 { return v.changes.Load() }

// Len returns the number of crawlers held; 0 for a nil table.
func (v *Violators) Len() int {
	if v == nil {
		return 0
	}
	return int(v.n.Load())
}

func violatorKeyOf(site, token, ip string, verified bool) (violatorKey, bool) {
	if len(token) > maxServedToken || len(site) > robotstxt.MaxHostLen+len("https://") {
		return violatorKey{}, false
	}
	k := violatorKey{site: site, token: strings.ToLower(token), ip: ip}
	if verified {
		k.ip = ""
	}
	return k, true
}

// Lookup returns the escalation in force at now for the crawler token of
// site, verified as it or, if not, at address ip; nil when there is none.
func (v *Violators) Lookup(site, token, ip string, verified bool, now time.Time) *Escalation {
	if v == nil || v.n.Load() == 0 {
		return nil
	}
	k, ok := violatorKeyOf(site, token, ip, verified)
	if !ok {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.m[k]; e != nil && now.Before(e.Until) {
		return e
	}
	return nil
}

// Begin escalates the crawler token of site (verified as it, or at
// address ip) for d from now, for the violation e describes, unless an
// escalation is already in force; it reports whether it began one.
func (v *Violators) Begin(site, token, ip string, verified bool, now time.Time, d time.Duration, e Escalation) bool {
	k, ok := violatorKeyOf(site, token, ip, verified)
	if !ok {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if old := v.m[k]; old != nil && now.Before(old.Until) {
		return false
	}
	if _, held := v.m[k]; !held && len(v.m) >= v.max {
		v.dropLocked(now)
	}
	e.Since, e.Until = now, now.Add(d)
	e.Site, e.URI = strings.Clone(e.Site), strings.Clone(truncate(e.URI, maxEscalationURI))
	e.Versions = append([]string(nil), e.Versions...)
	k.site, k.token, k.ip = strings.Clone(k.site), strings.Clone(k.token), strings.Clone(k.ip)
	v.m[k] = &e
	v.n.Store(int64(len(v.m)))
	v.changes.Add(1)
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

// dropLocked makes room: escalations that ended go first; if none has,
// the one ending soonest.
func (v *Violators) dropLocked(now time.Time) {
	var soonest violatorKey
	var until time.Time
	for k, e := range v.m {
		if !now.Before(e.Until) {
			delete(v.m, k)
			continue
		}
		if until.IsZero() || e.Until.Before(until) {
			soonest, until = k, e.Until
		}
	}
	if len(v.m) >= v.max {
		delete(v.m, soonest)
	}
}

// An EscalatedCrawler is one entry of a Violators table, for saving it
// and for reports.
type EscalatedCrawler struct {
	Site  string `json:"site"`
	Token string `json:"token"`
	// IP is the address of an unverified claim; "" for a verified token.
	IP       string    `json:"ip,omitempty"`
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
	URI      string    `json:"uri"`
	Versions []string  `json:"versions,omitempty"`
}

// Save returns the escalations in force at now.
func (v *Violators) Save(now time.Time) []EscalatedCrawler {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]EscalatedCrawler, 0, len(v.m))
	for k, e := range v.m {
		if now.Before(e.Until) {
			out = append(out, EscalatedCrawler{Site: k.site, Token: k.token, IP: k.ip, Since: e.Since, Until: e.Until, URI: e.URI, Versions: e.Versions})
		}
	}
	return out
}

// Restore puts saved escalations still in force at now back in the table,
// up to its bound.
func (v *Violators) Restore(saved []EscalatedCrawler, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range saved {
		k, ok := violatorKeyOf(s.Site, s.Token, s.IP, s.IP == "")
		if !ok || !now.Before(s.Until) || s.Until.Sub(s.Since) <= 0 {
			continue
		}
		if _, held := v.m[k]; !held && len(v.m) >= v.max {
			v.dropLocked(now)
		}
		v.m[k] = &Escalation{Since: s.Since, Until: s.Until, Site: s.Site, URI: truncate(s.URI, maxEscalationURI), Versions: s.Versions}
	}
	v.n.Store(int64(len(v.m)))
}
