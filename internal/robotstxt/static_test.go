package robotstxt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// writeRobots writes body to path with the given modification time.
func writeRobots(t *testing.T, path, body string, mod time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func TestNewFileSourceErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "robots.txt")
	writeRobots(t, good, "User-agent: *\n", snapEpoch)
	tests := []struct {
		name string
		cfg  FileConfig
		want string
	}{
		{"no path", FileConfig{}, "a path is required"},
		{"missing file", FileConfig{Path: filepath.Join(dir, "missing.txt")}, "no such file"},
		{"directory", FileConfig{Path: dir}, "is a directory"},
		{"max size", FileConfig{Path: good, MaxSize: 10}, "max size 10"},
		{"check interval", FileConfig{Path: good, CheckInterval: -time.Second}, "check interval -1s is negative"},
	}
	for _, tt := range tests {
		if _, err := NewFileSource(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewFileSource() error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// A file source reads its file again when it changes, looking at most once
// per interval, and keeps the last copy while the file cannot be read.
func TestFileSourceReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	writeRobots(t, path, "User-agent: *\nDisallow: /v1\n", snapEpoch)
	clock := newManualClock()
	f, err := NewFileSource(FileConfig{Path: path, CheckInterval: 10 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v1 := f.Snapshot(t.Context(), "any.example")
	if v1.Access != AccessAvailable || v1.Source != "file:"+path || v1.Hash == "" || !v1.FetchedAt.Equal(snapEpoch) || v1.Robots.Allowed("bot", "/v1") {
		t.Fatalf("first snapshot: %v source %q hash %q fetched %v", v1.Access, v1.Source, v1.Hash, v1.FetchedAt)
	}

	steps := []struct {
		name    string
		advance time.Duration
		change  func()
		check   func(prev, s *Snapshot) string
	}{
		{"touched, same content", 10 * time.Second, func() { writeRobots(t, path, "User-agent: *\nDisallow: /v1\n", snapEpoch.Add(time.Hour)) },
			func(prev, s *Snapshot) string {
				if s.Robots != prev.Robots || len(s.Earlier) != 0 || !s.ChangedAt.Equal(prev.ChangedAt) {
					return "a touch without change should reuse the parse and keep ChangedAt"
				}
				return ""
			}},
		{"changed, before the interval", 5 * time.Second, func() { writeRobots(t, path, "User-agent: *\nDisallow: /v2\n", snapEpoch.Add(2*time.Hour)) },
			func(prev, s *Snapshot) string {
				if s != prev {
					return "the file was read again before the check interval"
				}
				return ""
			}},
		{"changed, after the interval", 5 * time.Second, nil,
			func(prev, s *Snapshot) string {
				if s.Robots.Allowed("bot", "/v2") || len(s.Earlier) != 1 || s.Earlier[0].Hash != v1.Hash || s.Version(v1.Hash, s.ChangedAt) == nil {
					return "the change was not read, or the earlier version not kept"
				}
				return ""
			}},
		{"removed", 10 * time.Second, func() { os.Remove(path) },
			func(prev, s *Snapshot) string {
				if s.Robots != prev.Robots || s.Hash != prev.Hash || !strings.Contains(s.Err, "no such file") || s.Failures != 1 {
					return "a removed file should keep the last copy, with the error"
				}
				return ""
			}},
		{"restored as it was", 10 * time.Second, func() { writeRobots(t, path, "User-agent: *\nDisallow: /v2\n", snapEpoch.Add(2*time.Hour)) },
			func(prev, s *Snapshot) string {
				if s.Err != "" || s.Failures != 0 || s.Hash != prev.Hash || len(s.Earlier) != 1 {
					return "a restored file should clear the error and keep the content and the earlier version"
				}
				return ""
			}},
	}
	prev := v1
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		clock.Advance(st.advance)
		s := f.Snapshot(t.Context(), "other.example")
		if msg := st.check(prev, s); msg != "" {
			t.Errorf("%s: %s (err %q, hash %q, earlier %v)", st.name, msg, s.Err, s.Hash, s.Earlier)
		}
		prev = s
	}
}

// Recheck reads the file at once, before the check interval is up and
// even when an edit kept its size and modification time, which the
// interval's look would miss; the version it replaces stays in the
// history. An unchanged file is no new version; a file gone keeps the last
// copy, with the error returned and recorded.
func TestFileSourceRecheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	writeRobots(t, path, "User-agent: *\nDisallow: /v1\n", snapEpoch)
	clock := newManualClock()
	f, err := NewFileSource(FileConfig{Path: path, CheckInterval: 10 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	v1 := f.Snapshot(t.Context(), "")

	// Same size, same time: only the content differs.
	writeRobots(t, path, "User-agent: *\nDisallow: /v2\n", snapEpoch)
	clock.Advance(10 * time.Second)
	if s := f.Snapshot(t.Context(), ""); s.Hash != v1.Hash {
		t.Fatalf("the interval's look read an edit that kept size and time; the test no longer shows what Recheck adds")
	}
	clock.Advance(time.Second)
	if err := f.Recheck(); err != nil {
		t.Fatalf("Recheck() = %v", err)
	}
	v2 := f.Snapshot(t.Context(), "")
	if v2.Robots.Allowed("bot", "/v2") || !v2.Robots.Allowed("bot", "/v1") || !v2.ChangedAt.Equal(clock.Now()) {
		t.Errorf("after Recheck: /v2 allowed %v, /v1 allowed %v, changed %v; want the new file, changed now",
			v2.Robots.Allowed("bot", "/v2"), v2.Robots.Allowed("bot", "/v1"), v2.ChangedAt)
	}
	if len(v2.Earlier) != 1 || v2.Earlier[0].Hash != v1.Hash || v2.Version(v1.Hash, v1.ChangedAt) == nil {
		t.Errorf("after Recheck: earlier versions %v, want the first file's", v2.Earlier)
	}

	clock.Advance(time.Second)
	if err := f.Recheck(); err != nil {
		t.Fatalf("Recheck() of an unchanged file = %v", err)
	}
	if s := f.Snapshot(t.Context(), ""); s.Robots != v2.Robots || !s.ChangedAt.Equal(v2.ChangedAt) || len(s.Earlier) != 1 {
		t.Errorf("Recheck of an unchanged file: a new parse, changed %v, %d earlier; want the same version", s.ChangedAt, len(s.Earlier))
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	err = f.Recheck()
	s := f.Snapshot(t.Context(), "")
	if err == nil || !strings.Contains(err.Error(), "no such file") || s.Hash != v2.Hash || s.Err != err.Error() || s.Failures != 1 {
		t.Errorf("Recheck of a removed file = %v; snapshot hash %q err %q failures %d; want the error, and the last copy with it",
			err, s.Hash, s.Err, s.Failures)
	}
}

// Recheck waits for a check a request has under way rather than skipping
// its own, so the file as it is when Recheck is called is in force when it
// returns, while requests check all the time. Run with -race.
func TestFileSourceRecheckConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	writeRobots(t, path, "User-agent: *\nDisallow: /0\n", snapEpoch)
	f, err := NewFileSource(FileConfig{Path: path, CheckInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					f.Snapshot(t.Context(), "")
				}
			}
		})
	}
	for i := range 50 {
		body := fmt.Sprintf("User-agent: *\nDisallow: /%d\n", i)
		writeRobots(t, path, body, snapEpoch.Add(time.Duration(i)*time.Second))
		if err := f.Recheck(); err != nil {
			t.Fatalf("Recheck() = %v", err)
		}
		// A request's check may publish a newer read, never an older one:
		// the file is only written here.
		if s := f.Snapshot(t.Context(), ""); s.Robots.Allowed("bot", fmt.Sprintf("/%d", i)) {
			t.Errorf("write %d: after Recheck, /%d allowed; want the file as written", i, i)
		}
	}
	close(stop)
	wg.Wait()
}

// RFC 9309 §2.5 holds for files too.
func TestFileSourceTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	writeRobots(t, path, "User-agent: *\n"+strings.Repeat("Disallow: /x\n", rules.DefaultMaxSize/13+1), snapEpoch)
	f, err := NewFileSource(FileConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Snapshot(t.Context(), ""); !s.Truncated || !hasDiagnostic(s.Robots, rules.CodeSizeLimit) {
		t.Errorf("truncated %v, diagnostics %v", s.Truncated, s.Robots.Diagnostics())
	}
}

func TestInlineSource(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\n"
	clock := newManualClock()
	src, err := NewInlineSource(InlineConfig{Body: body, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	s := src.Snapshot(t.Context(), "a.example")
	if s.Access != AccessAvailable || s.Source != "inline" || len(s.Hash) != 16 || !s.FetchedAt.Equal(snapEpoch) || s.Robots.Allowed("bot", "/private") {
		t.Errorf("Snapshot() = %v source %q hash %q fetched %v", s.Access, s.Source, s.Hash, s.FetchedAt)
	}
	clock.Advance(48 * time.Hour)
	if src.Snapshot(t.Context(), "b.example") != s || src.Close() != nil {
		t.Error("an inline snapshot should never change")
	}
	if _, err := NewInlineSource(InlineConfig{Body: body, MaxSize: 1}); err == nil {
		t.Error("NewInlineSource accepted a max size under 500 KiB")
	}
}
