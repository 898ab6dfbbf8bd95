package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// The fleet's view. With distributed, each instance reads the others'
// parts of its state at read_interval: their leases, and the documents
// whose lease says they were written since the last read. From them it
// makes the view its tables judge by (robotstxt.Store.SetFleet,
// enforce.Served.SetFleet, enforce.Violators.SetFleet), installed whole.
// A part it could not read keeps what was read of it last; a read that
// fails as a whole leaves the view as it was, and the view grows stale
// (see fleetSync).

// Bounds of the view, each with its reason.
const (
	// maxFleetParts bounds the other instances' parts the view is made
	// of, those renewed last: two behind a balancer, a few regions, a
	// few dozen replicas.
	maxFleetParts = 32
	// maxListedParts bounds the parts whose leases a read reads; past
	// it, the first in the storage's order.
	maxListedParts = 256
	// maxFleetBytes bounds the documents the view holds, in all: parts
	// past it are left out, those renewed first.
	maxFleetBytes = 64 << 20
	// reinstallEvery is how often the view is installed again though no
	// part changed: a version in force elsewhere is in force until the
	// part's last renewal (see robotstxt.FleetPart.Seen).
	reinstallEvery = time.Minute
)

// A fleetPart is another instance's part, as last read.
type fleetPart struct {
	lease lease
	doc   *savedState // nil when its document could not be read
	size  int
}

// fleetReader reads the other instances' parts of a state.
type fleetReader struct {
	storage certmagic.Storage
	state   string
	// parts are the parts read, by name; installed when the view was
	// last installed.
	parts     map[string]*fleetPart
	installed time.Time
	changed   bool
}

func newFleetReader(storage certmagic.Storage, state string) *fleetReader {
	return &fleetReader{storage: storage, state: state, parts: make(map[string]*fleetPart)}
}

// read reads the parts of the state but self's, at now: a lease each, and
// the documents written since they were last read. It returns the errors
// of the parts it could not read; a list that fails is an error of the
// whole read, and the parts are left as they were.
func (r *fleetReader) read(ctx context.Context, self string, now time.Time) (partErrs int, err error) {
	keys, err := r.storage.List(ctx, path.Join(fleetPrefix, r.state), false)
	if errors.Is(err, fs.ErrNotExist) {
		keys, err = nil, nil
	}
	if err != nil {
		return 0, fmt.Errorf("listing the fleet's parts: %w", err)
	}
	listed := make(map[string]bool)
	for _, k := range keys {
		if name := path.Base(k); name != self && validPartName(name) && len(listed) < maxListedParts {
			listed[name] = true
		}
	}
	for name := range r.parts {
		if !listed[name] {
			delete(r.parts, name)
			r.changed = true
		}
	}
	for name := range listed {
		if err := r.readPart(ctx, name); err != nil {
			partErrs++
		}
	}
	r.bound()
	return partErrs, nil
}

// readPart reads one part's lease, and its document when the lease says
// it was written since it was last read.
func (r *fleetReader) readPart(ctx context.Context, name string) error {
	l, err := loadLease(ctx, r.storage, r.state, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // being taken, or purged: nothing to read yet
	}
	if err != nil {
		return err
	}
	old := r.parts[name]
	if old != nil && old.doc != nil && old.lease.Written.Equal(l.Written) {
		if !old.lease.Renewed.Equal(l.Renewed) {
			old.lease = *l
		}
		return nil
	}
	b, err := r.storage.Load(ctx, partDocKey(r.state, name))
	doc, err := decodeState(b, err, partFormat)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if old != nil {
			old.lease = *l
			return err // what was read of it last stands
		}
		r.parts[name] = &fleetPart{lease: *l}
		return err
	}
	r.parts[name] = &fleetPart{lease: *l, doc: doc, size: len(b)}
	r.changed = true
	return nil
}

// bound keeps at most maxFleetParts parts, maxFleetBytes of documents in
// all, those renewed last.
func (r *fleetReader) bound() {
	if len(r.parts) <= maxFleetParts {
		total := 0
		for _, p := range r.parts {
			total += p.size
		}
		if total <= maxFleetBytes {
			return
		}
	}
	names := make([]string, 0, len(r.parts))
	for name := range r.parts {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return r.parts[b].lease.Renewed.Compare(r.parts[a].lease.Renewed) })
	total := 0
	for i, name := range names {
		total += r.parts[name].size
		if i >= maxFleetParts || total > maxFleetBytes {
			delete(r.parts, name)
			r.changed = true
		}
	}
}

// install installs the view in st's tables when a part changed since the
// view was last installed, or reinstallEvery passed, and reports what it
// holds. body loads a version's body by its hex SHA-256.
func (r *fleetReader) install(st *sharedState, body func(string) ([]byte, bool), now time.Time) (viewStats, bool) {
	if !r.changed && now.Sub(r.installed) < reinstallEvery {
		return viewStats{}, false
	}
	var (
		sites     []robotstxt.FleetPart
		served    [][]enforce.SavedServed
		escalated [][]enforce.EscalatedCrawler
	)
	for _, p := range r.parts {
		if p.doc == nil {
			continue
		}
		sites = append(sites, robotstxt.FleetPart{Sites: p.doc.Sites, Seen: p.lease.Renewed})
		served = append(served, p.doc.Served)
		escalated = append(escalated, p.doc.Escalated)
	}
	var vs viewStats
	vs.parts = len(r.parts)
	if st.store != nil {
		vs.store = st.store.SetFleet(sites, body, now)
	}
	vs.served = st.served.SetFleet(served, now)
	vs.escalated = st.violators.SetFleet(escalated, now)
	r.changed, r.installed = false, now
	return vs, true
}

// viewStats says what a view installed holds.
type viewStats struct {
	parts, served, escalated int
	store                    robotstxt.FleetStats
}
