package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
)

// upstreamFetcher fetches a site's own robots.txt through the rest of the
// route the handler guards: an internal GET sent to the next handler, so
// that it works the same before reverse_proxy to any origin, before
// file_server, or before respond. A redirect to another site goes over the
// network instead (RFC 9309 §2.3.1.2 follows redirects across hosts).
type upstreamFetcher struct {
	external enforce.Fetcher
	// route is the next handler and server, taken from the first request:
	// a Fetcher has no request of its own, and Caddy builds a route's
	// chain once, so every request brings the same ones.
	route atomic.Pointer[route]
	// sites holds, per scheme (plain HTTP, then HTTPS) and host, the
	// site's Store key and a copy of the variables the handlers before
	// this one set on the first request for it (root, above all), which
	// the rest of the route needs to answer; see site.
	sites     [2]sync.Map // lower-case host → *siteEntry
	sitesSize atomic.Int64
	maxSites  int64
}

type route struct {
	next   caddyhttp.Handler
	server *caddyhttp.Server
}

// internalKey marks the handler's own robots.txt requests in their context.
type internalKey struct{}

// remember keeps the route of r for later fetches.
func (f *upstreamFetcher) remember(r *http.Request, next caddyhttp.Handler) {
	if f.route.Load() != nil {
		return
	}
	srv, _ := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	f.route.CompareAndSwap(nil, &route{next: next, server: srv})
}

// Fetch implements enforce.Fetcher.
func (f *upstreamFetcher) Fetch(ctx context.Context, rawURL string, limit int) (enforce.Response, error) {
	rt := f.route.Load()
	if origin := enforce.FetchOrigin(ctx); rt == nil || origin != "" && !strings.EqualFold(urlHost(origin), urlHost(rawURL)) {
		return f.external.Fetch(ctx, rawURL, limit)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return enforce.Response{}, fmt.Errorf("internal robots.txt request: %w", err)
	}
	req, err := http.NewRequestWithContext(context.WithValue(ctx, internalKey{}, true), http.MethodGet, rawURL, nil)
	if err != nil {
		return enforce.Response{}, fmt.Errorf("internal robots.txt request: %w", err)
	}
	req.Host, req.RequestURI, req.RemoteAddr = u.Host, u.RequestURI(), "127.0.0.1:0"
	req.Header.Set("User-Agent", internalUserAgent)
	rec := &capturingWriter{header: make(http.Header), boundedBody: boundedBody{limit: limit}}
	req = caddyhttp.PrepareRequest(req, caddy.NewReplacer(), rec, rt.server)
	if saved, ok := f.sites[b2i(u.Scheme == "https")].Load(strings.ToLower(u.Host)); ok {
		vars := req.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
		for k, v := range saved.(*siteEntry).vars {
			vars[k] = v
		}
	}
	if err := rt.next.ServeHTTP(rec, req); err != nil {
		// A handler error (file_server's 404, reverse_proxy's 502) is the
		// status the site would answer with; handle_errors is not run for
		// internal requests.
		var he caddyhttp.HandlerError
		if errors.As(err, &he) && he.StatusCode != 0 {
			return enforce.Response{StatusCode: he.StatusCode, Header: rec.header}, nil
		}
		if ctx.Err() != nil {
			return enforce.Response{}, ctx.Err()
		}
		return enforce.Response{StatusCode: http.StatusInternalServerError, Header: rec.header}, nil
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return enforce.Response{StatusCode: rec.status, Header: rec.header, Body: rec.body, Truncated: rec.truncated}, nil
}

// capturingWriter records a response, keeping at most limit octets of its
// body. It reports every write as whole, so that the handler writing it is
// not cut short.
type capturingWriter struct {
	header http.Header
	status int
	boundedBody
}

func (w *capturingWriter) Header() http.Header { return w.header }

func (w *capturingWriter) WriteHeader(status int) {
	if status < 200 {
		return // informational (103 Early Hints): the final status follows
	}
	if w.status == 0 {
		w.status = status
	}
}

func (w *capturingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.keep(p)
	return len(p), nil
}

// boundedBody keeps the first limit octets of a response body, and whether
// there were more: a robots.txt is read up to the size limit plus one.
type boundedBody struct {
	body      []byte
	limit     int
	truncated bool
}

// keep adds p to the body, as far as the limit allows.
func (b *boundedBody) keep(p []byte) {
	if room := b.limit - len(b.body); len(p) > room {
		b.body, b.truncated = append(b.body, p[:max(room, 0)]...), true
	} else {
		b.body = append(b.body, p...)
	}
}

// Flush is a no-op: the response is read whole.
func (w *capturingWriter) Flush() {}
