package verify

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Key directory fetching, each bound with its reason.
const (
	// wellKnownDirectory is the directory's path at an agent's origin
	// (webbotauth draft, IANA "Well-Known URIs").
	wellKnownDirectory = "/.well-known/http-message-signatures-directory"
	// directoryMediaType is the media type the draft requires of it.
	directoryMediaType = "application/http-message-signatures-directory+json"
	// maxDirectorySize bounds a directory body: a few keys take under 2 KB.
	maxDirectorySize = 64 << 10
	// minDirectoryTTL and maxDirectoryTTL bound the Cache-Control lifetime
	// honoured: below five minutes a directory is fetched too often, past a
	// day a removed key keeps verifying too long (the draft's key removal
	// is the only revocation). defaultDirectoryTTL applies without one.
	minDirectoryTTL     = 5 * time.Minute
	maxDirectoryTTL     = 24 * time.Hour
	defaultDirectoryTTL = time.Hour
	// minNegativeTTL and maxNegativeTTL bound the wait after a failed
	// fetch; the draft says negative entries should expire within five
	// minutes.
	minNegativeTTL = 30 * time.Second
	maxNegativeTTL = 5 * time.Minute
	// minRefetchForKey is how old a directory must be before a signature
	// with a keyid it lacks makes it fetched again: an agent may have added
	// a key since (the draft lets a verifier fetch on an unknown keyid),
	// and a forger repeating unknown keyids causes one fetch per agent per
	// this interval at most.
	minRefetchForKey = 5 * time.Minute
	// directoryQueueSize bounds directory fetches waiting: one per known
	// agent is all there can be.
	directoryQueueSize = 16
)

// dirEntry is the cached directory of one signature agent, or the keys
// the configuration pins for it.
type dirEntry struct {
	keys     map[string]dirKey // by thumbprint; nil until a fetch succeeds
	fetched  time.Time         // when keys were fetched
	expires  time.Time         // when keys go stale
	retryAt  time.Time         // after a failure: no fetch before
	failures int
	queued   bool
	// gen counts successful fetches, and fresh holds expires in Unix
	// seconds: read without the lock by the signature cache, which trusts
	// a remembered key while the directory it came from is unchanged and
	// current.
	gen   atomic.Uint64
	fresh atomic.Int64
}

// directory returns the keys of origin's directory and whether they are
// loaded, queueing a fetch when they are missing or stale; failed reports
// a failed last fetch with nothing cached.
func (w *wbaState) directory(origin string, now time.Time) (keys map[string]dirKey, failed bool) {
	keys, failed, _, _ = w.directoryEntry(origin, now)
	return keys, failed
}

// directoryEntry is directory, also returning the entry and its
// generation, read with the keys under the lock so that they agree. An
// agent whose keys are pinned has them at once, and no fetch.
func (w *wbaState) directoryEntry(origin string, now time.Time) (map[string]dirKey, bool, *dirEntry, uint64) {
	if d := w.pinned[origin]; d != nil {
		return d.keys, false, d, d.gen.Load()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.dirs[origin]
	if d == nil {
		d = &dirEntry{}
		w.dirs[origin] = d
	}
	if !d.queued && (d.keys == nil || !now.Before(d.expires)) && !now.Before(d.retryAt) && !w.v.closed.Load() {
		select {
		case w.queue <- origin:
			d.queued = true
		default:
		}
	}
	return d.keys, d.keys == nil && d.failures > 0, d, d.gen.Load()
}

// refetchForKey queues a fetch of origin's directory when the copy held is
// older than minRefetchForKey (or one is already queued), and reports
// whether an answer is coming; a signature whose keyid the copy lacks is
// then Pending rather than Forged. Pinned keys are never fetched: a keyid
// they lack is Forged.
func (w *wbaState) refetchForKey(origin string, now time.Time) bool {
	if w.pinned[origin] != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.dirs[origin]
	if d == nil {
		return false
	}
	if d.queued {
		return true
	}
	if now.Sub(d.fetched) < minRefetchForKey || now.Before(d.retryAt) || w.v.closed.Load() {
		return false
	}
	select {
	case w.queue <- origin:
		d.queued = true
		return true
	default:
		return false
	}
}

// worker fetches queued directories until ctx is done.
func (w *wbaState) worker(ctx context.Context) {
	defer w.v.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case origin := <-w.queue:
			w.fetch(ctx, origin)
		}
	}
}

// fetch gets origin's directory once, over https, without redirects. A
// failure keeps the cached keys: the draft says a directory that fails to
// resolve is no evidence and must not evict them.
func (w *wbaState) fetch(ctx context.Context, origin string) {
	v := w.v
	url := origin + wellKnownDirectory
	var keys map[string]dirKey
	var ttl time.Duration
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		body, hdr, err := v.get(ctx, url, directoryMediaType, maxDirectorySize, false)
		if err != nil {
			return err
		}
		if ct := mediaType(hdr.Get("Content-Type")); ct != directoryMediaType && ct != "application/json" {
			// application/json is accepted too: early deployments serve it.
			return fmt.Errorf("content type %q", ct)
		}
		keys, err = parseDirectory(body)
		ttl = cacheTTL(hdr)
		return err
	}()
	if ctx.Err() != nil {
		return
	}
	now := v.cfg.Now()
	w.mu.Lock()
	d := w.dirs[origin]
	d.queued = false
	if err == nil {
		d.keys, d.fetched, d.expires, d.failures, d.retryAt = keys, now, now.Add(ttl), 0, time.Time{}
		d.gen.Add(1)
		d.fresh.Store(d.expires.Unix())
	} else {
		d.failures++
		d.retryAt = now.Add(negativeTTL(d.failures))
	}
	w.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("key directory %s: %w", url, err)
		v.emit(Event{Kind: EventDirectoryFailed, URL: url, Err: err})
		v.reportErr(err)
	} else {
		v.emit(Event{Kind: EventDirectoryLoaded, URL: url})
	}
	v.broadcast()
}

// negativeTTL doubles from minNegativeTTL up to maxNegativeTTL.
func negativeTTL(failures int) time.Duration {
	d := minNegativeTTL
	for i := 1; i < failures && d < maxNegativeTTL; i++ {
		d *= 2
	}
	return min(d, maxNegativeTTL)
}

// cacheTTL reads Cache-Control max-age (RFC 9111 §5.2.2.1), bounded;
// no-store or no-cache give the minimum.
func cacheTTL(h http.Header) time.Duration {
	ttl := defaultDirectoryTTL
	for _, d := range strings.Split(strings.Join(h.Values("Cache-Control"), ","), ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "no-store" || d == "no-cache":
			return minDirectoryTTL
		case strings.HasPrefix(d, "max-age="):
			if n, err := strconv.ParseInt(strings.Trim(d[len("max-age="):], `"`), 10, 64); err == nil && n >= 0 {
				ttl = time.Duration(min(n, int64(maxDirectoryTTL/time.Second))) * time.Second
			}
		}
	}
	return min(max(ttl, minDirectoryTTL), maxDirectoryTTL)
}

func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}
