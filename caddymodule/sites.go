package caddymodule

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// siteEntry is what an upstreamFetcher keeps of a site.
type siteEntry struct {
	key  string // the site's Store key
	vars map[string]any
}

// site returns the Store key of r's site: its host for HTTPS, and
// "http://" and its host for plain HTTP, so that robots.txt is fetched,
// and named in records, with the scheme the site is served on (RFC 9309
// §2.3: the file applies to its scheme, host and port).
//
// The first time a site is seen, it keeps a copy of r's variables: the
// internal request then reaches the rest of the route as the client's
// would ("root * /srv/{host}" is expanded per host by the vars handler).
// Later requests cost one lookup and no allocation. At most maxSites
// sites are kept, as many hosts as the Store tracks; when full, one saved
// site is forgotten to make room, and gets its variables back with its
// next request, which always comes before its next fetch.
func (f *upstreamFetcher) site(r *http.Request) string {
	host := strings.ToLower(r.Host) // as the Store keys hosts; no copy when already lower-case
	sites := &f.sites[b2i(r.TLS != nil)]
	if e, ok := sites.Load(host); ok {
		return e.(*siteEntry).key
	}
	for f.sitesSize.Load() >= f.maxSites {
		if !f.forgetOne() {
			break
		}
	}
	vars, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	e := &siteEntry{key: strings.Clone(host), vars: make(map[string]any, len(vars))}
	if r.TLS == nil {
		e.key = "http://" + host
	}
	for k, v := range vars {
		if k != caddyhttp.ClientIPVarKey && k != caddyhttp.TrustedProxyVarKey {
			e.vars[k] = v
		}
	}
	if _, loaded := sites.LoadOrStore(strings.Clone(host), e); !loaded {
		f.sitesSize.Add(1)
	}
	return e.key
}

// forgetOne forgets one saved site, and reports whether there was one.
func (f *upstreamFetcher) forgetOne() bool {
	forgot := false
	for i := range f.sites {
		f.sites[i].Range(func(k, _ any) bool {
			if _, loaded := f.sites[i].LoadAndDelete(k); loaded {
				f.sitesSize.Add(-1)
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
