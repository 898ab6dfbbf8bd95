package robotstxt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultCheckInterval is how often, at most, a FileSource looks at its
// file: an edit takes effect within seconds, and one stat every few seconds
// costs nothing measurable.
const DefaultCheckInterval = 5 * time.Second

// FileConfig configures a FileSource.
type FileConfig struct {
	// Path names the robots.txt file. Required.
	Path string
	// CheckInterval is the least time between two looks at the file's
	// modification time and size; the default is DefaultCheckInterval.
	CheckInterval time.Duration
	// MaxSize is how many octets are parsed, as in StoreConfig.
	MaxSize int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// A FileSource serves a robots.txt read from a local file, the same for
// every host. It reads the file again when its modification time or size
// changes, looking at most once per CheckInterval. The first request after
// the interval makes the look itself, a stat and a read when the file
// changed; requests meanwhile get the current snapshot without waiting.
// Recheck looks at once, for a config reload. When the file cannot be
// read, the last copy stays in force, with Err saying why.
//
// Snapshots have Source "file:" followed by the configured path. A
// FileSource is safe for concurrent use.
type FileSource struct {
	path     string
	maxSize  int
	interval time.Duration
	now      func() time.Time

	snap      atomic.Pointer[Snapshot]
	nextCheck atomic.Int64 // Unix nanoseconds

	// checking is held by the check under way: only it sets snap and the
	// fields below. A request that finds it held does not wait (TryLock);
	// Recheck does.
	checking sync.Mutex
	modTime  time.Time
	size     int64
	reread   bool // the last check failed, or Recheck asks: read even if the file looks the same
}

var _ Source = (*FileSource)(nil)

// NewFileSource reads the file and returns a FileSource serving it. It
// fails when the configuration is invalid or the file cannot be read, so
// that a configuration naming a missing file is refused up front.
func NewFileSource(cfg FileConfig) (*FileSource, error) {
	if cfg.Path == "" {
		return nil, errors.New("robots.txt file source: a path is required")
	}
	maxSize, err := checkMaxSize(cfg.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("robots.txt file %s: %w", cfg.Path, err)
	}
	if cfg.CheckInterval < 0 {
		return nil, fmt.Errorf("robots.txt file %s: check interval %v is negative", cfg.Path, cfg.CheckInterval)
	}
	f := &FileSource{
		path:     cfg.Path,
		maxSize:  maxSize,
		interval: cmp.Or(cfg.CheckInterval, DefaultCheckInterval),
		now:      cfg.Now,
	}
	if f.now == nil {
		f.now = time.Now
	}
	now := f.now()
	if err := f.load(now); err != nil {
		return nil, err
	}
	f.nextCheck.Store(now.Add(f.interval).UnixNano())
	return f, nil
}

// Snapshot returns the snapshot of the file; host is ignored.
func (f *FileSource) Snapshot(ctx context.Context, host string) *Snapshot {
	return f.snapshotAt(f.now())
}

func (f *FileSource) snapshotAt(now time.Time) *Snapshot {
	if now.UnixNano() >= f.nextCheck.Load() && f.checking.TryLock() {
		f.check(now)
		f.checking.Unlock()
	}
	return f.snap.Load()
}

// Recheck looks at the file now, whatever the check interval, and reads it
// even when its modification time and size look unchanged: an edit within
// the file system's timestamp resolution, or a copy that kept the old
// time, changes neither. A config reload calls it, so that the file the
// operator edited before reloading is in force when the new configuration
// serves, not up to CheckInterval later. A change is a new version, as
// when a request finds it: the earlier ones stay in the snapshot's
// history. When the file cannot be read, the last copy stays in force,
// with Err saying why, and Recheck returns the error.
func (f *FileSource) Recheck() error {
	f.checking.Lock()
	defer f.checking.Unlock()
	f.reread = true
	return f.check(f.now())
}

// check looks at the file, reading it when it changed, and schedules the
// next look; the caller holds checking.
func (f *FileSource) check(now time.Time) error {
	f.nextCheck.Store(now.Add(f.interval).UnixNano())
	if err := f.load(now); err != nil {
		f.fail(now, err)
		return err
	}
	return nil
}

// Close implements Source; a FileSource holds no goroutine or open file.
func (f *FileSource) Close() error { return nil }

// load reads the file if it changed since the last read and publishes its
// snapshot.
func (f *FileSource) load(now time.Time) error {
	fi, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("reading robots.txt file: %w", err)
	}
	if fi.IsDir() {
		return fmt.Errorf("reading robots.txt file %s: is a directory", f.path)
	}
	prev := f.snap.Load()
	if prev != nil && !f.reread && fi.ModTime().Equal(f.modTime) && fi.Size() == f.size {
		return nil
	}
	file, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("reading robots.txt file: %w", err)
	}
	defer file.Close()
	// One octet past the limit lets the parser see that the file goes on.
	body, err := io.ReadAll(io.LimitReader(file, int64(f.maxSize)+1))
	if err != nil {
		return fmt.Errorf("reading robots.txt file %s: %w", f.path, err)
	}
	f.modTime, f.size, f.reread = fi.ModTime(), fi.Size(), false
	s := &Snapshot{Source: "file:" + f.path, FetchedAt: now, CheckedAt: now}
	s.setFile(prev, body, false, f.maxSize)
	s.Body = body
	f.snap.Store(s.follow(prev, now))
	return nil
}

// fail keeps the last copy in force, recording err.
func (f *FileSource) fail(now time.Time, err error) {
	f.reread = true
	prev := f.snap.Load()
	s := *prev
	s.Err = err.Error()
	s.CheckedAt = now
	s.Failures++
	if s.FailingSince.IsZero() {
		s.FailingSince = now
	}
	f.snap.Store(s.follow(prev, now))
}

// An InlineSource serves a robots.txt given as text in the configuration,
// the same for every host. Its snapshot has Source "inline" and never
// changes.
type InlineSource struct {
	snap *Snapshot
}

var _ Source = (*InlineSource)(nil)

// InlineConfig configures an InlineSource.
type InlineConfig struct {
	// Body is the robots.txt text.
	Body string
	// MaxSize is how many octets are parsed, as in StoreConfig.
	MaxSize int
	// Now returns the current time, recorded as the snapshot's FetchedAt;
	// nil means time.Now.
	Now func() time.Time
}

// NewInlineSource parses cfg.Body and returns a source serving it.
func NewInlineSource(cfg InlineConfig) (*InlineSource, error) {
	maxSize, err := checkMaxSize(cfg.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("inline robots.txt: %w", err)
	}
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	t := now()
	s := &Snapshot{Source: "inline", FetchedAt: t, ChangedAt: t, CheckedAt: t}
	s.setFile(nil, []byte(cfg.Body), false, maxSize)
	s.Body = []byte(cfg.Body)
	return &InlineSource{snap: s}, nil
}

// Snapshot returns the snapshot of the text; host is ignored.
func (s *InlineSource) Snapshot(ctx context.Context, host string) *Snapshot { return s.snap }

// Close implements Source; it does nothing.
func (s *InlineSource) Close() error { return nil }
