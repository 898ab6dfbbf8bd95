package enforce

import (
	"encoding/hex"
	"fmt"
	"time"
)

// SavedFormat is the version of the SavedState layout. A state of another
// format is not restored: the store starts empty, as on a first start.
const SavedFormat = 1

// SavedState is the part of a Store's and a Served table's state that
// outlives a restart: for each site, the versions of robots.txt in force
// within GraceWindow, and who was served which. It holds no robots.txt
// bodies: a version names its body by SHA-256, and the caller keeps the
// bodies (StoreConfig.OnVersion) and gives them back to Restore. Its size
// is bounded by the bounds of the store and the table it comes from.
type SavedState struct {
	Format  int           `json:"format"`
	SavedAt time.Time     `json:"saved_at"`
	Sites   []SavedSite   `json:"sites,omitempty"`
	Served  []SavedServed `json:"served,omitempty"`
}

// SavedSite is one site's versions: the one in force, then Earlier.
type SavedSite struct {
	Key      string         `json:"key"`
	Versions []SavedVersion `json:"versions"`
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
// content (not refused or undefined answers, which say nothing lasting).
func (s *Store) Save() []SavedSite {
	var out []SavedSite
	s.hosts.Range(func(k, v any) bool {
		snap := v.(*hostEntry).snap.Load()
		if snap == nil || snap.Refusal != RefusalNone {
			return true
		}
		site := SavedSite{Key: k.(string)}
		for _, vs := range append([]*Snapshot{snap}, snap.Earlier...) {
			site.Versions = append(site.Versions, saveVersion(vs))
		}
		out = append(out, site)
		return true
	})
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
// anything yet, as of now: up to MaxHosts of them, each with the versions
// whose body body gives back (a version whose body is lost is left out).
// A site whose copy in force was fetched within Refresh is served from it
// at once and refreshed in the background with the first request; an
// older copy only joins the site's earlier versions, and the first
// request waits for a fetch, as for a new site. It returns how many sites
// it restored.
func (s *Store) Restore(sites []SavedSite, body func(sum string) ([]byte, bool), now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, site := range sites {
		if s.count >= s.cfg.MaxHosts || s.closed.Load() {
			break
		}
		url, err := robotsURL(s.cfg.Scheme, site.Key)
		if s.cfg.URL != "" {
			url, err = s.cfg.URL, nil
		}
		if err != nil {
			continue
		}
		var versions []*Snapshot
		for _, sv := range site.Versions {
			if v := s.restoreVersion(sv, body); v != nil {
				versions = append(versions, v)
			}
		}
		if len(versions) == 0 {
			continue
		}
		if _, dup := s.hosts.Load(site.Key); dup {
			continue
		}
		e := &hostEntry{host: site.Key, url: url, ready: make(chan struct{})}
		e.lastUsed.Store(now.Unix())
		cur := versions[0]
		cur.Earlier = nil
		for _, v := range versions[1:] {
			if now.Sub(v.ReplacedAt) < GraceWindow && len(cur.Earlier) < MaxVersions-1 {
				cur.Earlier = append(cur.Earlier, v)
			}
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
		s.hosts.Store(site.Key, e)
		s.count++
		n++
	}
	return n
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
