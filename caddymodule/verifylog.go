package caddymodule

import (
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// warningsPool holds the process's one listWarnings, under
// listWarningsName, for as long as a handler uses it.
var warningsPool = caddy.NewUsagePool()

// listWarningsName names the listWarnings in warningsPool.
const listWarningsName = "robots_enforce/verify/list_warnings"

// listWarnings says that a range list cannot be had once per source, not
// once per verifier that uses it: every handler of a different verify
// configuration has a verifier of its own, and a server with no network
// would otherwise log a warning per list per handler. A source warns
// again once it has loaded and failed anew. It lives in warningsPool,
// shared by the handlers of every configuration.
type listWarnings struct {
	mu     sync.Mutex
	failed map[string]bool // by source URL or path
}

// Destruct implements caddy.Destructor.
func (*listWarnings) Destruct() error { return nil }

// loadListWarnings returns the process's listWarnings; releaseListWarnings
// lets go of it.
func loadListWarnings() *listWarnings {
	w, _, _ := warningsPool.LoadOrNew(listWarningsName, func() (caddy.Destructor, error) {
		return &listWarnings{failed: make(map[string]bool)}, nil
	})
	return w.(*listWarnings)
}

func releaseListWarnings() { _, _ = warningsPool.Delete(listWarningsName) }

// event logs what a verifier's list event says an operator should know: a
// list that cannot be had, once per source until it loads again, and that
// it loaded again.
func (w *listWarnings) event(log *zap.Logger, ev verify.Event) {
	w.mu.Lock()
	first := ev.Kind == verify.EventListFailed && !w.failed[ev.URL]
	again := ev.Kind == verify.EventListLoaded && w.failed[ev.URL]
	switch ev.Kind {
	case verify.EventListFailed:
		w.failed[ev.URL] = true
	case verify.EventListLoaded:
		delete(w.failed, ev.URL)
	}
	w.mu.Unlock()
	fields := []zap.Field{zap.String("list", ev.List), zap.String("source", ev.URL), zap.Strings("tokens", ev.Tokens)}
	switch {
	case first && ev.Kept:
		log.Warn("crawler range list cannot be read: its last good copy stays in force until it reads", append(fields, zap.Error(ev.Err))...)
	case first:
		log.Warn("crawler range list cannot be had: claims of its tokens stay unconfirmed until it loads", append(fields, zap.Error(ev.Err))...)
	case again:
		log.Info("crawler range list loaded again", append(fields, zap.Int("prefixes", ev.Prefixes))...)
	}
}
