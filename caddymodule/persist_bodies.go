package caddymodule

import (
	"context"
	"fmt"
	"time"
)

// The bodies of new robots.txt versions wait in the persister until they
// are stored under robots_enforce/bodies/ and named by a document written:
// the fetch that found one hands it over and goes on (it never waits for
// the storage), and the state's goroutine stores it, at once, before the
// document that names it.

// pendingBody is the body of a new version, stored or not yet, not yet
// named by a document written.
type pendingBody struct {
	sum      string
	body     []byte
	stored   bool
	storedAt time.Time
}

// keepBody keeps a new version's body until it is stored and named by a
// document written (robotstxt.StoreConfig.OnVersion): it never waits for
// the storage.
func (p *persister) keepBody(sum string, body []byte) {
	p.pendingMu.Lock()
	for _, pb := range p.pending {
		if pb.sum == sum {
			p.pendingMu.Unlock()
			return
		}
	}
	p.pending = append(p.pending, pendingBody{sum: sum, body: body})
	p.pendingBytes += len(body)
	for len(p.pending) > maxPendingBodies || p.pendingBytes > maxPendingBytes && len(p.pending) > 1 {
		p.pendingBytes -= len(p.pending[0].body)
		p.pending = p.pending[1:]
	}
	waits := p.bodyWaits
	p.pendingMu.Unlock()
	if waits != nil {
		waits()
	}
}

// storePending stores the bodies waiting; one stored long enough ago
// that a prune could take it for one no document names (pruneGrace) is
// stored again.
func (p *persister) storePending(ctx context.Context, now time.Time) error {
	p.pendingMu.Lock()
	var todo []pendingBody
	for _, pb := range p.pending {
		if !pb.stored || now.Sub(pb.storedAt) > pruneGrace/2 {
			todo = append(todo, pb)
		}
	}
	p.pendingMu.Unlock()
	for _, pb := range todo {
		if err := p.storage.Store(ctx, bodyKey(pb.sum), pb.body); err != nil {
			return fmt.Errorf("storing the body of robots.txt version %s: %w", pb.sum, err)
		}
		p.pendingMu.Lock()
		for i := range p.pending {
			if p.pending[i].sum == pb.sum {
				p.pending[i].stored, p.pending[i].storedAt = true, now
			}
		}
		p.pendingMu.Unlock()
	}
	return nil
}

// namedPending lets go of the bodies stored before a document was
// written: it names those still in use.
func (p *persister) namedPending(stored map[string]bool) {
	p.pendingMu.Lock()
	defer p.pendingMu.Unlock()
	kept := p.pending[:0]
	for _, pb := range p.pending {
		if stored[pb.sum] {
			p.pendingBytes -= len(pb.body)
			continue
		}
		kept = append(kept, pb)
	}
	clear(p.pending[len(kept):])
	p.pending = kept
}

// storedPending returns the sums of the bodies stored so far.
func (p *persister) storedPending() map[string]bool {
	p.pendingMu.Lock()
	defer p.pendingMu.Unlock()
	m := make(map[string]bool)
	for _, pb := range p.pending {
		if pb.stored {
			m[pb.sum] = true
		}
	}
	return m
}
