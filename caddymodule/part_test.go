package caddymodule

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// testState is the state name the tests' parts are under.
const testState = "0123456789abcdef0123456789abcdef"

// newTestStorage returns a file system storage in a directory of the
// test's.
func newTestStorage(t *testing.T) *certmagic.FileStorage {
	t.Helper()
	return &certmagic.FileStorage{Path: t.TempDir()}
}

// observed returns a logger whose error and warning lines the test reads.
func observed() (func() *zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := zap.New(core)
	return func() *zap.Logger { return l }, logs
}

// deadPID returns the id of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("running a process to end: %v", err)
	}
	if pidAlive(cmd.Process.Pid) {
		t.Skip("the ended process's id is in use again")
	}
	return cmd.Process.Pid
}

// An instance takes the first of its part names no live process holds:
// a free one; one given back; one stale; one held on this host by a
// process that ended, or by this process; never one a live process holds
// here or elsewhere, which is then reported. Past its names, one of its
// own making.
func TestClaimPart(t *testing.T) {
	now := time.Now()
	self := newLease(time.Second, now)
	base := partBaseName("id")
	held := func(l lease) *lease { l.Renewed, l.Period = now.Add(-time.Second), 1000; return &l }
	cases := []struct {
		name   string
		leases []*lease // of base, base_2, …; nil: none
		want   string
		held   int
	}{
		{"free", nil, base, 0},
		{"given back", []*lease{{Nonce: "x", Host: self.Host, PID: os.Getppid(), Renewed: now, Period: 1000, Released: true}}, base, 0},
		{"stale", []*lease{{Nonce: "x", Host: "elsewhere", PID: 1, Renewed: now.Add(-time.Hour), Period: 1000}}, base, 0},
		{"a crashed process of this host", []*lease{held(lease{Nonce: "x", Host: self.Host, PID: deadPID(t)})}, base, 0},
		{"this process, in a state gone", []*lease{held(lease{Nonce: "x", Host: self.Host, PID: os.Getpid()})}, base, 0},
		{"a live process of this host", []*lease{held(lease{Nonce: "x", Host: self.Host, PID: os.Getppid()})}, base + "_2", 1},
		{"a live process elsewhere", []*lease{held(lease{Nonce: "x", Host: "elsewhere", PID: 7})}, base + "_2", 1},
		{"two live, the third given back", []*lease{
			held(lease{Nonce: "x", Host: "elsewhere", PID: 7}), held(lease{Nonce: "y", Host: "other", PID: 8}),
			{Nonce: "z", Host: "gone", Released: true},
		}, base + "_3", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storage := newTestStorage(t)
			names := partNames(base)
			for i, l := range c.leases {
				if err := storeLease(t.Context(), storage, testState, names[i], l); err != nil {
					t.Fatal(err)
				}
			}
			me := self
			got := claimPart(t.Context(), storage, testState, base, &me, nil, now)
			if got.part != c.want || len(got.held) != c.held || got.err != nil {
				t.Fatalf("claimPart = %q, %d held (%v), want %q, %d held", got.part, len(got.held), got.err, c.want, c.held)
			}
			l, err := loadLease(t.Context(), storage, testState, got.part)
			if err != nil || l.Nonce != self.Nonce {
				t.Errorf("the part's lease after the claim: %+v, %v; want this process's", l, err)
			}
		})
	}
	t.Run("every name held", func(t *testing.T) {
		storage := newTestStorage(t)
		for i, name := range partNames(base) {
			storeLease(t.Context(), storage, testState, name, held(lease{Nonce: string(rune('a' + i)), Host: "elsewhere", PID: 7}))
		}
		me := self
		got := claimPart(t.Context(), storage, testState, base, &me, nil, now)
		if got.part != base+"_"+self.Nonce[:8] || len(got.held) != maxPartNames {
			t.Errorf("claimPart = %q, %d held; want a name of its own, %d held", got.part, len(got.held), maxPartNames)
		}
	})
}

// Host names are read as a part's name holds them: no separator, no
// dot-dot, bounded.
func TestPartBaseName(t *testing.T) {
	name := partBaseName("")
	if !strings.HasSuffix(name, "_default") || strings.ContainsAny(name, "/\\ ") || len(name) > maxHostName+len("_default") {
		t.Errorf("partBaseName(\"\") = %q", name)
	}
}

// failingStorage is a storage whose operations fail, or wait for their
// context, as a storage down or locked does.
type failingStorage struct {
	certmagic.Storage
	err   error // nil: wait for the context
	calls int
}

func (f *failingStorage) fail(ctx context.Context) error {
	f.calls++
	if f.err != nil {
		return f.err
	}
	<-ctx.Done()
	return ctx.Err()
}

func (f *failingStorage) Store(ctx context.Context, _ string, _ []byte) error { return f.fail(ctx) }
func (f *failingStorage) Load(ctx context.Context, _ string) ([]byte, error)  { return nil, f.fail(ctx) }
func (f *failingStorage) List(ctx context.Context, _ string, _ bool) ([]string, error) {
	return nil, f.fail(ctx)
}
func (f *failingStorage) Stat(ctx context.Context, _ string) (certmagic.KeyInfo, error) {
	return certmagic.KeyInfo{}, f.fail(ctx)
}
func (f *failingStorage) Delete(ctx context.Context, _ string) error { return f.fail(ctx) }
func (f *failingStorage) Exists(context.Context, string) bool        { return false }

var errStorageDown = errors.New("storage down")

// A storage that fails at start: the part is taken without knowing who
// held it, and the instance starts empty.
func TestClaimPartStorageFails(t *testing.T) {
	self := newLease(time.Second, time.Now())
	got := claimPart(t.Context(), &failingStorage{err: errStorageDown}, testState, partBaseName("id"), &self, nil, time.Now())
	if got.part != partBaseName("id") || !errors.Is(got.err, errStorageDown) {
		t.Errorf("claimPart on a failing storage = %q, %v; want the first name and the error", got.part, got.err)
	}
	if _, err := loadLease(t.Context(), newTestStorage(t), testState, "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("loadLease of no part = %v, want fs.ErrNotExist", err)
	}
}
