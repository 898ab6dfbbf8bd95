package robotsbuf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recWriter is an inner writer that keeps each write it is given, fails
// while fail is set, and counts writes that overlapped another.
type recWriter struct {
	mu      sync.Mutex
	writes  [][]byte
	calls   int // writes tried, failed ones too
	fail    error
	syncs   int
	busy    atomic.Bool
	overlap atomic.Int64
}

func (r *recWriter) Write(p []byte) (int, error) {
	if !r.busy.CompareAndSwap(false, true) {
		r.overlap.Add(1)
	}
	defer r.busy.Store(false)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail != nil {
		return 0, r.fail
	}
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *recWriter) Sync() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs++
	return nil
}

// got returns a copy of the writes so far.
func (r *recWriter) got() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.writes...)
}

func (r *recWriter) setFail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

func (r *recWriter) tried() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// unitWaitFor waits, at most 5 seconds, until cond holds.
func unitWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// unitEntry is a log entry of n octets, newline included, that names
// itself.
func unitEntry(name string, n int) []byte {
	e := []byte(name + " ")
	e = append(e, bytes.Repeat([]byte{'x'}, n-len(e)-1)...)
	return append(e, '\n')
}

func TestBufferedFlushBySize(t *testing.T) {
	rec := &recWriter{}
	w := newBufWriter(rec, nil, "rec", time.Hour, 4096)
	for i := range 4 {
		if n, err := w.Write(unitEntry(fmt.Sprint(i), 1000)); n != 1000 || err != nil {
			t.Fatalf("Write #%d = %d, %v; want 1000, nil", i, n, err)
		}
	}
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("%d writes to the inner writer while 4000 of 4096 octets are buffered, want none", len(got))
	}
	// The fifth does not fit: the four go in one write, the fifth waits.
	if _, err := w.Write(unitEntry("4", 1000)); err != nil {
		t.Fatal(err)
	}
	got := rec.got()
	if len(got) != 1 || len(got[0]) != 4000 || !bytes.HasPrefix(got[0], []byte("0 ")) || bytes.Count(got[0], []byte("\n")) != 4 {
		t.Fatalf("inner writes after a fifth entry: %d, first of %d octets; want one of the first four entries, 4000 octets", len(got), len(got[0]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); len(got) != 2 || !bytes.Equal(got[1], unitEntry("4", 1000)) {
		t.Errorf("after Close: %d inner writes, want 2, the second the fifth entry", len(got))
	}
}

func TestBufferedFlushByInterval(t *testing.T) {
	const interval = 50 * time.Millisecond
	rec := &recWriter{}
	w := newBufWriter(rec, nil, "rec", interval, 64<<10)
	defer w.Close()
	for round := range 2 { // the second: the timer is armed again
		start := time.Now()
		for i := range 3 {
			if _, err := w.Write(unitEntry(fmt.Sprintf("r%d-%d", round, i), 100)); err != nil {
				t.Fatal(err)
			}
		}
		unitWaitFor(t, "the timer's flush", func() bool { return len(rec.got()) == round+1 })
		if waited := time.Since(start); waited < interval {
			t.Errorf("round %d: written after %v, before the interval of %v", round, waited, interval)
		}
		got := rec.got()[round]
		if len(got) != 300 || !bytes.HasPrefix(got, []byte(fmt.Sprintf("r%d-0 ", round))) {
			t.Errorf("round %d: the timer wrote %q, want the round's three entries in one write", round, got)
		}
	}
}

// Writers on many goroutines, each reusing its buffer as zap does: every
// entry reaches the inner writer whole, once, in the order of its
// goroutine; no inner write ends within an entry; and no two inner writes
// overlap. Entries of all sizes, some larger than the buffer, and a timer
// of a millisecond, so that flushes by size, by timer and of large
// entries meet.
func TestBufferedConcurrentWholeAndOrdered(t *testing.T) {
	const (
		goroutines = 16
		perG       = 400
		size       = 4096
	)
	rec := &recWriter{}
	w := newBufWriter(rec, nil, "rec", time.Millisecond, size)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			buf := make([]byte, 0, 2*size) // reused, as zap reuses its buffer
			for i := range perG {
				n := 40 + (g*perG+i)*7919%(size+size/2) // some larger than the buffer
				buf = append(buf[:0], fmt.Sprintf("g%02d %05d %05d ", g, i, n)...)
				for len(buf) < n-1 {
					buf = append(buf, byte('a'+g))
				}
				buf = append(buf, '\n')
				if m, err := w.Write(buf); m != len(buf) || err != nil {
					t.Errorf("Write = %d, %v; want %d, nil", m, err, len(buf))
					return
				}
				for j := range buf {
					buf[j] = '#' // what a writer that kept p would write
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := rec.overlap.Load(); n > 0 {
		t.Errorf("%d inner writes overlapped another", n)
	}
	next := make([]int, goroutines)
	for wi, write := range rec.got() {
		if !bytes.HasSuffix(write, []byte("\n")) {
			t.Fatalf("inner write #%d of %d octets ends within an entry", wi, len(write))
		}
		for line := range bytes.Lines(write) {
			var g, i, n int
			if _, err := fmt.Sscanf(string(line), "g%02d %05d %05d ", &g, &i, &n); err != nil || g >= goroutines {
				t.Fatalf("inner write #%d: an entry that is not one written: %.60q", wi, line)
			}
			fill := strings.Repeat(string(rune('a'+g)), n-len(fmt.Sprintf("g%02d %05d %05d ", g, i, n))-1)
			if len(line) != n || !strings.HasSuffix(string(line), fill+"\n") {
				t.Fatalf("entry g%02d #%d: %d octets, want %d of its own filling: cut, merged or overwritten", g, i, len(line), n)
			}
			if i != next[g] {
				t.Fatalf("entry g%02d #%d came after #%d, want #%d", g, i, next[g]-1, next[g])
			}
			next[g]++
		}
	}
	for g, n := range next {
		if n != perG {
			t.Errorf("goroutine %d: %d entries reached the inner writer, want %d", g, n, perG)
		}
	}
}

func TestBufferedOversizedEntry(t *testing.T) {
	rec := &recWriter{}
	w := newBufWriter(rec, nil, "rec", time.Hour, 4096)
	big := unitEntry("big", 10000)
	for _, p := range [][]byte{unitEntry("a", 10), big, unitEntry("b", 10)} {
		if n, err := w.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write(%d octets) = %d, %v", len(p), n, err)
		}
	}
	got := rec.got()
	if len(got) != 2 || !bytes.Equal(got[0], unitEntry("a", 10)) || !bytes.Equal(got[1], big) {
		t.Fatalf("inner writes: %d; want 2: the buffered entry, then the large one whole", len(got))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); len(got) != 3 || !bytes.Equal(got[2], unitEntry("b", 10)) {
		t.Errorf("after Close: %d inner writes, want 3, the last the entry after the large one", len(got))
	}
}

func TestBufferedCloseFlushes(t *testing.T) {
	rec := &recWriter{}
	var released int
	w := newBufWriter(rec, func() error { released++; return nil }, "rec", 20*time.Millisecond, 4096)
	if _, err := w.Write(unitEntry("kept", 100)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if got := rec.got(); len(got) != 1 || !bytes.Equal(got[0], unitEntry("kept", 100)) || released != 1 {
		t.Fatalf("after Close: %d inner writes, released %d times; want the entry written, released once", len(got), released)
	}
	if err := w.Close(); err != nil || released != 1 {
		t.Errorf("second Close = %v, released %d times; want nil, once", err, released)
	}
	if n, err := w.Write(unitEntry("late", 100)); n != 0 || !errors.Is(err, errBufferedClosed) {
		t.Errorf("Write after Close = %d, %v; want 0, %v", n, err, errBufferedClosed)
	}
	if err := w.Sync(); !errors.Is(err, errBufferedClosed) {
		t.Errorf("Sync after Close = %v, want %v", err, errBufferedClosed)
	}
	time.Sleep(60 * time.Millisecond) // the interval, had the timer not been stopped
	if got := rec.got(); len(got) != 1 {
		t.Errorf("after Close: %d inner writes, want the one Close made", len(got))
	}
}

// A flush of the timer that fails is reported by the next Write, once;
// its entries are not written again.
func TestBufferedTimerErrorReturnedByNextWrite(t *testing.T) {
	rec := &recWriter{}
	w := newBufWriter(rec, nil, "rec", 5*time.Millisecond, 4096)
	defer w.Close()
	diskFull := errors.New("no space left on device")
	rec.setFail(diskFull)
	for _, name := range []string{"lost1", "lost2"} {
		if _, err := w.Write(unitEntry(name, 100)); err != nil {
			t.Fatal(err)
		}
	}
	unitWaitFor(t, "the timer's flush", func() bool { return rec.tried() == 1 })
	rec.setFail(nil)
	n, err := w.Write(unitEntry("next", 100))
	if n != 100 || !errors.Is(err, diskFull) || !strings.Contains(err.Error(), "2 log entries") {
		t.Fatalf("Write after a failed flush = %d, %v; want 100 and the flush's error, of 2 entries", n, err)
	}
	if _, err := w.Write(unitEntry("then", 100)); err != nil {
		t.Errorf("the Write after = %v, want nil: the error was reported", err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); len(got) != 1 || !bytes.Equal(got[0], append(unitEntry("next", 100), unitEntry("then", 100)...)) {
		t.Errorf("inner writes %q, want one of the two entries after the failure", got)
	}
}

// A flush Write makes itself, when an entry does not fit, fails: Write
// returns the error, and the entry is buffered.
func TestBufferedWriteFlushError(t *testing.T) {
	rec := &recWriter{}
	w := newBufWriter(rec, nil, "rec", time.Hour, 4096)
	if _, err := w.Write(unitEntry("a", 3000)); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("broken pipe")
	rec.setFail(broken)
	if n, err := w.Write(unitEntry("b", 3000)); n != 3000 || !errors.Is(err, broken) {
		t.Fatalf("Write whose flush fails = %d, %v; want 3000 (buffered) and the error", n, err)
	}
	rec.setFail(nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); len(got) != 1 || !bytes.Equal(got[0], unitEntry("b", 3000)) {
		t.Errorf("inner writes: %d; want one, the entry buffered after the failure", len(got))
	}
}

func TestBufferedSync(t *testing.T) {
	rec := &recWriter{}
	w := newBufWriter(rec, nil, "rec", time.Hour, 4096)
	defer w.Close()
	if _, err := w.Write(unitEntry("a", 10)); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); len(got) != 1 || rec.syncs != 1 {
		t.Errorf("after Sync: %d inner writes, %d syncs; want 1 and 1", len(got), rec.syncs)
	}
}
