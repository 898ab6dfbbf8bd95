package robotstxt

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// A Refusal says why a Store gives a host no answer of its own: nothing is
// known of the host's robots.txt, and nothing will be fetched for it now.
// A refused snapshot disallows everything whatever the unreachable policy
// says (an operator's "unreachable allow" is about a site whose server
// fails, not about hosts the store will not look at), so that no client
// can get past the rules by choosing a host, a moment or a pace.
type Refusal uint8

const (
	// RefusalNone: the snapshot is the host's own.
	RefusalNone Refusal = iota
	// RefusalInvalidHost: the key names no site (see SiteKey).
	RefusalInvalidHost
	// RefusalHostBudget: the host is not tracked yet and the budget of
	// first fetches is spent (StoreConfig.NewHosts), or as many fetches
	// as StoreConfig.MaxHosts are in flight.
	RefusalHostBudget
	// RefusalClosed: the store is closed (its configuration was replaced)
	// and the host was never fetched.
	RefusalClosed
)

var refusalNames = [...]string{RefusalNone: "", RefusalInvalidHost: "invalid_host", RefusalHostBudget: "host_budget", RefusalClosed: "store_closed"}

// String returns the refusal's stable name: "invalid_host", "host_budget",
// "store_closed", or "" for none.
func (r Refusal) String() string {
	if int(r) < len(refusalNames) {
		return refusalNames[r]
	}
	return fmt.Sprintf("refusal(%d)", uint8(r))
}

// refusedError is an error of entry that refuses the host.
type refusedError struct {
	why Refusal
	err error
}

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

func refuse(why Refusal, format string, args ...any) error {
	return &refusedError{why: why, err: fmt.Errorf(format, args...)}
}

var errStoreClosed = errors.New("robots.txt store closed")

// robotsURL returns the robots.txt URL of a host key (RFC 9309 §2.3): a
// host, fetched with scheme, or an origin naming its own ("http://host").
// It refuses a key that would make the URL name another authority or
// path.
func robotsURL(scheme, key string) (string, error) {
	host := key
	for _, s := range [...]string{"http", "https"} {
		if rest, ok := strings.CutPrefix(key, s+"://"); ok {
			scheme, host = s, rest
			break
		}
	}
	if host == "" || len(host) > MaxHostLen {
		return "", fmt.Errorf("host %.40q: empty or longer than %d octets", host, MaxHostLen)
	}
	raw := scheme + "://" + host + "/robots.txt"
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("host %.40q: %w", host, err)
	}
	if u.Host != host || u.User != nil || u.Path != "/robots.txt" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("host %.40q is not an authority", host)
	}
	return raw, nil
}

// undefined is the snapshot for a host whose file is not known and will
// not be fetched now. When the store refuses the host (see Refusal),
// everything is disallowed; when a caller gave up waiting for a first
// fetch, the file is undefined and the unreachable policy applies (RFC 9309
// §2.3.1.4). It is not stored.
func (l *lifecycle) undefined(source string, now time.Time, err error) *Snapshot {
	s := &Snapshot{
		Access:      AccessUnreachable,
		DisallowAll: l.unreachable != UnreachableAllow,
		Source:      source,
		FetchedAt:   now,
		ChangedAt:   now,
		CheckedAt:   now,
		Err:         err.Error(),
	}
	var re *refusedError
	if errors.As(err, &re) {
		s.Refusal, s.DisallowAll = re.why, true
	}
	return s
}

// entry returns the entry of host key, adding it and starting its first
// fetch when there is none, via its first fetch's fetcher (see SnapshotWith). It
// refuses a key that names no site, a new host over the budget of first
// fetches or while as many fetches as MaxHosts are in flight, and any new
// host once the store is closed. Adding a host past MaxHosts makes the
// table forget the one least likely to be asked for again (see
// store_table.go).
func (s *Store) entry(key string, now time.Time, via Fetcher) (*hostEntry, error) {
	if e, ok := s.hosts.get(key); ok {
		return e, nil
	}
	u, err := robotsURL(s.cfg.Scheme, key)
	if s.cfg.URL != "" {
		u, err = s.cfg.URL, nil
	}
	if err != nil {
		return nil, &refusedError{why: RefusalInvalidHost, err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, &refusedError{why: RefusalClosed, err: errStoreClosed}
	}
	if e, ok := s.hosts.peek(key); ok {
		return e, nil
	}
	if s.hosts.full() {
		// Checked before the budget is spent: a host refused here may
		// come back within it.
		s.hosts.tell(SiteRefusedInFlight, key)
		return nil, refuse(RefusalHostBudget, "%s: %d fetches in flight, as many as max hosts allows", u, s.cfg.MaxHosts)
	}
	if !s.newHosts.AllowN(now, 1) {
		s.hosts.tell(SiteRefusedNewHosts, key)
		return nil, refuse(RefusalHostBudget, "%s: more than %d new hosts in %v", u, s.cfg.NewHosts, s.cfg.NewHostsPer)
	}
	s.hosts.fetchingAgain(key, now)
	e := &hostEntry{host: key, url: u, ready: make(chan struct{})}
	if via != nil {
		e.via.Store(&siteVia{via})
	}
	e.lastUsed.Store(now.Unix())
	e.uses.Store(1)
	e.fetching.Store(true)
	s.hosts.addPending(e)
	s.fetches.Add(1)
	go s.fetch(e)
	return e, nil
}
