package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// Parts and bodies no one needs any more are deleted, by whichever
// instance comes to them first: a part of an instance gone (its lease not
// renewed) for partPurgeAge that holds no escalation in force, and a body
// that no part of any state names.

// Ages and bounds of purging, each with its reason.
const (
	// partPurgeAge is how long an instance must be gone before its part
	// is deleted: the versions it had in force and the serves it saw
	// count for GraceWindow, 24 hours (RFC 9309 §2.4); a part holding an
	// escalation in force is kept until its end (violators for, at most
	// 30 days), so that a violator escalated on an instance since
	// replaced stays escalated on the others.
	partPurgeAge = robotstxt.GraceWindow
	// purgeInterval is how often an instance looks for parts and bodies
	// to delete: they only cost storage meanwhile.
	purgeInterval = time.Hour
	// pruneGrace is how long a body is kept after it was stored, named or
	// not: an instance stores a new version's body, then the document
	// that names it, and a body stored moments ago may be named soon.
	pruneGrace = time.Hour
	// maxPruneParts bounds the parts read to know which bodies are named:
	// past it, no body is deleted.
	maxPruneParts = 1024
)

// purgeParts deletes the parts of every state, but self's part of
// state, whose instance has been gone for partPurgeAge at now and that
// hold no escalation in force: those of settings no instance uses any
// more too. It returns how many it deleted.
func purgeParts(ctx context.Context, storage certmagic.Storage, state, self string, now time.Time) (int, error) {
	states, err := storage.List(ctx, fleetPrefix, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	purged := 0
	for _, s := range states {
		if name := path.Base(s); validPartName(name) {
			own := ""
			if name == state {
				own = self
			}
			n, err := purgeState(ctx, storage, name, own, now)
			purged += n
			if err != nil {
				return purged, err
			}
		}
	}
	return purged, nil
}

// purgeState is purgeParts for the parts of one state, but self.
func purgeState(ctx context.Context, storage certmagic.Storage, state, self string, now time.Time) (int, error) {
	keys, err := storage.List(ctx, path.Join(fleetPrefix, state), false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	purged := 0
	for _, k := range keys {
		name := path.Base(k)
		if name == self || !validPartName(name) {
			continue
		}
		var since time.Time
		l, err := loadLease(ctx, storage, state, name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// No lease: its document's time says when it was written.
			info, err := storage.Stat(ctx, partDocKey(state, name))
			if err != nil {
				continue
			}
			since = info.Modified
		case err != nil:
			continue
		default:
			since = l.Renewed
		}
		if now.Sub(since) < partPurgeAge {
			continue
		}
		b, err := storage.Load(ctx, partDocKey(state, name))
		if doc, err := decodeState(b, err, partFormat); err == nil && holdsEscalation(doc, now) {
			continue
		}
		deleteAll(ctx, storage, partPrefix(state, name))
		purged++
	}
	return purged, nil
}

// holdsEscalation reports whether doc holds an escalation in force at now.
func holdsEscalation(doc *savedState, now time.Time) bool {
	for _, e := range doc.Escalated {
		if now.Before(e.Until) {
			return true
		}
	}
	return false
}

// pruneBodies deletes the bodies no part of any state names, stored
// pruneGrace or longer before now. A part whose document cannot be read
// for a reason other than its absence stops it: the bodies it names are
// not known. It returns how many it deleted.
func pruneBodies(ctx context.Context, storage certmagic.Storage, now time.Time) (int, error) {
	named := make(map[string]bool)
	states, err := storage.List(ctx, fleetPrefix, false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	read := 0
	for _, s := range states {
		parts, err := storage.List(ctx, s, false)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		for _, p := range parts {
			if read++; read > maxPruneParts {
				return 0, fmt.Errorf("more than %d parts: no body is deleted", maxPruneParts)
			}
			b, err := storage.Load(ctx, p+"/state.json")
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			doc, err := decodeState(b, err, partFormat)
			if err != nil {
				return 0, fmt.Errorf("reading %s: %w", p, err)
			}
			for _, site := range doc.Sites {
				for _, v := range site.Versions {
					named[v.Sum] = true
				}
			}
		}
	}
	bodies, err := storage.List(ctx, bodiesPrefix, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, k := range bodies {
		if named[path.Base(k)] {
			continue
		}
		if info, err := storage.Stat(ctx, k); err == nil && now.Sub(info.Modified) >= pruneGrace {
			if storage.Delete(ctx, k) == nil {
				deleted++
			}
		}
	}
	return deleted, nil
}
