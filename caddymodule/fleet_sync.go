package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// fleetSync is the goroutine of a state that has a storage: it writes the
// instance's part (every minute when it changed, at once when an
// escalation begins or a new version's body waits), and, with
// distributed, writes it every write_interval and reads the others' parts
// every read_interval; it purges what no one needs any more every hour.
// It alone talks to the storage once the state is built: a storage that
// is slow, failing, locked or read-only holds this goroutine, never a
// request, and the metrics (fleet_metrics.go) and a log line at most once
// a minute say how stale the view and the part are.
type fleetSync struct {
	st  *sharedState
	p   *persister
	log func() *zap.Logger

	mu       sync.Mutex
	uses     map[*Distributed]int // the distributed settings of the handlers using the state
	settings atomic.Pointer[fleetSettings]

	kick, wake, stop chan struct{}
	done             sync.WaitGroup
	// ctx bounds the loop's reads and writes: canceled when the state
	// goes, so that a hung storage does not hold a reload.
	ctx    context.Context
	cancel context.CancelFunc

	// reader reads the others' parts; the loop's alone, made when
	// distributed is first on (or by the first read, before the loop).
	reader *fleetReader

	// What the metrics read.
	viewAt, partAt          atomic.Int64 // Unix nanoseconds of the last whole read, and of the last write; 0: never
	readErrors, writeErrors atomic.Uint64
	parts                   atomic.Int64

	// staleSince is when the storage last began to fail, zero while it
	// works; loggedAt when that was last logged. The loop's alone.
	staleSince, loggedAt time.Time
	created              time.Time
}

// fleetSettings are the intervals the handlers using a state ask for.
type fleetSettings struct {
	distributed bool
	read, write time.Duration
}

// staleLogEvery bounds the log lines a failing storage causes: one a
// minute at most, whatever the intervals.
const staleLogEvery = time.Minute

// firstReadTimeout bounds the read of the others' parts when a state is
// built with distributed on: Caddy's start waits for it, so that the
// first requests are judged with the fleet's view.
const firstReadTimeout = 5 * time.Second

func newFleetSync(st *sharedState) *fleetSync {
	f := &fleetSync{st: st, p: st.persist, log: st.log, uses: make(map[*Distributed]int), created: time.Now(),
		kick: make(chan struct{}, 1), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	f.settings.Store(&fleetSettings{write: saveInterval})
	f.ctx, f.cancel = context.WithCancel(context.Background())
	st.persist.bodyWaits = f.writeSoon
	st.violators.OnBegin(f.writeSoon)
	return f
}

// use records that a handler uses the state with distributed settings d
// (nil: not distributed), until the returned func is called.
func (f *fleetSync) use(d *Distributed) func() {
	if d == nil {
		return func() {}
	}
	f.mu.Lock()
	f.uses[d]++
	f.resettle()
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		if f.uses[d]--; f.uses[d] <= 0 {
			delete(f.uses, d)
		}
		f.resettle()
		f.mu.Unlock()
	}
}

// resettle sets the settings from the uses: distributed when any handler
// asks for it, at the shortest intervals any asks for. The caller holds
// mu.
func (f *fleetSync) resettle() {
	s := &fleetSettings{write: saveInterval}
	for d := range f.uses {
		read, write := d.intervals()
		if !s.distributed {
			s.read, s.write = read, write
		}
		s.distributed = true
		s.read, s.write = min(s.read, read), min(s.write, write)
	}
	f.settings.Store(s)
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// writeSoon has the part written at once, without waiting: it is called
// on the request path when an escalation begins.
func (f *fleetSync) writeSoon() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// start starts the loop.
func (f *fleetSync) start() {
	f.done.Add(1)
	go f.run()
}

// finish stops the loop, writes the part a last time and gives its lease
// back.
func (f *fleetSync) finish() {
	close(f.stop)
	f.cancel()
	f.done.Wait()
	if err := f.p.release(f.st, f.settings.Load().write); err != nil {
		f.log().Warn("saving the robots.txt state", zap.String("part", f.p.currentPart()), zap.Error(err))
	}
}

func (f *fleetSync) run() {
	defer f.done.Done()
	defer func() {
		if v := recover(); v != nil {
			f.log().Error("panic in the robots.txt state's storage loop", zap.Any("panic", v), zap.Stack("stack"))
		}
	}()
	start := time.Now()
	lastWrite, lastRead, lastPurge := start, start, start.Add(-purgeInterval+time.Minute)
	if f.viewAt.Load() == 0 {
		lastRead = time.Time{} // no first read yet: read at once
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		s := f.settings.Load()
		next := lastWrite.Add(s.write)
		if s.distributed {
			next = minTime(next, lastRead.Add(s.read))
		}
		next = minTime(next, lastPurge.Add(purgeInterval))
		timer.Reset(max(time.Until(next), 0))
		var wanted <-chan struct{}
		if s.distributed && f.st.store != nil {
			wanted = f.st.store.FleetWanted()
		}
		select {
		case <-f.stop:
			return
		case <-f.kick:
			f.writePass(s)
			lastWrite = time.Now()
		case <-f.wake:
		case <-wanted:
			f.attach()
		case <-timer.C:
			now := time.Now()
			if !now.Before(lastWrite.Add(s.write)) {
				f.writePass(s)
				lastWrite = now
			}
			if s.distributed && !now.Before(lastRead.Add(s.read)) {
				f.readPass(saveTimeout)
				lastRead = now
			}
			if !now.Before(lastPurge.Add(purgeInterval)) {
				f.purge()
				lastPurge = now
			}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// writePass writes the part (see persister.write).
func (f *fleetSync) writePass(s *fleetSettings) {
	if err := f.p.write(f.ctx, f.st, s.write); err != nil {
		f.writeErrors.Add(1)
		f.failed("write", err)
		return
	}
	f.partAt.Store(time.Now().UnixNano())
	f.recovered()
}

// readPass reads the others' parts and installs the view, within timeout.
func (f *fleetSync) readPass(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(f.ctx, timeout)
	defer cancel()
	if f.reader == nil {
		f.reader = newFleetReader(f.p.storage, f.p.state)
	}
	now := time.Now()
	partErrs, err := f.reader.read(ctx, f.p.currentPart(), now)
	if err == nil {
		f.reader.install(f.st, f.bodyLoader(ctx), now)
		f.parts.Store(int64(len(f.reader.parts)))
		if partErrs > 0 {
			err = fmt.Errorf("%d of the fleet's parts could not be read", partErrs)
		}
	}
	if err != nil {
		f.readErrors.Add(1)
		f.failed("read", err)
		return
	}
	f.viewAt.Store(now.UnixNano())
	f.recovered()
}

// attach gives the sites first published since the view was installed
// the fleet's versions.
func (f *fleetSync) attach() {
	ctx, cancel := context.WithTimeout(f.ctx, saveTimeout)
	defer cancel()
	f.st.store.AttachFleet(f.bodyLoader(ctx), time.Now())
}

// bodyLoader returns the loader of the bodies of versions, by their hex
// SHA-256, from the shared bodies; a failed read counts.
func (f *fleetSync) bodyLoader(ctx context.Context) func(string) ([]byte, bool) {
	return func(sum string) ([]byte, bool) {
		if !isHexSum(sum) {
			return nil, false
		}
		b, err := f.p.storage.Load(ctx, bodyKey(sum))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			f.readErrors.Add(1)
		}
		return b, err == nil
	}
}

// purge deletes the parts and bodies no one needs any more.
func (f *fleetSync) purge() {
	ctx, cancel := context.WithTimeout(f.ctx, saveTimeout)
	defer cancel()
	now := time.Now()
	purged, err := purgeParts(ctx, f.p.storage, f.p.state, f.p.currentPart(), now)
	if err == nil {
		var pruned int
		pruned, err = pruneBodies(ctx, f.p.storage, now)
		if purged+pruned > 0 {
			f.log().Info("deleted what no robots_enforce instance needs", zap.Int("parts", purged), zap.Int("bodies", pruned))
		}
	}
	if err != nil {
		f.log().Debug("purging the robots.txt state's storage", zap.Error(err))
	}
}

// failed notes that the storage failed op: it is logged at once, then at
// most once every staleLogEvery while it goes on failing.
func (f *fleetSync) failed(op string, err error) {
	now := time.Now()
	if f.staleSince.IsZero() {
		f.staleSince = now
	}
	if now.Sub(f.loggedAt) < staleLogEvery {
		return
	}
	f.loggedAt = now
	msg := "robots.txt fleet view is stale: the storage fails"
	if op == "write" && !f.settings.Load().distributed {
		msg = "robots.txt state not saved: the storage fails"
	}
	f.log().Warn(msg, zap.String("op", op), zap.Error(err), zap.String("part", f.p.currentPart()),
		zap.Duration("view_age", f.age(&f.viewAt, now)), zap.Duration("part_age", f.age(&f.partAt, now)),
		zap.Time("failing_since", f.staleSince))
}

// recovered notes that a pass succeeded: once both the read and the write
// have since a failure, the view is current again, and that is logged
// when the failure was.
func (f *fleetSync) recovered() {
	if f.staleSince.IsZero() {
		return
	}
	since := f.staleSince.UnixNano()
	if f.partAt.Load() < since || f.settings.Load().distributed && f.viewAt.Load() < since {
		return
	}
	if !f.loggedAt.IsZero() {
		f.log().Info("robots.txt fleet view is current again", zap.Time("failing_since", f.staleSince))
	}
	f.staleSince, f.loggedAt = time.Time{}, time.Time{}
}

// age returns how long ago the time in at was, or how long ago the state
// was built when it never was.
func (f *fleetSync) age(at *atomic.Int64, now time.Time) time.Duration {
	if t := at.Load(); t != 0 {
		return now.Sub(time.Unix(0, t))
	}
	return now.Sub(f.created)
}
