package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gaissmai/bart"
)

// Refresh schedule of range lists, each with its reason.
const (
	// RefreshInterval is how often a list is fetched again: operators
	// publish changes about daily, and Microsoft asks for a daily refresh.
	RefreshInterval = 24 * time.Hour
	// minBackoff and maxBackoff bound the wait after a failed fetch: it
	// doubles from a minute, so an outage costs a few requests an hour and
	// a recovered server is seen within six hours.
	minBackoff = time.Minute
	maxBackoff = 6 * time.Hour
	// maxStoredAge drops a stored copy older than a month at Start: past
	// that, addresses may well have been reassigned.
	maxStoredAge = 30 * 24 * time.Hour
	// defaultFileCheckInterval is how often a local list file is looked
	// at for a change (its modification time and size): a stat costs a
	// microsecond, and an operator's edit is then in force within
	// seconds, as a robots.txt source file's is.
	defaultFileCheckInterval = 5 * time.Second
	// storagePrefix namespaces the verifier's keys in shared storage.
	storagePrefix = "robots_enforce/verify/ranges/"
	// storageTimeout bounds loading stored copies at Start.
	storageTimeout = 5 * time.Second
)

// listState is one range list the verifier uses.
type listState struct {
	name   string // metrics name: the built-in list's name, or "custom"
	key    string // unique: the built-in name, or "custom-" and a hash
	source string // URL or file path
	isFile bool
	tokens []*tokenEntry
	file   fileState // a local file's last look (rangefile.go)
	cur    atomic.Pointer[listCopy]
	// tried is set once a fetch of the list has ended, well or not.
	tried atomic.Bool
}

// listCopy is one loaded version of a list.
type listCopy struct {
	prefixes []netip.Prefix
	fetched  time.Time // when it was fetched (or the file read)
	creation string
}

// storedList is a list's last good copy as kept in Storage.
type storedList struct {
	Source  string          `json:"source"`
	Fetched int64           `json:"fetched"` // Unix seconds
	Body    json.RawMessage `json:"body"`
}

// tokenNames returns the names of the tokens l proves, a copy.
func (l *listState) tokenNames() []string {
	names := make([]string, len(l.tokens))
	for i, e := range l.tokens {
		names[i] = e.name
	}
	return names
}

func customKey(source string) string {
	h := sha256.Sum256([]byte(source))
	return "custom-" + hex.EncodeToString(h[:8])
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// setList installs a new copy of l and rebuilds the tables of its tokens.
func (v *Verifier) setList(l *listState, c *listCopy) {
	l.cur.Store(c)
	v.rangeMu.Lock()
	for _, e := range l.tokens {
		v.rebuildToken(e)
	}
	v.rebuildListed()
	v.rangeMu.Unlock()
	v.emit(Event{Kind: EventListLoaded, List: l.name, URL: l.source, Tokens: l.tokenNames(), Prefixes: len(c.prefixes)})
	v.broadcast()
}

// rebuildToken builds the union of e's loaded lists. v.rangeMu is held, so
// that two lists loaded at once cannot each install a union missing the
// other.
func (v *Verifier) rebuildToken(e *tokenEntry) {
	t := new(bart.Lite)
	complete := true
	for _, l := range e.lists {
		c := l.cur.Load()
		if c == nil {
			complete = false
			continue
		}
		for _, p := range c.prefixes {
			t.Insert(p)
		}
	}
	e.ranges.Store(&tokenRanges{table: t, complete: complete})
}

// loadStored installs l's stored copy, if Storage holds a usable one.
func (v *Verifier) loadStored(ctx context.Context, l *listState) {
	if v.cfg.Storage == nil || l.isFile {
		return
	}
	raw, err := v.cfg.Storage.Load(ctx, storagePrefix+l.key)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			v.reportErr(fmt.Errorf("range list %s: loading stored copy: %w", l.name, err))
		}
		return
	}
	var s storedList
	if err := json.Unmarshal(raw, &s); err != nil {
		v.reportErr(fmt.Errorf("range list %s: stored copy is corrupt, ignored: %w", l.name, err))
		return
	}
	if s.Source != l.source {
		return // the list moved; the copy is of another URL
	}
	fetched := time.Unix(s.Fetched, 0)
	if v.cfg.Now().Sub(fetched) > maxStoredAge {
		return
	}
	rl, err := ParseRangeList(s.Body)
	if err != nil {
		v.reportErr(fmt.Errorf("range list %s: stored copy is corrupt, ignored: %w", l.name, err))
		return
	}
	v.setList(l, &listCopy{prefixes: rl.Prefixes, fetched: fetched, creation: rl.CreationTime})
}

// store keeps body as l's last good copy.
func (v *Verifier) store(ctx context.Context, l *listState, body []byte, fetched time.Time) {
	if v.cfg.Storage == nil || l.isFile {
		return
	}
	raw, err := json.Marshal(storedList{Source: l.source, Fetched: fetched.Unix(), Body: body})
	if err == nil {
		err = v.cfg.Storage.Store(ctx, storagePrefix+l.key, raw)
	}
	if err != nil {
		v.reportErr(fmt.Errorf("range list %s: storing copy: %w", l.name, err))
	}
}

// refreshList fetches l, a published list, once and installs it when it
// parses.
func (v *Verifier) refreshList(ctx context.Context, l *listState) error {
	select {
	case v.fetchSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	body, _, err := v.get(ctx, l.source, "application/json", MaxListSize, true)
	<-v.fetchSem
	if err == nil {
		var rl RangeList
		if rl, err = ParseRangeList(body); err == nil {
			now := v.cfg.Now()
			v.setList(l, &listCopy{prefixes: rl.Prefixes, fetched: now, creation: rl.CreationTime})
			v.store(ctx, l, body, now)
			l.tried.Store(true)
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	err = fmt.Errorf("range list %s (%s): %w", l.name, l.source, err)
	v.emit(Event{Kind: EventListFailed, List: l.name, URL: l.source, Tokens: l.tokenNames(), Err: err, Kept: l.cur.Load() != nil})
	l.tried.Store(true)
	v.broadcast()
	return err
}

// refreshLoop keeps l current until ctx is done: daily after a success,
// with doubling backoff after a failure; a local file is looked at every
// fileCheckInterval and read again when it changed (checkFile).
func (v *Verifier) refreshLoop(ctx context.Context, l *listState) {
	defer v.wg.Done()
	defer v.recoverPanic("range list refresh " + l.name)
	var delay time.Duration
	if c := l.cur.Load(); c != nil {
		delay = RefreshInterval - v.cfg.Now().Sub(c.fetched)
	}
	if l.isFile {
		delay = v.cfg.fileCheckInterval // New read it
	}
	failures := 0
	for {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		if l.isFile {
			if err := v.checkFile(l, false); err != nil {
				v.fileFailed(l, err)
			}
			continue
		}
		if v.refreshList(ctx, l) == nil {
			failures = 0
			delay = RefreshInterval
		} else {
			failures++
			delay = backoff(failures)
		}
	}
}

// backoff is the wait after n consecutive failures.
func backoff(n int) time.Duration {
	d := minBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// EachListAge calls fn with the name and age of each range list in use
// that is loaded: the built-in list's name, or "custom" for an operator's
// list (once per custom list). It allocates nothing, so a metrics scrape
// can call it freely.
func (v *Verifier) EachListAge(now time.Time, fn func(name string, age time.Duration)) {
	for _, l := range v.lists {
		if c := l.cur.Load(); c != nil {
			fn(l.name, now.Sub(c.fetched))
		}
	}
}

// ListAges returns the age of each loaded range list by name; for "custom"
// the oldest of the operator's lists.
func (v *Verifier) ListAges(now time.Time) map[string]time.Duration {
	m := make(map[string]time.Duration, len(v.lists))
	v.EachListAge(now, func(name string, age time.Duration) {
		if old, ok := m[name]; !ok || age > old {
			m[name] = age
		}
	})
	return m
}
