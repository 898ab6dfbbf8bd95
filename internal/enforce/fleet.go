package enforce

import (
	"net/netip"
	"slices"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// The fleet. Instances that share a storage can share what their tables
// hold (caddymodule's distributed option): each saves its own tables
// (Served.Save, Violators.Save), and reads what the others saved. What the
// others hold reaches a table as an overlay, an immutable view made off
// the request path and installed as a whole (SetFleet); lookups consult
// it after the table's own entries, without a lock of its own, and no
// request ever writes it. A table's own entries are never the overlay's:
// what it saves is what it saw itself, so that no instance echoes back
// what it read.

// Bounds of the overlays, each with its reason.
const (
	// MaxFleetServed bounds the (site, crawler) pairs a Served table holds
	// from the rest of its fleet: as many as it holds of its own
	// (DefaultMaxServed), the pairs served last kept, so that the
	// fleet's serves cost an instance no more than its own do, however
	// many instances there are.
	MaxFleetServed = DefaultMaxServed
	// MaxFleetEscalations bounds the escalations a Violators table holds
	// from the rest of its fleet, proven and not each: as many as it
	// holds of its own (DefaultMaxViolators), those begun last kept, as
	// its own ledger keeps them.
	MaxFleetEscalations = DefaultMaxViolators
)

// fleetServed is the Served overlay: the pairs the rest of the fleet
// served, merged. It is immutable once installed.
type fleetServed struct {
	pairs map[servedKey]*servedVersions
}

// SetFleet installs what the other instances of the fleet served: parts
// are the tables they saved (Served.Save), one per instance. A pair
// served within GraceWindow before now counts; a pair several instances
// hold is one pair, its versions merged (each version once, at its
// latest serve, the MaxServedVersions newest). At most MaxFleetServed
// pairs are held, those served last. No parts, or none served within the
// window, removes the overlay. It returns how many pairs it holds.
func (s *Served) SetFleet(parts [][]SavedServed, now time.Time) int {
	merged := make(map[servedKey]*servedVersions)
	for _, part := range parts {
		for i := range part {
			k, _, ok := savedServedKey(&part[i])
			if !ok || len(k.name) > maxServedToken || len(k.site) > robotstxt.MaxHostLen+len("https://") {
				continue
			}
			for _, v := range part[i].Versions {
				if age := now.Sub(v.At); age < 0 || age > robotstxt.GraceWindow || v.Hash == "" {
					continue
				}
				p := merged[k]
				if p == nil {
					p = &servedVersions{}
					merged[k] = p
				}
				p.note(v)
			}
		}
	}
	if len(merged) > MaxFleetServed {
		keys := make([]servedKey, 0, len(merged))
		for k := range merged {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b servedKey) int { return merged[b].newest().Compare(merged[a].newest()) })
		for _, k := range keys[MaxFleetServed:] {
			delete(merged, k)
		}
	}
	if len(merged) == 0 {
		s.fleet.Store(nil)
		return 0
	}
	s.fleet.Store(&fleetServed{pairs: merged})
	return len(merged)
}

// FleetLen returns how many pairs the overlay holds.
func (s *Served) FleetLen() int {
	if f := s.fleet.Load(); f != nil {
		return len(f.pairs)
	}
	return 0
}

// note adds a serve of v to p: a version p holds keeps its latest serve;
// past MaxServedVersions, the oldest serve goes, if older than v's.
func (p *servedVersions) note(v ServedVersion) {
	for i := range p.n {
		if p.v[i].Hash == v.Hash {
			if v.At.After(p.v[i].At) {
				p.v[i].At = v.At
			}
			return
		}
	}
	if p.n < MaxServedVersions {
		p.v[p.n] = v
		p.n++
		return
	}
	oldest := 0
	for i := 1; i < p.n; i++ {
		if p.v[i].At.Before(p.v[oldest].At) {
			oldest = i
		}
	}
	if v.At.After(p.v[oldest].At) {
		p.v[oldest] = v
	}
}

// newest returns the time of p's latest serve.
func (p *servedVersions) newest() time.Time {
	var t time.Time
	for _, v := range p.v[:p.n] {
		if v.At.After(t) {
			t = v.At
		}
	}
	return t
}

// fleetEscalations is the Violators overlay: the escalations in force
// that the rest of the fleet began, by key. It is immutable once
// installed.
type fleetEscalations struct {
	m map[violatorKey]*Escalation
}

// SetFleet installs the escalations the other instances of the fleet
// began: parts are the tables they saved (Violators.Save), one per
// instance. An escalation counts while in force at now. For a crawler
// escalated on several instances, the escalation begun first stands, with
// its end, fleet-wide: one begun here later is made to end with it (a
// crawler escalated on two instances at once is escalated once, and
// released at one time). At most MaxFleetEscalations proven and as many
// unproven are held, those begun last. It returns how many it holds.
func (v *Violators) SetFleet(parts [][]EscalatedCrawler, now time.Time) int {
	merged := make(map[violatorKey]*Escalation)
	var proven, unproven []violatorKey
	for _, part := range parts {
		for _, s := range part {
			k, ok := savedViolatorKey(&s)
			if !ok || !now.Before(s.Until) || s.Until.Sub(s.Since) <= 0 {
				continue
			}
			if old, held := merged[k]; held && !s.Since.Before(old.Since) {
				continue // the earlier stands
			} else if !held {
				if k.addr.IsValid() {
					unproven = append(unproven, k)
				} else {
					proven = append(proven, k)
				}
			}
			merged[k] = &Escalation{Since: s.Since, Until: s.Until, Site: s.Site, URI: truncate(s.URI, maxEscalationURI),
				Versions: slices.Clone(s.Versions)}
		}
	}
	for _, keys := range [][]violatorKey{proven, unproven} {
		if len(keys) <= MaxFleetEscalations {
			continue
		}
		slices.SortFunc(keys, func(a, b violatorKey) int { return merged[b].Since.Compare(merged[a].Since) })
		for _, k := range keys[MaxFleetEscalations:] {
			delete(merged, k)
		}
	}
	v.yieldToFleet(merged, now)
	if len(merged) == 0 {
		v.fleet.Store(nil)
		v.fleetN.Store(0)
		return 0
	}
	v.fleet.Store(&fleetEscalations{m: merged})
	v.fleetN.Store(int64(len(merged)))
	return len(merged)
}

// yieldToFleet makes each escalation of the table's own that the fleet
// began earlier end when the fleet's does. The entry is replaced, not
// written: a request may be reading the old one.
func (v *Violators) yieldToFleet(fleet map[violatorKey]*Escalation, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, f := range fleet {
		l, group := v.proven, ""
		if k.addr.IsValid() {
			l, group = v.unproven, k.addr.String()
		}
		e, ok := l.get(k)
		if !ok || !now.Before(e.Until) || !f.Since.Before(e.Since) || !f.Until.Before(e.Until) {
			continue
		}
		shorter := *e
		shorter.Until = f.Until
		l.remove(k)
		*l.put(k, group, nil) = shorter
	}
}

// fleetLookup returns the fleet's escalation of k in force at now, nil
// when there is none.
func (v *Violators) fleetLookup(k violatorKey, now time.Time) *Escalation {
	f := v.fleet.Load()
	if f == nil {
		return nil
	}
	if e := f.m[k]; e != nil && now.Before(e.Until) {
		return e
	}
	return nil
}

// earliest returns whichever of a and b began first, the one not nil.
func earliest(a, b *Escalation) *Escalation {
	if a == nil || b != nil && b.Since.Before(a.Since) {
		return b
	}
	return a
}

// FleetLen returns how many escalations the overlay holds.
func (v *Violators) FleetLen() int { return int(v.fleetN.Load()) }

// savedViolatorKey reads the key of a saved escalation (Save writes the
// site's host; a table saved before keys were hosts wrote the site).
func savedViolatorKey(s *EscalatedCrawler) (violatorKey, bool) {
	proven := s.IP == ""
	var addr netip.Addr
	if !proven {
		a, err := netip.ParseAddr(s.IP)
		if err != nil {
			return violatorKey{}, false
		}
		addr = a
	}
	return keyOf(robotstxt.SiteHost(s.Site), s.Token, addr, proven)
}
