package robotsbuf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// errBufferedClosed is what a write to a closed buffered writer returns.
var errBufferedClosed = errors.New("robots_buffered: write to a closed writer")

// bufWriter is the writer Writer opens: it gathers whole log
// entries in a buffer of fixed size and writes them to the inner writer
// in one write each time the buffer would overflow, when the oldest
// buffered entry has waited the flush interval, on Sync and Close, and
// when Caddy cleans up a configuration that uses it or exits. It
// is safe for concurrent use. Every write to the inner writer happens with
// mu held, so the inner writer sees the entries whole and in the order
// Write took them.
//
// zap hands Write one whole entry each time, in a buffer it reuses
// afterwards, so Write copies it.
type bufWriter struct {
	inner    io.Writer
	release  func() error // closes the inner writer, or leaves it to its other users
	name     string       // the inner writer, for errors
	interval time.Duration
	size     int

	mu      sync.Mutex
	buf     []byte // of capacity size, never outgrown; nil until an entry comes
	entries int    // in buf
	timer   *time.Timer
	armed   bool  // the timer will run flushTimer
	err     error // of the timer's last flush, for the next Write
	closed  bool
	// torn is set when the inner writer took part of a line and failed:
	// the next write ends that line first (see writeOut).
	torn bool
	// drops counts and tells the entries dropped (drops.go); say is a
	// line it has to log, logged once mu is released (unlock).
	drops dropReport
	say   func()
}

// newBufWriter returns a buffered writer of size octets that writes to
// inner at the latest interval after an entry came, and calls release
// when it is closed. name says what inner is, for errors.
func newBufWriter(inner io.Writer, release func() error, name string, interval time.Duration, size int) *bufWriter {
	return &bufWriter{
		inner:    inner,
		release:  release,
		name:     name,
		interval: interval,
		size:     size,
		drops:    newDropReport(name),
	}
}

// unlock releases w.mu, then logs the line the writer has to say, if any:
// the logger may write to this very writer, which takes w.mu.
func (w *bufWriter) unlock() {
	say := w.say
	w.say = nil
	w.mu.Unlock()
	if say != nil {
		say()
	}
}

// Write buffers the entry p whole. When p does not fit in what is left
// of the buffer, the buffer is written first; an entry larger than the
// whole buffer is then written by itself, now. The error is that of a
// write made here, or of the timer's last flush, not returned yet; either
// way p was taken (and, if its write failed, dropped whole and counted).
func (w *bufWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.unlock()
	if w.closed {
		return 0, errBufferedClosed
	}
	err := w.err
	w.err = nil
	if len(p) > w.size-len(w.buf) {
		err = errors.Join(err, w.flushLocked())
	}
	if len(p) > w.size {
		return len(p), errors.Join(err, w.writeOut(p, 1))
	}
	if w.buf == nil {
		w.buf = make([]byte, 0, w.size)
	}
	w.buf = append(w.buf, p...)
	w.entries++
	if !w.armed {
		w.armed = true
		if w.timer == nil {
			w.timer = time.AfterFunc(w.interval, w.flushTimer)
		} else {
			w.timer.Reset(w.interval)
		}
	}
	return len(p), err
}

// flushLocked writes the buffer to the inner writer, and empties it
// whatever the outcome. w.mu is held.
//
// Entries whose write failed are dropped, not kept to be written again.
// Without the buffer, zap writes each entry once and drops it when the
// write fails, reporting the error; the buffered writer does the same,
// and reports the error once for the whole batch (zap prints it to its
// error output, Caddy's standard error), besides counting and logging
// what it dropped (drops.go). Keeping them would not bound what a
// failure that lasts (a full disk) holds: the buffer would stay full, and
// either the new entries would be dropped in place of the old or every
// Write would wait on the failing writer.
func (w *bufWriter) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.writeOut(w.buf, w.entries)
	w.buf, w.entries = w.buf[:0], 0
	return err
}

// newline ends a line the inner writer cut.
var newline = []byte{'\n'}

// writeOut hands p, which holds entries whole entries, each ending with a
// newline as Caddy's encoders end them, to the inner writer in one write.
// w.mu is held.
//
// A write that fails or is short drops the entries it did not write whole
// (those whose newline it did not take), and counts them. When it took
// part of a line (a full disk takes what fits), that part stays in the
// file, and the next write begins with a newline, so that the cut line
// stands alone, where a reader skips it as unreadable, and is never run
// into the next entry; when that newline cannot be written either, the
// whole batch is dropped rather than joined to the cut line.
func (w *bufWriter) writeOut(p []byte, entries int) error {
	if w.torn {
		if n, err := w.inner.Write(newline); n < 1 {
			if err == nil {
				err = io.ErrShortWrite
			}
			w.dropped(entries, err)
			return fmt.Errorf("robots_buffered: ending a line cut by an earlier write to %s: %w; %d log entries dropped", w.name, err, entries)
		}
		w.torn = false
	}
	n, err := w.inner.Write(p)
	n = min(max(n, 0), len(p))
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err == nil {
		w.wrote()
		return nil
	}
	w.torn = n > 0 && p[n-1] != '\n'
	written := bytes.Count(p[:n], newline)
	if w.torn && n < len(p) && p[n] == '\n' {
		written++ // only its newline is missing, which the next write adds
	}
	lost := max(entries-written, 0)
	w.dropped(lost, err)
	return fmt.Errorf("robots_buffered: writing %d log entries (%d octets, %d written) to %s: %w; %d dropped whole",
		entries, len(p), n, w.name, err, lost)
}

// flushPendingLocked writes the buffer, and returns its error with the
// timer's last, which it clears: that error is returned once. w.mu is
// held.
func (w *bufWriter) flushPendingLocked() error {
	err := w.err
	w.err = nil
	return errors.Join(err, w.flushLocked())
}

// flushTimer is the timer's: it writes what the buffer holds, and keeps
// the error for the next Write. A panic of the inner writer, which would
// end the process on the timer's goroutine, is kept as an error too.
func (w *bufWriter) flushTimer() {
	w.mu.Lock()
	defer w.unlock()
	defer func() {
		if r := recover(); r != nil {
			w.err = fmt.Errorf("robots_buffered: writing to %s: panic: %v", w.name, r)
			w.dropped(w.entries, w.err)
			w.buf, w.entries = w.buf[:0], 0
			// What the inner writer took is unknown: end its line, at
			// the cost of an empty one.
			w.torn = true
		}
	}()
	w.armed = false
	if w.closed {
		return
	}
	if err := w.flushLocked(); err != nil {
		w.err = err
	}
}

// flush writes the buffer now, and returns its error with the timer's
// last, not returned yet. giveBack drops the buffer's memory until the
// next entry: a writer no configuration uses any more (Caddy 2.11.9 keeps
// them all open) then holds none.
func (w *bufWriter) flush(giveBack bool) error {
	w.mu.Lock()
	defer w.unlock()
	if w.closed {
		return nil
	}
	err := w.flushPendingLocked()
	if giveBack {
		w.buf = nil
	}
	return err
}

// Sync writes the buffer, then syncs the inner writer when it can.
// Caddy's pool of log writers hands zap its writers as an io.WriteCloser,
// so in Caddy 2.11.9 zap does not call it: the timer, and the module's
// Cleanup when Caddy stops or reloads, write what is buffered.
func (w *bufWriter) Sync() error {
	w.mu.Lock()
	defer w.unlock()
	if w.closed {
		return errBufferedClosed
	}
	err := w.flushPendingLocked()
	if s, ok := w.inner.(interface{ Sync() error }); ok {
		if serr := s.Sync(); serr != nil {
			err = errors.Join(err, fmt.Errorf("robots_buffered: syncing %s: %w", w.name, serr))
		}
	}
	return err
}

// Close stops the timer, writes the buffer and closes the inner writer
// (or leaves it to the other buffered writers that share it). Writes
// after Close fail and write nothing; a second Close does nothing.
// Caddy's pool of log writers calls it when it closes a writer no
// configuration uses (Caddy 2.11.9 never does; see Cleanup).
func (w *bufWriter) Close() error {
	w.mu.Lock()
	defer w.unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	err := w.flushPendingLocked()
	w.buf = nil
	if w.release != nil {
		if rerr := w.release(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("robots_buffered: closing %s: %w", w.name, rerr))
		}
	}
	return err
}
