package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// What the handler knows of each site's robots.txt, and who was served
// which version, outlives a restart: it is saved in Caddy's storage (the
// data directory, or the storage module configured), as one JSON document
// per state (see savedState) and the robots.txt bodies it names.
// Keys are under robots_enforce/<instance>/<state>/, so that instances
// sharing a storage do not overwrite each other.
const (
	// saveInterval is how often the state is saved when it changed: a
	// crash loses at most this much, and a busy site writes one small
	// document a minute.
	saveInterval = time.Minute
	// maxSavedState bounds the state document read back: the store and
	// the served table are bounded (MaxHosts sites of MaxVersions
	// versions, DefaultMaxServed pairs), to a few megabytes; a larger
	// document is not one this handler wrote.
	maxSavedState = 64 << 20
	// saveTimeout bounds one save or load against a slow storage.
	saveTimeout = 30 * time.Second
)

// savedFormat is the version of the savedState layout. A state of another
// format is not restored: the handler starts empty, as on a first start.
const savedFormat = 1

// savedState is the document a sharedState is saved as: each part's own
// saved form (robotstxt.Store.Save, enforce.Served.Save,
// enforce.Violators.Save). It holds no robots.txt bodies: a version names
// its body by SHA-256, and the bodies are kept beside the document. Its
// size is bounded by the bounds of the store and the tables.
type savedState struct {
	Format    int                        `json:"format"`
	SavedAt   time.Time                  `json:"saved_at"`
	Sites     []robotstxt.SavedSite      `json:"sites,omitempty"`
	Served    []enforce.SavedServed      `json:"served,omitempty"`
	Escalated []enforce.EscalatedCrawler `json:"escalated,omitempty"`
}

// persister saves and restores a sharedState.
type persister struct {
	storage certmagic.Storage
	prefix  string // ends with "/"
	log     func() *zap.Logger

	stop chan struct{}
	done sync.WaitGroup

	mu          sync.Mutex // serialises saves
	savedStore  int64      // the store's and the table's change counts at the last save
	savedServed int64
}

func newPersister(storage certmagic.Storage, stateName string, log func() *zap.Logger) *persister {
	name := strings.TrimPrefix(stateName, "robots_enforce/state/")
	id, err := caddy.InstanceID()
	instance := "default"
	if err == nil {
		instance = id.String()
	}
	return &persister{storage: storage, prefix: path.Join("robots_enforce", instance, name) + "/", log: log, stop: make(chan struct{})}
}

func (p *persister) stateKey() string          { return p.prefix + "state.json" }
func (p *persister) bodyKey(sum string) string { return p.prefix + "bodies/" + sum }

// keepBody saves a new version's body (robotstxt.StoreConfig.OnVersion).
func (p *persister) keepBody(sum string, body []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	if err := p.storage.Store(ctx, p.bodyKey(sum), body); err != nil {
		p.log().Warn("saving a robots.txt version", zap.String("sum", sum), zap.Error(err))
	}
}

// restore loads the saved state into st. A missing document is a first
// start; one that cannot be read is ignored with a warning, and the state
// starts empty.
func (p *persister) restore(st *sharedState) {
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	b, err := p.storage.Load(ctx, p.stateKey())
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	saved, err := decodeState(b, err)
	if err != nil {
		p.log().Warn("ignoring the saved robots.txt state", zap.String("key", p.stateKey()), zap.Error(err))
		return
	}
	now := time.Now()
	sites := 0
	if st.store != nil {
		sites = st.store.Restore(saved.Sites, func(sum string) ([]byte, bool) {
			if !isHexSum(sum) {
				return nil, false
			}
			b, err := p.storage.Load(ctx, p.bodyKey(sum))
			return b, err == nil
		}, now)
	}
	st.served.Restore(saved.Served, now)
	st.violators.Restore(saved.Escalated, now)
	p.savedStore, p.savedServed = st.changes()
	p.log().Info("robots.txt state restored", zap.String("key", p.stateKey()), zap.Int("sites", sites),
		zap.Int("served", len(saved.Served)), zap.Int("escalated", st.violators.Len()), zap.Time("saved_at", saved.SavedAt))
}

// decodeState reads a saved document.
func decodeState(b []byte, err error) (*savedState, error) {
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
	if saved.Format != savedFormat {
		return nil, fmt.Errorf("format %d, want %d", saved.Format, savedFormat)
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

// start saves the state every saveInterval while it changes, until
// finish.
func (p *persister) start(st *sharedState) {
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		defer func() {
			if v := recover(); v != nil {
				p.log().Error("panic saving the robots.txt state", zap.Any("panic", v), zap.Stack("stack"))
			}
		}()
		t := time.NewTicker(saveInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.save(st)
			}
		}
	}()
}

// finish stops the saves and saves once more.
func (p *persister) finish(st *sharedState) {
	close(p.stop)
	p.done.Wait()
	p.save(st)
}

// save writes the state when it changed since the last save, and deletes
// the bodies no saved version names any more.
func (p *persister) save(st *sharedState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	storeChanges, servedChanges := st.changes()
	if storeChanges == p.savedStore && servedChanges == p.savedServed {
		return
	}
	now := time.Now()
	saved := savedState{Format: savedFormat, SavedAt: now, Served: st.served.Save(), Escalated: st.violators.Save(now)}
	if st.store != nil {
		saved.Sites = st.store.Save()
	}
	b, err := json.Marshal(saved)
	if err != nil {
		p.log().Warn("encoding the robots.txt state", zap.Error(err))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	if err := p.storage.Store(ctx, p.stateKey(), b); err != nil {
		p.log().Warn("saving the robots.txt state", zap.String("key", p.stateKey()), zap.Error(err))
		return
	}
	p.savedStore, p.savedServed = storeChanges, servedChanges
	p.pruneBodies(ctx, saved.Sites, saved.SavedAt)
}

// pruneBodies deletes the bodies of versions no site has any more, that
// were stored before the state was taken (a body stored since may be of a
// version being published).
func (p *persister) pruneBodies(ctx context.Context, sites []robotstxt.SavedSite, before time.Time) {
	keys, err := p.storage.List(ctx, p.prefix+"bodies", false)
	if err != nil {
		return // none yet, or a storage that cannot list: nothing to prune
	}
	named := make(map[string]bool)
	for _, s := range sites {
		for _, v := range s.Versions {
			named[p.bodyKey(v.Sum)] = true
		}
	}
	for _, k := range keys {
		if named[k] {
			continue
		}
		if info, err := p.storage.Stat(ctx, k); err == nil && info.Modified.Before(before) {
			_ = p.storage.Delete(ctx, k)
		}
	}
}
