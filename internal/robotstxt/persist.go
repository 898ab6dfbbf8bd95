package robotstxt

import (
	"encoding/hex"
	"fmt"
	"time"
)

// SavedSite is one site's versions, the one in force then Earlier, and
// how it was used: what the store's eviction needs after a restart to
// keep the sites in use (see Restore).
type SavedSite struct {
	Key      string         `json:"key"`
	Versions []SavedVersion `json:"versions"`
	// LastUsed is when the site was last asked for, to the second; zero
	// in a state saved before it was kept.
	LastUsed time.Time `json:"last_used,omitzero"`
	// Uses counts the seconds the site was asked for in since it was
	// first tracked, restarts included.
	Uses uint32 `json:"uses,omitempty"`
}

// SavedVersion is one version of a site's robots.txt.
type SavedVersion struct {
	// Sum is the hex SHA-256 of the body; empty when there is no file.
	Sum         string    `json:"sum,omitempty"`
	Access      string    `json:"access"`
	DisallowAll bool      `json:"disallow_all,omitempty"`
	Truncated   bool      `json:"truncated,omitempty"`
	Source      string    `json:"source"`
	FinalURL    string    `json:"final_url,omitempty"`
	HTTPStatus  int       `json:"http_status,omitempty"`
	FetchedAt   time.Time `json:"fetched_at"`
	ChangedAt   time.Time `json:"changed_at"`
	CheckedAt   time.Time `json:"checked_at"`
	ReplacedAt  time.Time `json:"replaced_at,omitzero"`
}

// Save returns the versions of every site the store tracks, with their
// content (not refused or undefined answers, which say nothing lasting),
// and how each was used: the sites most likely to be kept first, as the
// store's eviction ranks them. A site restored with a copy too old to be
// in force, and not asked for since, is saved with that copy.
func (s *Store) Save() []SavedSite {
	s.mu.Lock()
	entries := s.hosts.hottest()
	s.mu.Unlock()
	var out []SavedSite
	for _, e := range entries {
		snap := e.snap.Load().ownSnapshot() // the fleet's versions are the fleet's to save
		if snap == nil {
			snap = e.seed
		}
		if snap == nil || snap.Refusal != RefusalNone {
			continue
		}
		site := SavedSite{Key: e.host, Uses: e.uses.Load()}
		if sec := e.lastUsed.Load(); sec != 0 {
			site.LastUsed = time.Unix(sec, 0).UTC()
		}
		for _, vs := range append([]*Snapshot{snap}, snap.Earlier...) {
			site.Versions = append(site.Versions, saveVersion(vs))
		}
		out = append(out, site)
	}
	return out
}

func saveVersion(s *Snapshot) SavedVersion {
	v := SavedVersion{
		Access: s.Access.String(), DisallowAll: s.DisallowAll, Truncated: s.Truncated,
		Source: s.Source, FinalURL: s.FinalURL, HTTPStatus: s.HTTPStatus,
		FetchedAt: s.FetchedAt, ChangedAt: s.ChangedAt, CheckedAt: s.CheckedAt, ReplacedAt: s.ReplacedAt,
	}
	if s.Robots != nil {
		v.Sum = hex.EncodeToString(s.sum[:])
	}
	return v
}

// Restore puts saved sites back in the store, which must not have fetched
// anything yet, as of now: up to MaxHosts of them, the first ones of
// sites (Save lists the sites most likely to be kept first), each with
// the versions whose body body gives back (a version whose body is lost
// is left out). A site whose copy in force was fetched within Refresh is
// served from it at once and refreshed in the background with the first
// request; an older copy only joins the site's earlier versions, and the
// first request waits for a fetch, as for a new site. Either way a
// restored site is tracked: its requests never need the budget of first
// fetches. It returns how many sites it restored.
//
// Eviction learns of each site's use before the restart (SavedSite.Uses
// and LastUsed, see warmth), so that the sites in use are not the first
// to go when new hosts arrive, however soon.
func (s *Store) Restore(sites []SavedSite, body func(sum string) ([]byte, bool), now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0
	}
	// A site asked for in two seconds or more goes to the table's main
	// part, as it would have gone before the restart, others to its FIFO
	// (see store_table.go), each part taking what the other has no room
	// for. A state saved before uses were kept (none) says nothing: its
	// sites go to the main part, where eviction sorts them out.
	type restored struct {
		e     *hostEntry
		warms int
	}
	var inMain, inFifo []restored
	mainRoom := s.hosts.max - s.hosts.floor - s.hosts.main.EstimatedSize()
	fifoRoom := s.hosts.floor - s.hosts.fifo.Len()
	// And in octets, so that no site is restored only to push out a
	// hotter one: the table's main part evicts by its policy, which
	// knows nothing of the sites' uses until they are all in.
	mainBytes := s.hosts.budget - s.hosts.byteFloor - s.hosts.bytes.Load()
	fifoBytes := s.hosts.byteFloor
	keys := make(map[string]bool)
	for _, site := range sites {
		if mainRoom <= 0 && fifoRoom <= 0 {
			break
		}
		if _, dup := s.hosts.peek(site.Key); dup || keys[site.Key] {
			continue
		}
		e := s.restoreSite(site, body, now)
		if e == nil {
			continue
		}
		s.hosts.weigh(e)
		w := e.weight.Load()
		r := restored{e, warmth(site.Uses, site.LastUsed, now)}
		hot := site.Uses >= 2 || site.Uses == 0
		fitsMain := mainRoom > 0 && w <= mainBytes
		fitsFifo := s.hosts.floor > 0 && fifoRoom > 0 && w <= fifoBytes
		switch {
		case fitsMain && (hot || !fitsFifo):
			inMain, mainRoom, mainBytes = append(inMain, r), mainRoom-1, mainBytes-w
		case fitsFifo:
			inFifo, fifoRoom, fifoBytes = append(inFifo, r), fifoRoom-1, fifoBytes-w
		default:
			s.hosts.bytes.Add(-w) // no room for it in octets: not restored
			continue
		}
		keys[site.Key] = true
	}
	// The coldest first, so that the hottest are the most recent too.
	for i := len(inFifo) - 1; i >= 0; i-- {
		s.hosts.add(inFifo[i].e, true)
	}
	for i := len(inMain) - 1; i >= 0; i-- {
		s.hosts.add(inMain[i].e, false)
	}
	s.hosts.main.CleanUp() // the additions reach the policy before the uses
	for i := len(inMain) - 1; i >= 0; i-- {
		if n := inMain[i].warms; n > 0 {
			for range n {
				s.hosts.used(inMain[i].e)
			}
			// Uses are noted in a buffer of 16 per stripe that drops what
			// does not fit: applied before the next site's.
			s.hosts.main.CleanUp()
		}
	}
	return len(inMain) + len(inFifo)
}

// maxWarmth is the most uses a restored site is credited with: the count-min
// sketch of the table's eviction counts to 15.
const maxWarmth = 15

// warmth returns how many uses eviction is told of for a site restored at
// now, that was asked for in uses seconds, last at lastUsed (zero when not
// known): up to maxWarmth, halved for each whole day it went unused, as
// the sketch's own ageing would have faded it.
func warmth(uses uint32, lastUsed, now time.Time) int {
	n := int(min(uses, maxWarmth))
	if idle := now.Sub(lastUsed); !lastUsed.IsZero() && idle > 0 {
		n >>= min(idle/(24*time.Hour), 4)
	}
	return n
}

// restoreSite rebuilds the entry of a saved site, or returns nil when its
// key names no site or none of its versions could be restored.
func (s *Store) restoreSite(site SavedSite, body func(sum string) ([]byte, bool), now time.Time) *hostEntry {
	url, err := robotsURL(s.cfg.Scheme, site.Key)
	if s.cfg.URL != "" {
		url, err = s.cfg.URL, nil
	}
	if err != nil {
		return nil
	}
	var versions []*Snapshot
	for _, sv := range site.Versions {
		if v := s.restoreVersion(sv, body); v != nil {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return nil
	}
	e := &hostEntry{host: site.Key, url: url, ready: make(chan struct{})}
	used := now
	if !site.LastUsed.IsZero() && !site.LastUsed.After(now) {
		used = site.LastUsed
	}
	e.lastUsed.Store(used.Unix())
	e.uses.Store(site.Uses)
	cur := versions[0]
	cur.Earlier = cur.keepEarlier(versions[1:], now)
	cur.weigh()
	if s.life.fit(cur, nil, false); cur.weight() > s.life.maxSite {
		return nil // held whole past its share of a smaller budget: fetched anew
	}
	if now.Sub(cur.FetchedAt) < s.cfg.Refresh && !cur.FetchedAt.After(now) {
		cur.RefreshAt = now // refreshed with the first request
		e.snap.Store(cur)
		close(e.ready)
	} else {
		// Too old to be in force (RFC 9309 §2.4): the site's first
		// request waits for a fetch, whose answer follows this copy
		// as it would have followed it before the restart.
		e.seed = cur
	}
	return e
}

// restoreVersion rebuilds a saved version, or returns nil when its body is
// lost or it does not read.
func (s *Store) restoreVersion(sv SavedVersion, body func(sum string) ([]byte, bool)) *Snapshot {
	access, err := parseAccess(sv.Access)
	if err != nil {
		return nil
	}
	v := &Snapshot{
		Access: access, DisallowAll: sv.DisallowAll, Source: sv.Source, FinalURL: sv.FinalURL,
		HTTPStatus: sv.HTTPStatus, FetchedAt: sv.FetchedAt, ChangedAt: sv.ChangedAt,
		CheckedAt: sv.CheckedAt, ReplacedAt: sv.ReplacedAt,
	}
	if access != AccessAvailable {
		return v
	}
	b, ok := body(sv.Sum)
	if !ok {
		return nil
	}
	v.setFile(nil, b, sv.Truncated, s.life.maxSize)
	if hex.EncodeToString(v.sum[:]) != sv.Sum {
		return nil // a body that is not the version's
	}
	v.weigh()
	return v
}

func parseAccess(name string) (AccessResult, error) {
	for a, n := range accessNames {
		if n != "" && n == name {
			return AccessResult(a), nil
		}
	}
	return 0, fmt.Errorf("access %q: not a result", name)
}
