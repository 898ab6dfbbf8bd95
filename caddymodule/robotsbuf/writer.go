package robotsbuf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"github.com/dustin/go-humanize"
	"go.uber.org/zap"
)

// A Writer is a log writer that wraps another and hands it whole log
// entries in batches: one write for many entries, where Caddy's own
// writers make one write(2) per entry. Caddy 2.11.9 has no buffered
// writer; this one is meant for the compliance records, which may come
// one for every request of a crawler that is denied.
//
// No entry is cut, merged with another or reordered on the way: each is
// written whole, in the order it came, at the latest FlushInterval after
// it came, or at once when it is larger than the buffer. An entry the
// inner writer does not take whole (a write that fails, or a full disk
// that takes part of a batch) is dropped whole, counted and told, and a
// line the inner writer cut is ended before the next write, so that no
// entry is ever run into a cut one (buffer.go, drops.go). A graceful
// stop or a reload of Caddy writes what is buffered (see Cleanup); a crash
// of the process loses at most what came in the last FlushInterval, and
// never more than BufferSize. Like Caddy's file writer it does not fsync,
// so a loss of power loses what the system had not yet stored.
//
// Its module ID bears the project's prefix: a module ID registered twice
// stops Caddy when it starts, and a buffered writer may one day come with
// Caddy or another plugin.
type Writer struct {
	// WriterRaw is the writer the entries go to, as a log's "writer"
	// is given: {"output": "file", "filename": "..."}. Required.
	WriterRaw json.RawMessage `json:"writer,omitempty" caddy:"namespace=caddy.logging.writers inline_key=output"`

	// FlushInterval is how long an entry may wait in the buffer: what a
	// crash of the process may lose. Default: 100ms; 1ms to 10s.
	FlushInterval caddy.Duration `json:"flush_interval,omitempty"`

	// BufferSize is how many octets are gathered before they are
	// written; an entry larger than it is written by itself. Default:
	// 65536 (64 KiB); 4 KiB to 16 MiB.
	BufferSize int `json:"buffer_size,omitempty"`

	inner caddy.WriterOpener
}

// Bounds and defaults of the options, each with its reason.
const (
	// defaultFlushInterval: an entry waits at most a tenth of a second,
	// which a person reading the log does not notice, and a busy server
	// writes about ten times a second instead of once per entry.
	defaultFlushInterval = 100 * time.Millisecond
	// minFlushInterval: a shorter wait would make about as many writes
	// as entries, which is what the writer is for avoiding.
	minFlushInterval = time.Millisecond
	// maxFlushInterval bounds what a crash loses, and how late a record
	// reaches whoever reads the log as it grows.
	maxFlushInterval = 10 * time.Second
	// defaultBufferSize holds about fifty compliance records of about
	// 1.2 KiB each: one write in place of fifty, in a few pages of
	// memory.
	defaultBufferSize = 64 << 10
	// minBufferSize: a page; a smaller buffer holds too few records for
	// the writes it saves to count.
	minBufferSize = 4 << 10
	// maxBufferSize bounds the memory of one writer, and what a crash
	// may lose at most.
	maxBufferSize = 16 << 20
)

// CaddyModule returns the Caddy module information.
func (Writer) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.writers.robots_buffered",
		New: func() caddy.Module { return new(Writer) },
	}
}

// Provision sets the defaults and loads the writer the entries go to.
func (bw *Writer) Provision(ctx caddy.Context) error {
	if bw.FlushInterval == 0 {
		bw.FlushInterval = caddy.Duration(defaultFlushInterval)
	}
	if bw.BufferSize == 0 {
		bw.BufferSize = defaultBufferSize
	}
	if bw.WriterRaw == nil {
		return errors.New(`robots_buffered: no writer: give the writer the entries go to, e.g. {"output": "file", "filename": "..."}`)
	}
	mod, err := ctx.LoadModule(bw, "WriterRaw")
	if err != nil {
		return fmt.Errorf("robots_buffered: loading its writer: %w", err)
	}
	wo, ok := mod.(caddy.WriterOpener)
	if !ok {
		return fmt.Errorf("robots_buffered: its writer %T is not a log writer", mod)
	}
	bw.inner = wo
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("robots_buffered: registering its metrics: %w", err)
	}
	return nil
}

// Validate checks the options' bounds, and that every flush fits in a
// file the inner writer rolls.
func (bw *Writer) Validate() error {
	var errs []error
	if err := checkFlushInterval(time.Duration(bw.FlushInterval)); err != nil {
		errs = append(errs, err)
	}
	if err := checkBufferSize(bw.BufferSize); err != nil {
		errs = append(errs, err)
	}
	if err := checkInnerWriter(bw.inner, bw.BufferSize); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("robots_buffered: %w", errors.Join(errs...))
	}
	return nil
}

// checkFlushInterval checks flush_interval; 0 stands for the default.
func checkFlushInterval(d time.Duration) error {
	if d != 0 && (d < minFlushInterval || d > maxFlushInterval) {
		return fmt.Errorf("flush_interval %v: want between %v and %v", d, minFlushInterval, maxFlushInterval)
	}
	return nil
}

// checkBufferSize checks buffer_size; 0 stands for the default.
func checkBufferSize(n int) error {
	if n != 0 && (n < minBufferSize || n > maxBufferSize) {
		return fmt.Errorf("buffer_size %d: want between %d (4 KiB) and %d (16 MiB) octets", n, minBufferSize, maxBufferSize)
	}
	return nil
}

// checkInnerWriter checks the writer the entries go to: not another
// robots_buffered, and, for Caddy's file writer when it rolls, a file size
// that a full buffer fits in; the rolling writer refuses a write larger
// than its roll_size, and every flush of a full buffer would fail.
func checkInnerWriter(wo caddy.WriterOpener, size int) error {
	if size == 0 {
		size = defaultBufferSize
	}
	switch w := wo.(type) {
	case *Writer:
		return errors.New("its writer is robots_buffered too: give the writer the entries go to")
	case *logging.FileWriter:
		if w.Roll != nil && !*w.Roll {
			return nil
		}
		rollMB := w.RollSizeMB
		if rollMB <= 0 {
			rollMB = 100 // the file writer's default
		}
		if roll := uint64(rollMB) << 20; uint64(size) > roll {
			return fmt.Errorf("buffer_size %d is larger than its file writer's roll_size (%s), which refuses so large a write",
				size, humanize.IBytes(roll))
		}
	}
	return nil
}

// String names the writer for people: where the entries go.
func (bw *Writer) String() string {
	if bw.inner == nil {
		return "robots_buffered"
	}
	return "robots_buffered " + bw.inner.String()
}

// WriterKey identifies the writer in Caddy's pool of open log writers:
// the options and the inner writer's key. A reload whose configuration
// gives the same ones is handed the writer open already, with what it has
// buffered, rather than a new one.
func (bw *Writer) WriterKey() string {
	innerKey := ""
	if bw.inner != nil {
		innerKey = bw.inner.WriterKey()
	}
	return fmt.Sprintf("robots_buffered:%d:%d:%s", time.Duration(bw.FlushInterval), bw.BufferSize, innerKey)
}

// bufferedInners holds the inner writers the buffered writers have open,
// by their own keys, as Caddy's pool holds its log writers. A reload that
// changes flush_interval or buffer_size makes a buffered writer of a new
// key while the old one is still open; both then write through the one
// inner writer, as two logs of the same file do in Caddy, and not through
// two that would each roll the file while the other writes to it.
var bufferedInners = caddy.NewUsagePool()

// innerWriter is an inner writer in bufferedInners.
type innerWriter struct {
	io.WriteCloser
}

// Destruct closes the inner writer once no buffered writer uses it.
func (w innerWriter) Destruct() error {
	return w.Close()
}

// OpenWriter opens the inner writer, or shares the one open already, and
// returns the buffered writer around it.
func (bw *Writer) OpenWriter() (io.WriteCloser, error) {
	if bw.inner == nil {
		return nil, errors.New("robots_buffered: not provisioned: no writer")
	}
	innerKey := bw.inner.WriterKey()
	v, _, err := bufferedInners.LoadOrNew(innerKey, func() (caddy.Destructor, error) {
		w, err := bw.inner.OpenWriter()
		if err != nil {
			return nil, err
		}
		return innerWriter{w}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("robots_buffered: opening %s: %w", bw.inner, err)
	}
	size := bw.BufferSize
	if size == 0 {
		size = defaultBufferSize
	}
	interval := time.Duration(bw.FlushInterval)
	if interval == 0 {
		interval = defaultFlushInterval
	}
	key := bw.WriterKey()
	var w *bufWriter
	release := func() error {
		openBuffered.remove(key, w)
		_, err := bufferedInners.Delete(innerKey)
		return err
	}
	w = newBufWriter(v.(innerWriter).WriteCloser, release, bw.inner.String(), interval, size)
	openBuffered.add(key, w)
	return w, nil
}

// Cleanup writes what the writer of this configuration holds, when Caddy
// stops or reloads. Caddy 2.11.9 does not close its log writers, neither
// when a configuration is unloaded nor when it stops (Logging.openLogs
// registers the closing on a copy of the context, whose cancellation does
// not see it; the writers stay open, in its pool, for the process's
// life), but it does clean up each module of the configuration, this one
// among them, once its apps have stopped, before the process exits. The
// writer may be in use still, by the next configuration's log of the same
// options: it is written, not closed, and gives back its buffer until the
// next entry.
func (bw *Writer) Cleanup() error {
	if w := openBuffered.get(bw.WriterKey()); w != nil {
		return w.flush(true)
	}
	return nil
}

// openBuffered holds the buffered writers open in the process, by their
// WriterKey: the writer Caddy's pool keeps for a key is the one a
// configuration's Writer of that key finds to clean up, whichever
// configuration opened it.
var openBuffered = &bufferedRegistry{byKey: map[string]*bufWriter{}}

// bufferedRegistry is a set of open buffered writers by key.
type bufferedRegistry struct {
	mu    sync.Mutex
	byKey map[string]*bufWriter
	// atExit registers, once, the flush of every open writer when the
	// process exits gracefully: after the configuration's cleanup, it
	// writes what other modules logged while they were cleaned up.
	atExit sync.Once
}

func (r *bufferedRegistry) add(key string, w *bufWriter) {
	r.mu.Lock()
	r.byKey[key] = w
	r.mu.Unlock()
	r.atExit.Do(func() { caddy.OnExit(func(context.Context) { r.flushAll() }) })
}

// remove forgets w, unless another writer has its key since.
func (r *bufferedRegistry) remove(key string, w *bufWriter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey[key] == w {
		delete(r.byKey, key)
	}
}

func (r *bufferedRegistry) get(key string) *bufWriter {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byKey[key]
}

// flushAll writes what each open writer holds. At exit no Write comes to
// report an error, so Caddy's default log says it.
func (r *bufferedRegistry) flushAll() {
	r.mu.Lock()
	ws := make([]*bufWriter, 0, len(r.byKey))
	for _, w := range r.byKey {
		ws = append(ws, w)
	}
	r.mu.Unlock()
	for _, w := range ws {
		if err := w.flush(false); err != nil {
			caddy.Log().Error("writing buffered log entries at exit", zap.Error(err))
		}
	}
}

// Interface guards
var (
	_ caddy.Module          = (*Writer)(nil)
	_ caddy.Provisioner     = (*Writer)(nil)
	_ caddy.Validator       = (*Writer)(nil)
	_ caddy.CleanerUpper    = (*Writer)(nil)
	_ caddy.WriterOpener    = (*Writer)(nil)
	_ caddyfile.Unmarshaler = (*Writer)(nil)
)
