package caddymodule

import (
	"strings"
	"sync"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
)

// defaultTrackedFetchers bounds how many (host, agent) pairs remember when
// the agent last fetched the host's robots.txt: a few hundred crawlers over
// a few dozen hosts fit, and a client inventing agents cannot grow it past
// about a megabyte.
const defaultTrackedFetchers = 10000

// robotsFetchers remembers which agents fetched which host's robots.txt,
// and when, so that a record can say whether the agent had read the rules
// it broke. Agents are the non-generic candidate tokens of the fetch's
// User-Agent, compared case-insensitively.
type robotsFetchers struct {
	mu   sync.Mutex
	max  int
	seen map[fetcherKey]time.Time
}

type fetcherKey struct{ host, agent string }

func newRobotsFetchers(max int) *robotsFetchers {
	return &robotsFetchers{max: max, seen: make(map[fetcherKey]time.Time)}
}

// note records that the client with header ua fetched host's robots.txt
// at now. When full, entries older than a day go first; if none are, an
// arbitrary tenth is dropped, which bounds the memory whatever clients send.
func (f *robotsFetchers) note(host, ua string, now time.Time) {
	toks := enforce.Tokenize(ua)
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < toks.Len() && !toks.Generic(i); i++ {
		if len(f.seen) >= f.max {
			f.shrinkLocked(now)
		}
		f.seen[fetcherKey{strings.ToLower(host), strings.ToLower(toks.At(i))}] = now
	}
}

func (f *robotsFetchers) shrinkLocked(now time.Time) {
	for k, t := range f.seen {
		if now.Sub(t) > enforce.GraceWindow {
			delete(f.seen, k)
		}
	}
	drop := max(f.max/10, 1) // a tenth, and at least one when the bound is under ten
	for k := range f.seen {
		if len(f.seen) < f.max || drop == 0 {
			break
		}
		delete(f.seen, k)
		drop--
	}
}

// fetchedWithin reports whether agent fetched host's robots.txt within d
// before now.
func (f *robotsFetchers) fetchedWithin(host, agent string, now time.Time, d time.Duration) bool {
	if agent == "" {
		return false
	}
	f.mu.Lock()
	t, ok := f.seen[fetcherKey{strings.ToLower(host), strings.ToLower(agent)}]
	f.mu.Unlock()
	return ok && now.Sub(t) <= d
}
