package caddymodule

import (
	"hash/maphash"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/maypok86/otter/v2"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// siteRoute is what the upstream source needs to fetch a site's
// robots.txt through the rest of the route the handler guards: the next
// handler and its server, and a copy of the variables the handlers before
// this one set for the site's first request (root, above all), which the
// rest of the route needs to answer as it answers clients ("root * /srv/{host}"
// is expanded per host by the vars handler). The Store keeps it with the
// site's entry (robotstxt.Store.SnapshotWith), so that it lives exactly as
// long as the site is tracked, and the site is never fetched without it.
type siteRoute struct {
	key    string   // the site's Store key, an origin (robotstxt.SiteKey)
	host   siteHost // the Host header it was built for
	next   caddyhttp.Handler
	server *caddyhttp.Server
	vars   map[string]any
	// local is the address of the listener the site's first request came
	// to: where the site is, for the redirects of its fetches (dialPolicy).
	local netip.AddrPort
	// origin is the host and port reverse_proxy reached for the site's
	// robots.txt, learnt from its internal request: where the site's
	// origin is, for the same redirects.
	origin atomic.Pointer[string]
	// fetcher fetches the site's robots.txt through the route (a
	// siteFetcher, counted), for the Store to keep; nil for sources that
	// fetch none through the route.
	fetcher robotstxt.Fetcher
	// retired is the handler's: set when its configuration is replaced,
	// after which its route must not be used (a new handler gives the
	// site its own route with the site's next request).
	retired *atomic.Bool
	// uses counts the route's first uses (see siteCache.use).
	uses atomic.Uint32
}

// maxCachedHost is the longest Host header whose site a handler caches;
// longer ones name no site (robotstxt.MaxHostNameLength, with a port).
const maxCachedHost = robotstxt.MaxHostNameLength + 7

// siteCache maps, for one handler, the Host headers it sees (by scheme)
// to their sites: the canonical key costs a parse and may allocate, and
// each site's route must be built once per handler. It holds at most max
// Host headers. Past the bound it forgets the one least likely to be
// seen again: it is a W-TinyLFU cache (github.com/maypok86/otter/v2, the
// library of the Store's hosts), whose sketch of recent use keeps the
// Host headers of the sites in use through a flood of one-time ones. A
// site forgotten here comes back with a new route, built from a later
// request's variables, which replaces the one the Store keeps for the
// site and makes a failing site's robots.txt be fetched again at once;
// but no request is refused for it: an entry is a cache of what the next
// request for the host builds again, while the Store keeps the site. So
// this cache does without the Store's doorkeeper (see
// internal/enforce/store_table.go), which guards against otter's window
// growing, at a few dozen entries, to squeeze out the sites in use.
type siteCache struct {
	hosts *otter.Cache[siteHost, *siteRoute]
	// front holds the routes of Host headers in use, one per slot by the
	// header's hash, before the cache: a busy site's request then costs a
	// hash and one atomic load, where the cache's read costs its
	// bookkeeping (the time, an entry built). A slot holds whichever Host
	// last used it; hosts hold every route a slot may give.
	front   [frontSlots]atomic.Pointer[siteRoute]
	seed    maphash.Seed
	retired *atomic.Bool
	// fetcherFor makes the fetcher a new site's robots.txt is fetched
	// through (upstream source); nil for a source that fetches none.
	fetcherFor func(*siteRoute) robotstxt.Fetcher
}

// frontSlots is the number of siteCache.front's slots, a power of two.
const frontSlots = 64

// usesPerCount is how many of a cached site's uses count as one in the
// cache's policy (see site).
const usesPerCount = 16

// siteHost is a Host header as a client sent it, and whether over TLS.
type siteHost struct {
	host string
	tls  bool
}

func newSiteCache(max int, retired *atomic.Bool) *siteCache {
	return &siteCache{
		retired: retired,
		seed:    maphash.MakeSeed(),
		hosts: otter.Must(&otter.Options[siteHost, *siteRoute]{
			MaximumSize: max,
			// The sketch counts uses from the first request; a larger
			// cache grows it once half full (see robotstxt.DefaultMaxHosts).
			InitialCapacity: min(max, robotstxt.DefaultMaxHosts),
			// Maintenance runs on the goroutine that reads or writes: the
			// cache starts no goroutine, and a handler's goes with it.
			Executor: func(fn func()) { fn() },
		}),
	}
}

// site returns the site r is for, and false when its Host names none (see
// robotstxt.SiteKey). next is the handler after this one; a site seen for
// the first time keeps it with a copy of r's variables. Later requests
// cost one lookup and no allocation.
func (c *siteCache) site(r *http.Request, next caddyhttp.Handler) (*siteRoute, bool) {
	h := siteHost{host: r.Host, tls: r.TLS != nil}
	slot := &c.front[maphash.String(c.seed, h.host)&(frontSlots-1)]
	if sr := slot.Load(); sr != nil && sr.host == h {
		c.use(sr)
		return sr, true
	}
	// Past the front, every use is recorded in the cache's policy, not a
	// sample: a busy site misses the front when other Hosts crowd its
	// slot, a flood of one-time Hosts above all, which is when the
	// policy must know which sites are in use.
	if sr, ok := c.hosts.GetIfPresent(h); ok {
		slot.Store(sr)
		return sr, true
	}
	local := localAddr(r)
	key, ok := siteKey(r, local)
	if !ok {
		return nil, false
	}
	srv, _ := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	vars, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	sr := &siteRoute{key: key, host: h, next: next, server: srv, vars: make(map[string]any, len(vars)), local: local, retired: c.retired}
	for k, v := range vars {
		if k != caddyhttp.ClientIPVarKey && k != caddyhttp.TrustedProxyVarKey {
			sr.vars[k] = v
		}
	}
	if c.fetcherFor != nil {
		sr.fetcher = c.fetcherFor(sr)
	}
	if len(r.Host) > maxCachedHost {
		return sr, true // not kept: a Host this long would name no site
	}
	// The first request's route stands if two race for the host.
	sr, _ = c.hosts.SetIfAbsent(h, sr)
	slot.Store(sr)
	return sr, true
}

// use notes one use of sr through its front slot. The cache's policy
// learns of one such use in usesPerCount: recording each costs a busy
// site's every request the policy's bookkeeping, and the frequency it
// keeps needs no more than a sample while the site keeps its slot (uses
// past the front are all recorded: see site). A young route's uses are counted, its first recorded, so that a
// site in use outweighs one-time Hosts from its second request; an older
// one's are drawn at random, so that a busy site's requests on every core
// do not all write one memory word.
func (c *siteCache) use(sr *siteRoute) {
	if sr.uses.Load() < youngUses {
		if sr.uses.Add(1)%usesPerCount == 1 {
			c.used(sr)
		}
		return
	}
	if rand.Uint32()%usesPerCount == 0 {
		c.used(sr)
	}
}

// youngUses is how many uses of a route are counted (see siteCache.use).
const youngUses = 4 * usesPerCount

// used records one use of sr in the cache's policy. A route the cache
// forgot while a front slot held it is the cache's again, so that the
// slot never holds a route the cache would replace with another.
func (c *siteCache) used(sr *siteRoute) {
	if _, ok := c.hosts.GetIfPresent(sr.host); !ok {
		c.hosts.SetIfAbsent(sr.host, sr)
	}
}

// siteKey returns the Store key of r's site, which came to the listener
// at local: its origin, with the scheme the site is served on (RFC 9309
// §2.3: the file applies to its scheme, host and port), the Host canonical
// and its port kept only when it is the listener's own (see
// robotstxt.SiteKey).
func siteKey(r *http.Request, local netip.AddrPort) (string, bool) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	port := ""
	if local.IsValid() {
		port = strconv.Itoa(int(local.Port()))
	}
	return robotstxt.SiteKey(scheme, r.Host, port)
}

// localAddr returns the address of the listener r came to, if known.
func localAddr(r *http.Request) netip.AddrPort {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return netip.AddrPort{}
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(addr.String())
	return ap
}
