package caddymodule

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
)

// siteRoute is what the upstream source needs to fetch a site's
// robots.txt through the rest of the route the handler guards: the next
// handler and its server, and a copy of the variables the handlers before
// this one set for the site's first request (root, above all), which the
// rest of the route needs to answer as it answers clients ("root * /srv/{host}"
// is expanded per host by the vars handler). The Store keeps it with the
// site's entry (enforce.Store.SnapshotWith), so that it lives exactly as
// long as the site is tracked, and the site is never fetched without it.
type siteRoute struct {
	key    string // the site's Store key, an origin (enforce.SiteKey)
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
	// retired is the handler's: set when its configuration is replaced,
	// after which its route must not be used (a new handler gives the
	// site its own route with the site's next request).
	retired *atomic.Bool
}

// maxCachedHost is the longest Host header whose site a handler caches;
// longer ones name no site (enforce.MaxHostNameLength, with a port).
const maxCachedHost = enforce.MaxHostNameLength + 7

// siteCache maps, for one handler, the Host headers it sees (by scheme)
// to their sites: the canonical key costs a parse and may allocate, and
// each site's route must be built once per handler. It holds at most max
// entries; past it, it forgets one: an entry is only a cache of what the
// next request for the host builds again, while the Store keeps the site.
type siteCache struct {
	hosts   [2]sync.Map // Host header → *siteRoute; [0] plain HTTP, [1] HTTPS
	size    atomic.Int64
	max     int64
	retired *atomic.Bool
}

func newSiteCache(max int, retired *atomic.Bool) *siteCache {
	return &siteCache{max: int64(max), retired: retired}
}

// site returns the site r is for, and false when its Host names none (see
// enforce.SiteKey). next is the handler after this one; a site seen for
// the first time keeps it with a copy of r's variables. Later requests
// cost one lookup and no allocation.
func (c *siteCache) site(r *http.Request, next caddyhttp.Handler) (*siteRoute, bool) {
	tls := r.TLS != nil
	hosts := &c.hosts[b2i(tls)]
	if e, ok := hosts.Load(r.Host); ok {
		return e.(*siteRoute), true
	}
	local := localAddr(r)
	key, ok := siteKey(r, local)
	if !ok {
		return nil, false
	}
	srv, _ := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	vars, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	sr := &siteRoute{key: key, next: next, server: srv, vars: make(map[string]any, len(vars)), local: local, retired: c.retired}
	for k, v := range vars {
		if k != caddyhttp.ClientIPVarKey && k != caddyhttp.TrustedProxyVarKey {
			sr.vars[k] = v
		}
	}
	if len(r.Host) > maxCachedHost {
		return sr, true // not kept: a Host this long would name no site
	}
	for c.size.Load() >= c.max && c.forgetOne() {
	}
	if prev, loaded := hosts.LoadOrStore(r.Host, sr); loaded {
		return prev.(*siteRoute), true
	}
	c.size.Add(1)
	return sr, true
}

// forgetOne forgets one cached host, and reports whether there was one.
func (c *siteCache) forgetOne() bool {
	for i := range c.hosts {
		forgot := false
		c.hosts[i].Range(func(k, _ any) bool {
			if _, loaded := c.hosts[i].LoadAndDelete(k); loaded {
				c.size.Add(-1)
				forgot = true
			}
			return false
		})
		if forgot {
			return true
		}
	}
	return false
}

// siteKey returns the Store key of r's site, which came to the listener
// at local: its origin, with the scheme the site is served on (RFC 9309
// §2.3: the file applies to its scheme, host and port), the Host canonical
// and its port kept only when it is the listener's own (see
// enforce.SiteKey).
func siteKey(r *http.Request, local netip.AddrPort) (string, bool) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	port := ""
	if local.IsValid() {
		port = strconv.Itoa(int(local.Port()))
	}
	return enforce.SiteKey(scheme, r.Host, port)
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
