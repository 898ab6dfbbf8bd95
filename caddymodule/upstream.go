package caddymodule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// upstreamFetcher fetches a site's own robots.txt through the rest of the
// route the handler guards: an internal GET sent to the next handler, so
// that it works the same before reverse_proxy to any origin, before
// file_server, or before respond. A redirect to another site goes over the
// network instead (RFC 9309 §2.3.1.2 follows redirects across hosts). Each
// site fetches through a siteFetcher bound to its route, which the Store
// keeps with the site (robotstxt.Store.SnapshotWith): the site's own, given
// by the newest handler that served it. As the Store's own Fetcher, for a
// fetch without a route, it refuses.
type upstreamFetcher struct {
	external robotstxt.Fetcher
	logger   func() *zap.Logger
}

// internalKey marks the handler's own robots.txt requests in their context.
type internalKey struct{}

// errRouteRetired fails a fetch whose route belongs to a configuration
// that was replaced: the site's next request brings the new one.
var errRouteRetired = errors.New("the route of a replaced configuration; waiting for the new one")

// Fetch implements robotstxt.Fetcher for a fetch without a route: never
// fetched blind, since without the route's variables file_server would
// answer 404, which reads as "no rules".
func (f *upstreamFetcher) Fetch(ctx context.Context, rawURL string, limit int) (robotstxt.Response, error) {
	return robotstxt.Response{}, errors.New("internal robots.txt request: no route for the site")
}

// siteFetcher fetches one site's robots.txt through its route.
type siteFetcher struct {
	up *upstreamFetcher
	sr *siteRoute
}

// Fetch implements robotstxt.Fetcher.
func (f siteFetcher) Fetch(ctx context.Context, rawURL string, limit int) (robotstxt.Response, error) {
	sr := f.sr
	if origin := robotstxt.FetchOrigin(ctx); origin != "" && !strings.EqualFold(robotstxt.URLHost(origin), robotstxt.URLHost(rawURL)) {
		// A redirect to another host: over the network, where the site
		// itself is (see dialPolicy).
		p := &dialPolicy{site: sr.local}
		if o := sr.origin.Load(); o != nil {
			p.origin = *o
		}
		return f.up.external.Fetch(withDialPolicy(ctx, p), rawURL, limit)
	}
	if sr.retired.Load() {
		return robotstxt.Response{}, errRouteRetired
	}
	return f.up.serveInternal(ctx, sr, rawURL, limit)
}

// serveInternal sends the internal request through sr. A handler of the
// route may panic on what the origin does (reverse_proxy aborts with
// http.ErrAbortHandler when a body is cut short, times out or is cut off
// by the size limit): net/http recovers such panics for client requests,
// and this does the same for the handler's own, so that no origin can end
// the process. A body cut off at the limit is a robots.txt read up to it
// (RFC 9309 §2.5); any other abort, an unreachable file (§2.3.1.4).
func (f *upstreamFetcher) serveInternal(ctx context.Context, sr *siteRoute, rawURL string, limit int) (resp robotstxt.Response, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return robotstxt.Response{}, fmt.Errorf("internal robots.txt request: %w", err)
	}
	req, err := http.NewRequestWithContext(context.WithValue(ctx, internalKey{}, true), http.MethodGet, rawURL, nil)
	if err != nil {
		return robotstxt.Response{}, fmt.Errorf("internal robots.txt request: %w", err)
	}
	// The site's robots.txt is asked for with the Host a client sent for
	// the site, as the route and the origin answer it: the site key
	// writes every spelling one way (loopback names, the listener's port),
	// which the origin may not know. A redirect to another spelling of the
	// host keeps its own.
	host := u.Host
	if origin := robotstxt.FetchOrigin(ctx); sr.host.host != "" && (origin == "" || robotstxt.URLHost(origin) == u.Host) {
		host = sr.host.host
	}
	req.Host, req.RequestURI, req.RemoteAddr = host, u.RequestURI(), "127.0.0.1:0"
	req.Header.Set("User-Agent", robotstxt.FetchUserAgent)
	rec := &capturingWriter{ctx: ctx, header: make(http.Header), boundedBody: boundedBody{limit: limit}}
	repl := caddy.NewReplacer()
	req = caddyhttp.PrepareRequest(req, repl, rec, sr.server)
	defer func() {
		// Where reverse_proxy went, if it did: the origin's address,
		// where redirects from it may lead (dialPolicy).
		if hp, ok := repl.GetString("http.reverse_proxy.upstream.hostport"); ok && hp != "" {
			sr.origin.Store(&hp)
		}
	}()
	vars := req.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	for k, v := range sr.vars {
		vars[k] = v
	}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if rec.truncated {
			resp, err = rec.response(), nil // stopped by the size limit
			return
		}
		if v != http.ErrAbortHandler {
			f.logger().Error("panic in the internal robots.txt request", zap.String("url", rawURL),
				zap.Any("panic", v), zap.Stack("stack"))
		}
		cause := any(v)
		if ctx.Err() != nil {
			cause = ctx.Err() // a timeout or a reload, more telling than the abort
		}
		resp, err = robotstxt.Response{}, fmt.Errorf("internal robots.txt request for %s aborted: %v", rawURL, cause)
	}()
	if err := sr.next.ServeHTTP(rec, req); err != nil {
		if rec.truncated {
			return rec.response(), nil
		}
		// A handler error (file_server's 404, reverse_proxy's 502) is the
		// status the site would answer with; handle_errors is not run for
		// internal requests.
		var he caddyhttp.HandlerError
		if errors.As(err, &he) && he.StatusCode != 0 {
			return robotstxt.Response{StatusCode: he.StatusCode, Header: rec.header}, nil
		}
		if ctx.Err() != nil {
			return robotstxt.Response{}, ctx.Err()
		}
		return robotstxt.Response{StatusCode: http.StatusInternalServerError, Header: rec.header}, nil
	}
	if ctx.Err() != nil && !rec.truncated {
		return robotstxt.Response{}, fmt.Errorf("internal robots.txt request for %s: %w", rawURL, ctx.Err())
	}
	return rec.response(), nil
}

// capturingWriter records a response, keeping at most limit octets of its
// body. Once the body goes past the limit, or the fetch's time is up, a
// write fails, so that the handler writing stops: a robots.txt is read up
// to the limit plus one octet, never transferred whole, however large or
// slow the origin's answer.
type capturingWriter struct {
	ctx    context.Context
	header http.Header
	status int
	boundedBody
}

// errBodyLimit stops a handler writing past what is read of a robots.txt.
var errBodyLimit = errors.New("robots.txt body past the size limit")

// response returns what was recorded.
func (w *capturingWriter) response() robotstxt.Response {
	status := cmp.Or(w.status, http.StatusOK)
	return robotstxt.Response{StatusCode: status, Header: w.header, Body: w.body, Truncated: w.truncated}
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
	if w.truncated {
		return 0, errBodyLimit
	}
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	w.keep(p)
	if w.truncated {
		return 0, errBodyLimit
	}
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
