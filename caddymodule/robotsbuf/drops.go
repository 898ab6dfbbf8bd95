package robotsbuf

import (
	"errors"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Entries dropped: a write to the inner writer that fails or is short (a
// full disk) drops the entries it did not write whole. They are counted
// in droppedEntries, on the metrics endpoint, and told in Caddy's log: at
// once the first time, then at most once per dropLogInterval with the
// count since, and once more when a write goes through again.

// dropLogInterval spaces the log lines about dropped entries: a failure
// that lasts (a disk that stays full) drops entries at every flush, a
// line each would flood the log, which may be on the same disk.
const dropLogInterval = time.Minute

// droppedEntries counts the entries the buffered writers dropped, by
// inner writer (as String names it: a configured file or address, a
// bounded set). It is made once and registered in each configuration's
// registry (registerMetrics), so that it counts on across reloads, as the
// writers themselves outlive them.
var droppedEntries = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "caddy", Subsystem: "robots_enforce", Name: "buffered_entries_dropped_total",
	Help: "Log entries robots_buffered dropped whole because its writer failed or took part of them (a full disk), by writer.",
}, []string{"writer"})

// registerMetrics registers droppedEntries in reg; already there is fine.
func registerMetrics(reg *prometheus.Registry) error {
	if reg == nil {
		return nil
	}
	err := reg.Register(droppedEntries)
	var are prometheus.AlreadyRegisteredError
	if err != nil && !(errors.As(err, &are) && are.ExistingCollector == droppedEntries) {
		return err
	}
	return nil
}

// dropReport is a writer's account of the entries it dropped. Its fields
// are guarded by the writer's mu.
type dropReport struct {
	counter prometheus.Counter
	now     func() time.Time   // the clock; tests set it
	logger  func() *zap.Logger // caddy.Log; tests set it
	total   uint64             // dropped since the writer opened
	since   uint64             // dropped since the last line
	said    time.Time          // when the last line was due
	failing bool               // the last write failed
}

func newDropReport(name string) dropReport {
	return dropReport{counter: droppedEntries.WithLabelValues(name), now: time.Now, logger: caddy.Log}
}

// dropped counts n entries dropped by err and, when a line is due, has
// the writer say it once w.mu is released. w.mu is held.
func (w *bufWriter) dropped(n int, err error) {
	d := &w.drops
	d.failing = true
	if n <= 0 {
		return
	}
	d.counter.Add(float64(n))
	d.total += uint64(n)
	d.since += uint64(n)
	now := d.now()
	if !d.said.IsZero() && now.Sub(d.said) < dropLogInterval {
		return
	}
	d.said = now
	since, total, name, log := d.since, d.total, w.name, d.logger
	d.since = 0
	w.sayLater(func() {
		log().Warn("robots_buffered: log entries dropped: their writer failed or took only part of them; "+
			"each is dropped whole, and a line it cut is ended before the next write",
			zap.String("writer", name), zap.Uint64("dropped", since), zap.Uint64("dropped_total", total), zap.Error(err))
	})
}

// wrote notes a write that went through; after failures, the writer says
// it writes again, with what it dropped since its last line. w.mu is
// held.
func (w *bufWriter) wrote() {
	d := &w.drops
	if !d.failing {
		return
	}
	d.failing = false
	since, total, name, log := d.since, d.total, w.name, d.logger
	d.since = 0
	w.sayLater(func() {
		log().Info("robots_buffered: writing again",
			zap.String("writer", name), zap.Uint64("dropped", since), zap.Uint64("dropped_total", total))
	})
}

// sayLater adds a line for the writer to say once w.mu is released, after
// those it has already. w.mu is held.
func (w *bufWriter) sayLater(line func()) {
	if prev := w.say; prev != nil {
		w.say = func() { prev(); line() }
		return
	}
	w.say = line
}
