package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// What the handler knows of each site's robots.txt, who was served which
// version and who is escalated outlives a restart: each instance saves it
// in Caddy's storage (the data directory, or the storage module
// configured) as its own part (see part.go), one JSON document
// (savedState) beside its lease, and the robots.txt bodies the document
// names, by SHA-256, under robots_enforce/bodies/, where every instance
// and state shares them: a body is the same whoever fetched it. A part is
// written when it changed, every minute (every write_interval with
// distributed), at once when an escalation begins or a new version's
// body waits, and when Caddy stops; its lease is renewed with every
// write. Writes run on the state's own goroutine (fleet_sync.go): a slow
// or failing storage never holds a request or a fetch.
const (
	// saveInterval is how often the part is written when it changed,
	// without distributed: a crash loses at most this much but for
	// escalations, written at once.
	saveInterval = time.Minute
	// maxSavedState bounds a document read back: the store and the
	// tables are bounded (MaxHosts sites of MaxVersions versions,
	// DefaultMaxServed pairs, DefaultMaxViolators escalations of each
	// kind), to a few megabytes; a larger document is not one this
	// handler wrote.
	maxSavedState = 64 << 20
	// saveTimeout bounds one write or read of the state against a slow
	// storage.
	saveTimeout = 30 * time.Second
	// finishTimeout bounds the last write when the state goes: a reload
	// or a stop waits for it.
	finishTimeout = 10 * time.Second
	// maxPendingBodies and maxPendingBytes bound the bodies of new
	// versions waiting to be stored, and to be named by a document
	// written: while the storage fails, the newest are kept, and a
	// version whose body was let go is restored by no one.
	maxPendingBodies = 64
	maxPendingBytes  = 32 << 20
)

// Formats of savedState. A document of another format is not restored:
// the handler starts empty, as on a first start.
const (
	// legacyFormat is the layout before parts, one document per instance
	// id under robots_enforce/<instance id>/<state>/state.json: read once,
	// by the first instance of that id whose part is new, and deleted once
	// its own part is written.
	legacyFormat = 1
	// partFormat is a part's document.
	partFormat = 2
)

// savedState is the document a sharedState is saved as: each table's own
// saved form (robotstxt.Store.Save, enforce.Served.Save,
// enforce.Violators.Save), never what it holds of the fleet's. It holds
// no robots.txt bodies: a version names its body by SHA-256. Its size is
// bounded by the bounds of the store and the tables.
type savedState struct {
	Format    int                        `json:"format"`
	SavedAt   time.Time                  `json:"saved_at"`
	Sites     []robotstxt.SavedSite      `json:"sites,omitempty"`
	Served    []enforce.SavedServed      `json:"served,omitempty"`
	Escalated []enforce.EscalatedCrawler `json:"escalated,omitempty"`
}

// persister writes and restores the part of a sharedState.
type persister struct {
	storage  certmagic.Storage
	state    string // the state's name (see stateKey)
	instance string // Caddy's instance id, "" when it has none
	base     string // this instance's first part name
	log      func() *zap.Logger

	mu   sync.Mutex // serialises writes, claims and releases
	self lease
	part string
	// wrote says the part's document was written since it was taken;
	// savedStore and savedServed are the change counts it was written at.
	wrote                   bool
	savedStore, savedServed int64
	// legacy is the prefix of the layout before parts restored from, to
	// delete once the part is written; "" when none.
	legacy string

	pendingMu    sync.Mutex
	pending      []pendingBody // oldest first
	pendingBytes int
	// bodyWaits, when set, is told that a body waits (the writer writes
	// at once).
	bodyWaits func()
}

// newPersister returns the persister of the state named stateName (see
// stateKey), for this instance: Caddy's instance id and this host.
func newPersister(storage certmagic.Storage, stateName string, log func() *zap.Logger) *persister {
	instance := ""
	if id, err := caddy.InstanceID(); err == nil {
		instance = id.String()
	}
	return newPersisterOf(storage, path.Base(stateName), instance, log)
}

// newPersisterOf returns the persister of state for the instance of id
// instance on this host.
func newPersisterOf(storage certmagic.Storage, state, instance string, log func() *zap.Logger) *persister {
	return &persister{storage: storage, state: state, instance: instance, base: partBaseName(instance), log: log,
		self: newLease(saveInterval, time.Now())}
}

func (p *persister) docKey() string { return partDocKey(p.state, p.part) }

// currentPart returns the name of the part written.
func (p *persister) currentPart() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.part
}

// open takes the instance's part (see claimPart) and restores what it
// holds into st; for a new part, the document of the layout before parts,
// once. A part that cannot be read is a first start: st stays empty.
func (p *persister) open(st *sharedState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	c := claimPart(ctx, p.storage, p.state, p.base, &p.self, nil, time.Now())
	p.part = c.part
	logShared(p.log(), p.state, c.held, &p.self, c.part)
	if c.err != nil {
		p.log().Warn("claiming the robots.txt state's part without reading who holds it", zap.String("part", c.part), zap.Error(c.err))
	}
	b, err := p.storage.Load(ctx, p.docKey())
	if errors.Is(err, fs.ErrNotExist) {
		p.restoreLegacy(ctx, st)
		return
	}
	saved, err := decodeState(b, err, partFormat)
	if err != nil {
		p.log().Warn("ignoring the saved robots.txt state", zap.String("key", p.docKey()), zap.Error(err))
		return
	}
	p.apply(ctx, st, saved, p.docKey(), nil)
}

// restoreLegacy restores the document of the layout before parts, if
// there is one for Caddy's instance id: its bodies are copied to the
// shared ones, and it is deleted once the part is written.
func (p *persister) restoreLegacy(ctx context.Context, st *sharedState) {
	if p.instance == "" {
		return
	}
	prefix := path.Join("robots_enforce", p.instance, p.state)
	key := prefix + "/state.json"
	b, err := p.storage.Load(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	saved, err := decodeState(b, err, legacyFormat)
	if err != nil {
		p.log().Warn("ignoring the saved robots.txt state", zap.String("key", key), zap.Error(err))
		return
	}
	p.legacy = prefix
	p.apply(ctx, st, saved, key, func(sum string) ([]byte, bool) {
		b, err := p.storage.Load(ctx, prefix+"/bodies/"+sum)
		if err != nil {
			return nil, false
		}
		p.keepBody(sum, b)
		return b, true
	})
}

// apply restores saved into st; a version's body is read from the shared
// bodies, or else from legacy when set.
func (p *persister) apply(ctx context.Context, st *sharedState, saved *savedState, key string, legacy func(string) ([]byte, bool)) {
	now := time.Now()
	sites := 0
	if st.store != nil {
		sites = st.store.Restore(saved.Sites, func(sum string) ([]byte, bool) {
			if !isHexSum(sum) {
				return nil, false
			}
			if b, err := p.storage.Load(ctx, bodyKey(sum)); err == nil {
				return b, true
			}
			if legacy != nil {
				return legacy(sum)
			}
			return nil, false
		}, now)
	}
	st.served.Restore(saved.Served, now)
	st.violators.Restore(saved.Escalated, now)
	p.savedStore, p.savedServed = st.changes()
	p.wrote = legacy == nil // a legacy state is written to the part at once
	p.log().Info("robots.txt state restored", zap.String("key", key), zap.Int("sites", sites),
		zap.Int("served", len(saved.Served)), zap.Int("escalated", st.violators.OwnLen()), zap.Time("saved_at", saved.SavedAt))
}

// decodeState reads a saved document of the given format.
func decodeState(b []byte, err error, format int) (*savedState, error) {
	if err != nil {
		return nil, err
	}
	if len(b) > maxSavedState {
		return nil, fmt.Errorf("%d octets, more than the %d a state can take", len(b), maxSavedState)
	}
	var saved savedState
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, fmt.Errorf("not a saved state: %w", err)
	}
	if saved.Format != format {
		return nil, fmt.Errorf("format %d, want %d", saved.Format, format)
	}
	return &saved, nil
}

func isHexSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// write writes st's part when it changed, and renews the lease, the
// lease renewed every period. It first reads the lease back: when another
// process took the part over, it logs so and moves to a part of its own
// (see part.go). The bodies waiting are stored first, so that no
// document names a body the storage lacks.
func (p *persister) write(ctx context.Context, st *sharedState, period time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, saveTimeout)
	defer cancel()
	now := time.Now()
	p.self.Period = period.Milliseconds()
	if err := p.checkHeld(ctx, now); err != nil {
		return err
	}
	storeChanges, servedChanges := st.changes()
	changed := !p.wrote || storeChanges != p.savedStore || servedChanges != p.savedServed
	if err := p.storePending(ctx, now); err != nil {
		return err
	}
	stored := p.storedPending()
	if changed {
		saved := savedState{Format: partFormat, SavedAt: now, Served: st.served.Save(), Escalated: st.violators.Save(now)}
		if st.store != nil {
			saved.Sites = st.store.Save()
		}
		b, err := json.Marshal(saved)
		if err != nil {
			return fmt.Errorf("encoding the robots.txt state: %w", err)
		}
		if err := p.storage.Store(ctx, p.docKey(), b); err != nil {
			return fmt.Errorf("writing the robots.txt state: %w", err)
		}
		p.self.Written = now
	}
	p.self.Renewed = now
	if err := storeLease(ctx, p.storage, p.state, p.part, &p.self); err != nil {
		return fmt.Errorf("renewing the robots.txt state's lease: %w", err)
	}
	if changed {
		p.wrote, p.savedStore, p.savedServed = true, storeChanges, servedChanges
		p.namedPending(stored)
		if p.legacy != "" {
			deleteAll(ctx, p.storage, p.legacy)
			p.legacy = ""
		}
	}
	return nil
}

// checkHeld checks that this process still holds its part; when another
// took it over, it takes a part of its own (without restoring it: the
// state is in memory), whose document the write then writes.
func (p *persister) checkHeld(ctx context.Context, now time.Time) error {
	l, err := loadLease(ctx, p.storage, p.state, p.part)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // a first write, or a part purged: this process's to write
	case err != nil:
		return fmt.Errorf("reading the robots.txt state's lease: %w", err)
	case l.Nonce == p.self.Nonce:
		return nil
	}
	taken := p.part
	c := claimPart(ctx, p.storage, p.state, p.base, &p.self, map[string]bool{taken: true}, now)
	p.log().Error("another live caddy took over this instance's robots_enforce state part: two instances share one identity",
		zap.String("state", p.state), zap.String("part", taken), zap.String("part_taken", c.part),
		zap.String("other_host", l.Host), zap.Int("other_pid", l.PID), zap.Time("other_started", l.Started),
		zap.String("host", p.self.Host), zap.Int("pid", p.self.PID),
		zap.String("fix", "give each instance a host name of its own, or a data directory of its own (its instance.uuid names it)"))
	p.part, p.wrote = c.part, false
	return c.err
}

// release writes the part a last time and gives its lease back, so that
// the instance's next start takes it over at once, within finishTimeout.
func (p *persister) release(st *sharedState, period time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	err := p.write(ctx, st, period)
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, lerr := loadLease(ctx, p.storage, p.state, p.part); lerr == nil && l.Nonce != p.self.Nonce {
		return err // another's now: not ours to give back
	}
	p.self.Released = true
	return errors.Join(err, storeLease(ctx, p.storage, p.state, p.part, &p.self))
}

// deleteAll deletes the keys under prefix, and prefix.
func deleteAll(ctx context.Context, storage certmagic.Storage, prefix string) {
	if keys, err := storage.List(ctx, prefix, true); err == nil {
		for i := len(keys) - 1; i >= 0; i-- {
			_ = storage.Delete(ctx, keys[i])
		}
	}
	_ = storage.Delete(ctx, prefix)
}
