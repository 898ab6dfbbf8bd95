package robotstxt

import (
	"encoding/hex"
	"slices"
)

// The fleet's bodies, parsed once by their digest: of the sites the store
// holds, and ahead, within a budget, of those it does not hold yet (see
// SetFleet).

// parseFleet parses the bodies of view's versions: of the sites of
// entries, then of the others, the sites in force last first, up to
// maxUnheldFleetBytes. A body old parsed is not parsed again.
func (s *Store) parseFleet(view, old *fleetView, entries []*hostEntry, body func(string) ([]byte, bool)) {
	view.parsed = make(map[[32]byte]*parsedBody)
	held := make(map[string]bool, len(entries))
	var keys []string
	for _, e := range entries {
		if _, ok := view.sites[e.host]; ok && !held[e.host] {
			held[e.host] = true
			keys = append(keys, e.host)
		}
	}
	rest := make([]string, 0, len(view.sites)-len(keys))
	for key := range view.sites {
		if !held[key] {
			rest = append(rest, key)
		}
	}
	slices.SortFunc(rest, func(a, b string) int { return view.sites[b][0].ReplacedAt.Compare(view.sites[a][0].ReplacedAt) })
	budget := maxUnheldFleetBytes
	for _, key := range append(keys, rest...) {
		for _, sv := range view.sites[key] {
			d, ok := digestOf(sv)
			if !ok || view.parsed[d] != nil {
				continue
			}
			pb := old.lookup(d)
			if pb == nil && (held[key] || budget > 0) {
				pb = s.parseBody(sv, d, body)
			}
			if pb == nil || !held[key] && pb.size > budget {
				continue
			}
			if !held[key] {
				budget -= pb.size
			}
			view.parsed[d] = pb
		}
	}
}

// lookup returns the body of digest d v parsed, nil when none; v may be
// nil.
func (v *fleetView) lookup(d [32]byte) *parsedBody {
	if v == nil {
		return nil
	}
	return v.parsed[d]
}

// parseBody parses the body of sv, whose digest is d, or returns nil
// when body cannot give it back, or gives back another.
func (s *Store) parseBody(sv SavedVersion, d [32]byte, body func(string) ([]byte, bool)) *parsedBody {
	b, ok := body(sv.Sum)
	if !ok {
		return nil
	}
	snap := &Snapshot{}
	snap.setFile(nil, b, sv.Truncated, s.life.maxSize)
	if snap.sum != d {
		return nil // a body that is not the version's
	}
	return &parsedBody{snap: snap, size: len(b)}
}

// digestOf returns the digest of a file version; false for no file.
func digestOf(sv SavedVersion) (d [32]byte, ok bool) {
	if sv.Access != AccessAvailable.String() {
		return d, false
	}
	n, err := hex.Decode(d[:], []byte(sv.Sum))
	return d, err == nil && n == len(d)
}
