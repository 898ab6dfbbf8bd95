package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// robotsStates holds the state of the handlers that must outlive a config
// reload, by their source settings: the robots.txt each site has in force
// and its history, who was served which version, the crawlers escalated,
// the connections of the url source. A reload provisions the new
// configuration's handlers before it cleans up the old ones, so a handler
// whose source settings are unchanged finds the state its predecessor
// left, and neither the requests caught in between nor the next ones meet
// an empty store (Caddy's reverse_proxy keeps upstream health the same
// way). The state goes when the last handler using it is cleaned up. The
// verifiers, the metric collectors and the list warnings are kept the
// same way, each in a pool of its own (see verifiers, collectors and
// warningsPool).
var robotsStates = caddy.NewUsagePool()

// sharedState is the part of a handler that outlives config reloads.
type sharedState struct {
	source    robotstxt.Source
	store     *robotstxt.Store   // source, when it is a Store (upstream and url sources)
	upstream  *upstreamFetcher   // the upstream source's fetcher, bound to each site's route by siteFetcher
	served    *enforce.Served    // who was served which robots.txt
	violators *enforce.Violators // the crawlers escalated for a violation
	transport *http.Transport    // closes its idle connections with the state
	// logger is the newest handler's, which the source's change reports
	// (StoreConfig.OnChange) are written to.
	logger atomic.Pointer[zap.Logger]
	// persist saves the state in Caddy's storage, and sync runs its
	// writes and, with distributed, its reads of the fleet's parts; nil
	// without a storage.
	persist *persister
	sync    *fleetSync
}

// changes returns the change counts of the store and of the served and
// violators tables.
func (s *sharedState) changes() (store, served int64) {
	if s.store != nil {
		store = s.store.Changes()
	}
	return store, s.served.Changes() + s.violators.Changes()
}

// log returns the logger of the newest handler using the state.
func (s *sharedState) log() *zap.Logger {
	if l := s.logger.Load(); l != nil {
		return l
	}
	return zap.NewNop()
}

// Destruct implements caddy.Destructor: the last handler using the state
// is gone.
func (s *sharedState) Destruct() error {
	if s.sync != nil {
		s.sync.finish()
	}
	var err error
	if s.source != nil {
		err = s.source.Close()
	}
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
	return err
}

// stateKey names the state a handler shares with the handlers of earlier
// and later configurations: the settings that shape its source. Two
// handlers with the same settings share one store even in two sites,
// which is sound since a store keys each site by its origin, and the
// route each site's robots.txt is fetched through comes with the site's
// own requests (see siteRoute).
func (h *Handler) stateKey() (string, error) {
	settings := struct {
		Source       *Source
		Unreachable  string
		Refresh      caddy.Duration
		MaxSize      ByteSize
		FetchTimeout caddy.Duration
		MaxHosts     int
		NewHosts     *NewHosts
		MaxMemory    ByteSize `json:",omitempty"` // left out at its default, so that the key of a state saved before stays
	}{h.Source, h.Unreachable, h.Refresh, h.MaxSize, h.FetchTimeout, h.MaxHosts, h.NewHosts, h.MaxMemory}
	b, err := json.Marshal(settings)
	if err != nil {
		return "", fmt.Errorf("robots_enforce state key: %w", err)
	}
	sum := sha256.Sum256(b)
	return "robots_enforce/state/" + hex.EncodeToString(sum[:16]), nil
}

// loadState returns the state for the handler's settings, building it
// when no handler has it.
func (h *Handler) loadState(storage certmagic.Storage) (*sharedState, error) {
	key, err := h.stateKey()
	if err != nil {
		return nil, err
	}
	v, loaded, err := robotsStates.LoadOrNew(key, func() (caddy.Destructor, error) {
		st := &sharedState{served: enforce.NewServed(0), violators: enforce.NewViolators(0)}
		st.logger.Store(h.warnings)
		if storage != nil {
			st.persist = newPersister(storage, key, st.log)
		}
		if err := h.buildSource(st); err != nil {
			return nil, err
		}
		if st.persist != nil {
			st.persist.open(st)
			st.sync = newFleetSync(st)
			if h.Distributed != nil {
				// The first requests are judged with the fleet's view.
				st.sync.readPass(firstReadTimeout)
			}
			st.sync.start()
		}
		return st, nil
	})
	if err != nil {
		return nil, err
	}
	st := v.(*sharedState)
	// A reload finds its predecessor's file source: it reads the file now,
	// so that an operator who edited it and reloaded has it in force at
	// once, not when the source's next look comes due.
	if fs, ok := st.source.(*robotstxt.FileSource); ok && loaded {
		if err := fs.Recheck(); err != nil {
			robotsStates.Delete(key) // this handler's use, which Cleanup will not see
			return nil, fmt.Errorf("robots.txt source file %s: %w", h.Source.Path, err)
		}
	}
	h.hold(func() error {
		if st.store != nil {
			h.metrics.gauges.removeStore(st.store)
		}
		_, err := robotsStates.Delete(key)
		return err
	})
	st.logger.Store(h.warnings)
	if st.sync != nil {
		release := st.sync.use(h.Distributed)
		h.metrics.fleet.add(st.sync)
		h.hold(func() error {
			h.metrics.fleet.remove(st.sync)
			release()
			return nil
		})
	} else if h.Distributed != nil {
		h.warnings.Warn("distributed needs Caddy's storage, and this configuration has none: each instance judges by what it saw")
	}
	return st, nil
}
