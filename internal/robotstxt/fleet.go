package robotstxt

import (
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// The fleet's versions. Instances that share a storage can share what
// each had in force (caddymodule's distributed option): a crawler may hold
// any version of a site's robots.txt that was in force within GraceWindow
// (RFC 9309 §2.4), on whichever instance it read it, so every instance
// judges by every version any of them had in force. The others' versions
// reach a Store as a view (SetFleet): their metadata, as each instance
// saved its sites (Save), and their bodies, by SHA-256. For each site it
// holds, the store publishes its own snapshot with the fleet's versions
// it lacks among Earlier: the judgement then reads them as it reads the
// store's own (Snapshot.Version, AppendVersionsAt). They are never the
// store's own: a fetch follows the store's own snapshot, and Save saves
// it alone, so that no instance echoes back what it read.

// Bounds and settings of the fleet's versions, each with its reason.
const (
	// fleetUntilStep is how far the end of a fleet version still in force
	// elsewhere may move before the site is published again: it moves
	// with every read of the other instance's part, and a site published
	// every few seconds for a window of a day would be churn. A version's
	// grace is then known to within a minute of 24 hours.
	fleetUntilStep = time.Minute
	// maxUnheldFleetBytes bounds the bodies parsed ahead for the fleet's
	// sites this store does not hold yet: a site first asked for here is
	// then judged at once by the versions the fleet had in force, with no
	// read of the storage on its first request. Robots.txt files are a
	// few kilobytes: this covers thousands of sites; past it, a site's
	// versions come with the next AttachFleet.
	maxUnheldFleetBytes = 16 << 20
)

// A FleetPart is what another instance of the fleet saved of its sites.
type FleetPart struct {
	// Sites are its sites as it saved them (Store.Save): the version in
	// force, then Earlier.
	Sites []SavedSite
	// Seen is when the instance was last known to be live (its last
	// write): the versions in force there (ReplacedAt zero) were in force
	// until then at least.
	Seen time.Time
}

// FleetStats says what SetFleet installed.
type FleetStats struct {
	// Sites and Versions count the fleet's sites and their versions
	// within GraceWindow, past the bounds.
	Sites, Versions int
	// Held counts the sites this store holds that were given versions of
	// the fleet's; Missing the versions of those left out for want of
	// their body (not in the storage, or not the version's).
	Held, Missing int
}

// fleetView is the fleet's versions by site key: each a SavedVersion
// whose ReplacedAt is when it was last in force on some instance, newest
// first, at most MaxVersions; and the bodies parsed, by digest: those of
// the sites the store holds, and of the others up to
// maxUnheldFleetBytes. It is immutable once installed.
type fleetView struct {
	sites  map[string][]SavedVersion
	parsed map[[32]byte]*parsedBody
}

// parsedBody is a body parsed, and its size.
type parsedBody struct {
	snap *Snapshot
	size int
}

// fleetVersions are the fleet's versions a host is published with, as
// snapshots, newest first. It is immutable once installed.
type fleetVersions struct {
	list []*Snapshot
}

// SetFleet installs the versions the other instances of the fleet had in
// force: parts are what they saved, one per instance. A version counts
// when it was in force on some instance within GraceWindow before now (a
// file, or the site's answer that there is none: a refusal or a failure
// to reach the site says nothing of what a crawler was told), each
// version once per site, at its latest time in force, at most MaxVersions
// per site. The store keeps the metadata of at most MaxHosts sites (its
// own first, then those in force last), and parses the bodies, which body
// gives back by their hex SHA-256, of the versions of the sites it holds
// and, up to maxUnheldFleetBytes, of the others; each body is parsed
// once, whatever the views. Each site it holds is published again with
// the versions it lacks among Earlier; a site published first later gets
// them with its first snapshot. A site whose version in force elsewhere
// is newer than this store's last check, and differs, is fetched again,
// at most once a MinRefresh. It is called off the request path: it may
// wait for body.
func (s *Store) SetFleet(parts []FleetPart, body func(sum string) ([]byte, bool), now time.Time) FleetStats {
	s.mu.Lock()
	entries := s.hosts.hottest()
	s.mu.Unlock()
	view := mergeFleet(parts, now)
	if len(view.sites) > s.cfg.MaxHosts {
		view.trim(s.cfg.MaxHosts, entries)
	}
	st := FleetStats{}
	for _, vs := range view.sites {
		st.Sites++
		st.Versions += len(vs)
	}
	if len(view.sites) == 0 {
		view = nil
	} else {
		s.parseFleet(view, s.fleet.Load(), entries, body)
	}
	s.fleet.Store(view)
	st.Held, st.Missing = s.attachFleet(view, entries, now)
	return st
}

// AttachFleet gives the sites the store holds the fleet's versions they
// lack, from the view SetFleet installed last, as SetFleet does, parsing
// the bodies it lacks: for the sites first published since whose bodies
// were not parsed ahead (see FleetWanted). It returns how many sites it
// published again, and how many versions it left out for want of their
// body.
func (s *Store) AttachFleet(body func(sum string) ([]byte, bool), now time.Time) (held, missing int) {
	s.mu.Lock()
	entries := s.hosts.hottest()
	s.mu.Unlock()
	old := s.fleet.Load()
	if old == nil {
		return 0, 0
	}
	view := &fleetView{sites: old.sites}
	s.parseFleet(view, old, entries, body)
	s.fleet.CompareAndSwap(old, view) // a newer view stands
	return s.attachFleet(s.fleet.Load(), entries, now)
}

// FleetWanted is signalled when the store first publishes a site the
// fleet's view has versions of whose bodies were not parsed ahead: the
// caller then runs AttachFleet, so that the site is judged by them before
// the next view comes.
func (s *Store) FleetWanted() <-chan struct{} { return s.fleetWanted }

// fleetNeeded gives e, whose first fetch has just ended and which is in
// the table now, the view's versions it lacks: a view installed between
// its first snapshot and now found it nowhere. Those whose bodies were
// parsed ahead are given at once, with no read of the storage; for the
// others it signals FleetWanted.
func (s *Store) fleetNeeded(e *hostEntry) {
	v := s.fleet.Load()
	if v == nil || len(v.sites[e.host]) == 0 {
		return
	}
	if e.fleet.Load() == nil {
		if own := e.snap.Load().ownSnapshot(); own != nil {
			if list, _ := v.versionsOf(e.host, own); len(list) > 0 {
				e.fleet.CompareAndSwap(nil, &fleetVersions{list: list}) // a view's attach may have come first
				s.republish(e)
			}
		}
	}
	for _, sv := range v.sites[e.host] {
		if d, ok := digestOf(sv); ok && v.parsed[d] == nil {
			select {
			case s.fleetWanted <- struct{}{}:
			default:
			}
			return
		}
	}
}

// mergeFleet merges parts into a view at now (see SetFleet).
func mergeFleet(parts []FleetPart, now time.Time) *fleetView {
	v := &fleetView{sites: make(map[string][]SavedVersion)}
	for _, p := range parts {
		for _, site := range p.Sites {
			key := strings.ToLower(site.Key)
			if len(key) > MaxHostLen+len("https://") {
				continue
			}
			for _, sv := range site.Versions {
				if !fleetKind(sv) {
					continue
				}
				until := sv.ReplacedAt
				if until.IsZero() || until.After(p.Seen) {
					until = p.Seen // in force there when it was last seen
				}
				if until.After(now) {
					until = now
				}
				if now.Sub(until) >= GraceWindow {
					continue
				}
				sv.ReplacedAt = until
				v.add(key, sv)
			}
		}
	}
	for key, vs := range v.sites {
		slices.SortStableFunc(vs, func(a, b SavedVersion) int { return b.ReplacedAt.Compare(a.ReplacedAt) })
		if len(vs) > MaxVersions {
			v.sites[key] = vs[:MaxVersions]
		}
	}
	return v
}

// fleetKind reports whether sv is a version the fleet shares: a file,
// named by a well-formed digest, or the site's answer that there is none.
func fleetKind(sv SavedVersion) bool {
	switch sv.Access {
	case AccessAvailable.String():
		b, err := hex.DecodeString(sv.Sum)
		return err == nil && len(b) == 32
	case AccessUnavailable.String():
		return true
	}
	return false
}

// add adds sv to key's versions, or moves the one it is later.
func (v *fleetView) add(key string, sv SavedVersion) {
	vs := v.sites[key]
	for i := range vs {
		if vs[i].Access == sv.Access && vs[i].Sum == sv.Sum {
			if sv.ReplacedAt.After(vs[i].ReplacedAt) {
				vs[i] = sv
			}
			return
		}
	}
	v.sites[key] = append(vs, sv)
}

// trim keeps at most max sites: those of entries first, then those in
// force last.
func (v *fleetView) trim(max int, entries []*hostEntry) {
	keep := make(map[string]bool, max)
	for _, e := range entries {
		if len(keep) == max {
			break
		}
		if _, ok := v.sites[e.host]; ok {
			keep[e.host] = true
		}
	}
	var rest []string
	for key := range v.sites {
		if !keep[key] {
			rest = append(rest, key)
		}
	}
	slices.SortFunc(rest, func(a, b string) int { return v.sites[b][0].ReplacedAt.Compare(v.sites[a][0].ReplacedAt) })
	for _, key := range rest[min(max-len(keep), len(rest)):] {
		delete(v.sites, key)
	}
}
