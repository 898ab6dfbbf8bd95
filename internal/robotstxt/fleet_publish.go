package robotstxt

import (
	"encoding/hex"
	"slices"
	"time"
)

// Publishing the fleet's versions: each host the store holds is published
// with the versions of the view it lacks among Earlier of its own
// snapshot, which stays the store's own (see SetFleet).

// attachFleet gives each of entries the versions of view it lacks (see
// SetFleet), and returns how many it published again and how many
// versions of theirs it left out for want of their body.
func (s *Store) attachFleet(view *fleetView, entries []*hostEntry, now time.Time) (held, missing int) {
	for _, e := range entries {
		own := e.snap.Load().ownSnapshot()
		if own == nil || own.Refusal != RefusalNone {
			continue
		}
		list, lacking := view.versionsOf(e.host, own)
		missing += lacking
		if old := e.fleet.Load(); !fleetChanged(old, list) {
			continue
		}
		if len(list) > 0 {
			held++
		}
		e.fleet.Store(&fleetVersions{list: list})
		s.republish(e)
		s.fleetRefresh(e, own, list, now)
	}
	return held, missing
}

// versionsOf returns the snapshots of the versions of host v holds that
// own is not, newest first, and how many it left out for want of their
// body parsed; none for a nil v.
func (v *fleetView) versionsOf(host string, own *Snapshot) (list []*Snapshot, lacking int) {
	if v == nil {
		return nil, 0
	}
	for _, sv := range v.sites[host] {
		if own.isSaved(sv) {
			continue // in force here
		}
		snap := v.snapshotOf(sv)
		if snap == nil {
			lacking++
			continue
		}
		list = append(list, snap)
	}
	return list, lacking
}

// snapshotOf returns the snapshot of a fleet version, from its body
// parsed, or nil when it was not.
func (v *fleetView) snapshotOf(sv SavedVersion) *Snapshot {
	access, err := parseAccess(sv.Access)
	if err != nil {
		return nil
	}
	snap := &Snapshot{
		Access: access, DisallowAll: sv.DisallowAll, Source: sv.Source, FinalURL: sv.FinalURL,
		HTTPStatus: sv.HTTPStatus, FetchedAt: sv.FetchedAt, ChangedAt: sv.ChangedAt,
		CheckedAt: sv.CheckedAt, ReplacedAt: sv.ReplacedAt,
	}
	if access != AccessAvailable {
		return snap
	}
	d, _ := digestOf(sv)
	pb := v.parsed[d]
	if pb == nil {
		return nil
	}
	base := pb.snap
	snap.Robots, snap.groups, snap.sum, snap.Hash, snap.Truncated = base.Robots, base.groups, base.sum, base.Hash, base.Truncated
	return snap
}

// isSaved reports whether sv is the version s is (see sameVersion).
func (s *Snapshot) isSaved(sv SavedVersion) bool {
	if s.Robots != nil {
		return sv.Access == AccessAvailable.String() && sv.Sum == hex.EncodeToString(s.sum[:])
	}
	return sv.Access == AccessUnavailable.String() && s.VersionName() == VersionUnavailable
}

// fleetChanged reports whether list differs from old in its versions, or
// in when one was last in force by fleetUntilStep or more.
func fleetChanged(old *fleetVersions, list []*Snapshot) bool {
	var was []*Snapshot
	if old != nil {
		was = old.list
	}
	if len(was) != len(list) {
		return true
	}
	for i, v := range list {
		w := was[i]
		if !w.sameVersion(v) || w.Access != v.Access {
			return true
		}
		if d := v.ReplacedAt.Sub(w.ReplacedAt); d >= fleetUntilStep || d <= -fleetUntilStep {
			return true
		}
	}
	return false
}

// install publishes own, a snapshot of the store's own for e, with the
// fleet's versions e has; a host first published gets those of the view
// whose bodies were parsed ahead, with no read of the storage.
func (s *Store) install(e *hostEntry, own *Snapshot) {
	if e.fleet.Load() == nil {
		if list, _ := s.fleet.Load().versionsOf(e.host, own); len(list) > 0 {
			e.fleet.Store(&fleetVersions{list: list})
		}
	}
	for {
		cur := e.snap.Load()
		if e.snap.CompareAndSwap(cur, withFleet(own, e.fleet.Load(), s.cfg.Now())) {
			return
		}
	}
}

// republish publishes e's snapshot again with the fleet's versions it has
// now. The store's own is kept as it is, whoever publishes it meanwhile:
// both read e.fleet after the snapshot they replace.
func (s *Store) republish(e *hostEntry) {
	for {
		cur := e.snap.Load()
		own := cur.ownSnapshot()
		if own == nil {
			return
		}
		if e.snap.CompareAndSwap(cur, withFleet(own, e.fleet.Load(), s.cfg.Now())) {
			return
		}
	}
}

// withFleet returns own with the versions of f it lacks among Earlier:
// own's Earlier and f merged, newest first, each version once at its
// latest time in force, at most MaxVersions-1, none replaced GraceWindow
// before now (see keepEarlier); own itself when f adds nothing.
func withFleet(own *Snapshot, f *fleetVersions, now time.Time) *Snapshot {
	if f == nil || len(f.list) == 0 {
		return own
	}
	candidates := make([]*Snapshot, 0, len(own.Earlier)+len(f.list))
	candidates = append(append(candidates, own.Earlier...), f.list...)
	// Stable: on a tie, the store's own version stands.
	slices.SortStableFunc(candidates, func(a, b *Snapshot) int { return b.ReplacedAt.Compare(a.ReplacedAt) })
	earlier := own.keepEarlier(candidates, now)
	if slices.Equal(earlier, own.Earlier) {
		return own
	}
	merged := *own
	merged.Earlier, merged.own = earlier, own
	return &merged
}

// ownSnapshot returns the snapshot of the store's own that s is, or
// extends with the fleet's versions; nil for nil.
func (s *Snapshot) ownSnapshot() *Snapshot {
	if s != nil && s.own != nil {
		return s.own
	}
	return s
}

// fleetRefresh fetches e again when a version in force elsewhere (its end
// the part's last sighting) differs from own and came into force there
// after own was last checked: the file may have changed. At most once a
// MinRefresh. When it came into force counts, not when it was last
// fetched: a site that answers each instance with another file (by
// region, say) has each refetch nothing it did not have.
func (s *Store) fleetRefresh(e *hostEntry, own *Snapshot, list []*Snapshot, now time.Time) {
	if now.Sub(own.CheckedAt) < s.cfg.MinRefresh {
		return
	}
	for _, v := range list {
		if v.ChangedAt.After(own.CheckedAt) && now.Sub(v.ReplacedAt) < fleetUntilStep {
			s.refresh(e)
			return
		}
	}
}
