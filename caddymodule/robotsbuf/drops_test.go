package robotsbuf

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// scriptWriter is an inner writer that appends what it takes to a file
// in memory and does, for each write, what the next step of its script
// says; past the script, it takes everything.
type scriptWriter struct {
	mu     sync.Mutex
	file   bytes.Buffer
	script []step
	calls  int
}

// step is what one write does: take at most take octets (negative: all),
// then fail with err (nil: succeed, or a short write when it took less).
type step struct {
	take int
	err  error
}

var errNoSpace = fmt.Errorf("write robots.log: %w", syscall.ENOSPC)

func (s *scriptWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.script) == 0 {
		s.file.Write(p)
		return len(p), nil
	}
	st := s.script[0]
	s.script = s.script[1:]
	n := len(p)
	if st.take >= 0 && st.take < n {
		n = st.take
	}
	s.file.Write(p[:n])
	return n, st.err
}

func (s *scriptWriter) then(steps ...step) {
	s.mu.Lock()
	s.script = append(s.script, steps...)
	s.mu.Unlock()
}

func (s *scriptWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.file.String()
}

// entry is the i-th log entry of the tests: a line of some length.
func entry(i, pad int) []byte {
	return []byte(fmt.Sprintf(`{"n":%d,"pad":"%s"}`+"\n", i, strings.Repeat("x", pad)))
}

// dropWriter is a buffered writer around s whose dropped entries count in
// a series of their own, logged to an observer.
func dropWriter(t *testing.T, s *scriptWriter, size int) (*bufWriter, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	w := newBufWriter(s, nil, fmt.Sprintf("test:%s:%d", t.Name(), dropWriters.Add(1)), time.Hour, size)
	w.drops.logger = func() *zap.Logger { return zap.New(core) }
	return w, logs
}

// dropWriters numbers the writers of dropWriter, so that each counts in
// a series of its own.
var dropWriters atomic.Int64

// A write that fails, or is short, drops the entries it did not write
// whole and counts them; a line the inner writer cut is ended before the
// next write, so that it stands alone and the next entry is whole.
func TestBufferedFailedWrites(t *testing.T) {
	e0, e1, e2, e3 := entry(0, 10), entry(1, 10), entry(2, 10), entry(3, 10)
	tests := []struct {
		name    string
		script  []step
		want    string // the file after e0 e1 e2 (one batch), then e3 (another)
		dropped float64
	}{
		{"the batch written", nil, string(e0) + string(e1) + string(e2) + string(e3), 0},
		{"nothing written", []step{{0, errNoSpace}},
			string(e3), 3},
		{"cut within the second entry", []step{{len(e0) + 5, errNoSpace}},
			string(e0) + string(e1[:5]) + "\n" + string(e3), 2},
		{"cut on an entry's end", []step{{len(e0) + len(e1), errNoSpace}},
			string(e0) + string(e1) + string(e3), 1},
		{"cut before an entry's newline: the next write ends it", []step{{len(e0) + len(e1) - 1, errNoSpace}},
			string(e0) + string(e1) + string(e3), 1},
		{"short, without an error", []step{{len(e0) + 5, nil}},
			string(e0) + string(e1[:5]) + "\n" + string(e3), 2},
		{"cut, then the line's end cannot be written: the next batch is dropped", []step{{3, errNoSpace}, {0, errNoSpace}},
			string(e0[:3]), 4},
		{"cut, then the next batch cut too", []step{{3, errNoSpace}, {-1, nil}, {4, errNoSpace}},
			string(e0[:3]) + "\n" + string(e3[:4]), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scriptWriter{}
			s.then(tt.script...)
			w, _ := dropWriter(t, s, 4096)
			for _, e := range [][]byte{e0, e1, e2} {
				if n, err := w.Write(e); n != len(e) || err != nil {
					t.Fatalf("Write = %d, %v; want %d, nil (buffered)", n, err, len(e))
				}
			}
			err1 := w.flush(false)
			w.Write(e3)
			err2 := w.flush(false)
			if got := s.String(); got != tt.want {
				t.Errorf("the file:\n%q\nwant:\n%q", got, tt.want)
			}
			if got := counterValue(t, w.drops.counter); got != tt.dropped {
				t.Errorf("dropped %v entries, want %v", got, tt.dropped)
			}
			if (tt.dropped > 0) != (err1 != nil || err2 != nil) {
				t.Errorf("errors %v, %v; want an error when entries were dropped", err1, err2)
			}
		})
	}
}

// An entry larger than the buffer is written by itself, and dropped
// whole, with its cut line ended, the same way.
func TestBufferedOversizedEntryCut(t *testing.T) {
	s := &scriptWriter{}
	s.then(step{100, errNoSpace})
	w, _ := dropWriter(t, s, 4096)
	big, next := entry(0, 5000), entry(1, 10)
	if n, err := w.Write(big); n != len(big) || err == nil {
		t.Errorf("Write(an entry larger than the buffer, cut) = %d, %v; want it taken, and the error", n, err)
	}
	w.Write(next)
	if err := w.flush(false); err != nil {
		t.Fatal(err)
	}
	if want := string(big[:100]) + "\n" + string(next); s.String() != want {
		t.Errorf("the file: %q, want the cut line alone, then the next entry", s.String())
	}
	if got := counterValue(t, w.drops.counter); got != 1 {
		t.Errorf("dropped %v, want 1", got)
	}
}

// A panic of the inner writer on the timer's flush drops the batch,
// counts it, and ends whatever line it may have cut.
func TestBufferedPanicDrops(t *testing.T) {
	s := &scriptWriter{}
	w, _ := dropWriter(t, s, 4096)
	w.inner = panicWriter{}
	w.Write(entry(0, 10))
	w.flushTimer()
	w.inner = s
	w.Write(entry(1, 10))
	w.flush(false)
	if want := "\n" + string(entry(1, 10)); s.String() != want {
		t.Errorf("after a panic: %q, want a newline, then the next entry", s.String())
	}
	if got := counterValue(t, w.drops.counter); got != 1 {
		t.Errorf("dropped %v, want 1", got)
	}
}

// counterValue reads a counter.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("inner writer") }

// Whatever the inner writer does, over random entries and failures, the
// file never holds part of an entry run into another: each line is an
// entry, whole, or a part of one cut by a failure, alone; the whole ones
// are in order, none twice; and every entry is in the file whole or
// counted as dropped.
func TestBufferedFailuresNeverJoinEntries(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := &scriptWriter{}
		w, _ := dropWriter(t, s, 4096)
		var entries [][]byte
		for i := range 400 {
			e := entry(i, rng.IntN(3000))
			entries = append(entries, e)
			switch rng.IntN(6) {
			case 0:
				s.then(step{0, errNoSpace})
			case 1:
				s.then(step{rng.IntN(6000), errNoSpace})
			case 2:
				s.then(step{rng.IntN(6000), nil})
			}
			w.Write(e)
			if rng.IntN(8) == 0 {
				w.flush(false)
			}
		}
		w.flush(false)
		s.script = nil

		whole := map[string]int{}
		for i, e := range entries {
			whole[string(e)] = i
		}
		last, found := -1, 0
		for line := range strings.Lines(s.String()) {
			if i, ok := whole[line]; ok {
				if i <= last {
					t.Fatalf("seed %d: entry %d after entry %d", seed, i, last)
				}
				last, found = i, found+1
				continue
			}
			cut := strings.TrimSuffix(line, "\n")
			ok := false
			for _, e := range entries {
				if len(cut) < len(e)-1 && strings.HasPrefix(string(e), cut) {
					ok = true
					break
				}
			}
			if !ok {
				t.Fatalf("seed %d: a line that is neither an entry nor part of one alone: %.120q", seed, line)
			}
		}
		dropped := counterValue(t, w.drops.counter)
		if found+int(dropped) != len(entries) {
			t.Errorf("seed %d: %d entries whole in the file and %v counted dropped, want %d in all", seed, found, dropped, len(entries))
		}
	}
}

// The log says that entries were dropped at once, then at most once per
// dropLogInterval with the count since, and says when a write goes
// through again, with the total.
func TestBufferedDropsLogged(t *testing.T) {
	s := &scriptWriter{}
	w, logs := dropWriter(t, s, 4096)
	clock := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	w.drops.now = func() time.Time { return clock }
	fail := func(n int) {
		for range n {
			s.then(step{0, errNoSpace})
			w.Write(entry(0, 10))
			w.flush(false)
		}
	}
	fail(5)
	clock = clock.Add(dropLogInterval / 2)
	fail(5)
	if got := logs.FilterLevelExact(zapcore.WarnLevel).Len(); got != 1 {
		t.Errorf("after 10 failures within %v: %d warnings, want 1", dropLogInterval, got)
	}
	clock = clock.Add(dropLogInterval)
	fail(1)
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warns) != 2 || warns[1].ContextMap()["dropped"] != uint64(10) || warns[1].ContextMap()["dropped_total"] != uint64(11) {
		t.Fatalf("after the interval: warnings %v, want a second saying 10 dropped since, 11 in all", warns)
	}
	fail(2)
	w.Write(entry(1, 10))
	if err := w.flush(false); err != nil {
		t.Fatal(err)
	}
	infos := logs.FilterMessage("robots_buffered: writing again").All()
	if len(infos) != 1 || infos[0].ContextMap()["dropped"] != uint64(2) || infos[0].ContextMap()["dropped_total"] != uint64(13) {
		t.Errorf("writing again: %v, want one line saying 2 dropped since the last, 13 in all", infos)
	}
	if got := logs.FilterField(zap.String("writer", w.name)).Len(); got != 3 {
		t.Errorf("%d lines name the writer, want 3", got)
	}
}

// The log line is written with the writer's lock released: a default log
// that writes through this very writer does not deadlock.
func TestBufferedDropsLoggedThroughItself(t *testing.T) {
	s := &scriptWriter{}
	w := newBufWriter(s, nil, "self", time.Hour, 4096)
	w.drops.logger = func() *zap.Logger {
		return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(w), zapcore.InfoLevel))
	}
	s.then(step{0, errNoSpace})
	w.Write(entry(0, 10))
	done := make(chan error, 1)
	go func() { done <- w.flush(false) }()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("flush = %v, want the failure", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("flush did not return: the log line waited for the writer's own lock")
	}
	w.flush(false)
	if !strings.Contains(s.String(), "log entries dropped") {
		t.Errorf("the file: %q, want the warning written through the writer", s.String())
	}
}
