package caddymodule

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
)

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	switch then, usage, err := h.judge(w, r, next); then {
	case toNext:
		if usage != "" {
			w = h.withUsage(w, usage)
		}
		return next.ServeHTTP(w, r)
	case toRobotsTxt:
		return h.serveRobotsTxt(w, r, next)
	default:
		return err
	}
}

// What ServeHTTP does once a request is judged.
type judged uint8

const (
	toNext      judged = iota // pass the request on
	toRobotsTxt               // pass it on: it asks for /robots.txt
	answered                  // denied: judge wrote the answer, or returns the error Caddy answers with
)

// judge decides a request, makes the decision known (placeholders,
// metrics, the compliance record) and, when it denies in enforce mode,
// answers. It is kept out of line, and ServeHTTP holds nothing of its
// own: the rest of the route then runs on a stack no deeper than with a
// handler that does nothing, and the goroutines serving requests need no
// more stack for this one.
//
//go:noinline
func (h *Handler) judge(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) (then judged, usage string, err error) {
	ua := userAgent(r.Header)
	if ua == internalUserAgent && r.Context().Value(internalKey{}) != nil {
		return toNext, "", nil // the handler's own robots.txt request
	}
	sent := sentRequestOf(r)
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if sent.path == "/robots.txt" {
		// Exactly the path the next handler reads, as Go parsed it:
		// "/robots.txt#/../x" or "/robots.txt/.." are other paths.
		if repl != nil {
			repl.Map(constantProviders[enforce.ReasonRobotsTxt][1])
		}
		return toRobotsTxt, "", nil
	}

	if h.sites != nil && sent.path != r.URL.Path {
		h.warnRewritten(sent.path, r.URL.Path)
	}
	site, snap := h.snapshot(r, next)
	// A decision's Path points into its Readings, which would therefore
	// leave the stack with the decision: pooled, they cost no allocation.
	rd := h.readings.Get().(*enforce.Readings)
	defer h.readings.Put(rd)
	var dec enforce.Decision
	req := enforce.Request{Target: sent.target, Unreadable: !sent.readable, UserAgent: ua}
	h.decider.DecideInto(&dec, snap, &req, rd)
	id := h.identity(r, snap, &req, rd, &dec)
	if dec.Allowed && dec.Bound && hasRewriteHeader(r.Header) {
		h.judgeRewriteHeaders(r, sent.target, snap, &req, &dec)
	}

	usage = h.usageFor(snap, &dec)
	h.handOn(repl, &dec)
	if usage != "" && repl != nil {
		repl.Set(phContentUsage, usage)
	}
	if dec.Bound && (!dec.Allowed || h.LogAllowed) {
		h.record(r, site, &sent, &req, id, usage, &dec)
	}
	if dec.Allowed || !h.enforce {
		return toNext, usage, nil
	}
	return answered, "", h.deny(w, &dec)
}

// snapshot returns r's site (its Store key; "" when r names none, or for
// a source that serves every site the same file) and the robots.txt in
// force for it.
func (h *Handler) snapshot(r *http.Request, next caddyhttp.Handler) (string, *enforce.Snapshot) {
	if h.sites == nil {
		return "", h.state.source.Snapshot(r.Context(), h.fixed) // the site is named when a record needs it
	}
	sr, ok := h.sites.site(r, next)
	if !ok {
		// No site: the Store refuses the empty key as it refuses any
		// host it cannot fetch (enforce.RefusalInvalidHost).
		return "", h.state.store.Snapshot(r.Context(), "")
	}
	return sr.key, h.state.store.SnapshotWith(r.Context(), sr.key, sr)
}

// warnRewritten says, once per handler, that a handler before this one
// rewrote the path (handle_path, uri strip_prefix): robots.txt belongs to
// the site (RFC 9309 §2.3), and the handler judges the path the client
// sent, but with the upstream source it fetches robots.txt through the
// rest of its own route, which answers /robots.txt for the rewritten
// site, not the site's own file.
//
//go:noinline
func (h *Handler) warnRewritten(sent, now string) {
	if h.rewriteWarned.CompareAndSwap(false, true) {
		h.logger.Warn("robots_enforce runs after a path rewrite: it judges the path the client sent against the robots.txt this route answers for /robots.txt, which may not be the site's own; place robots_enforce at the site level, or use source url or file",
			zap.String("sent_path", sent), zap.String("rewritten_path", now))
	}
}

// sentRequest is what the handler reads of a request as the client sent
// it, before any rewrite: Caddy keeps the original method, URL and remote
// address (not the headers, which the handler reads before the directives
// that change them).
type sentRequest struct {
	method, uri, path, rawQuery, remoteAddr string
	// target is what decisions judge (see targetOf), and readable false
	// when the URL has no path they could judge as the server reads it.
	target   string
	readable bool
}

// sentRequestOf returns the request r was as the client sent it. It is
// kept out of line: Caddy keeps the original as a whole http.Request,
// which is copied to be read, and that copy need not sit on the stack for
// the rest of the request.
//
//go:noinline
func sentRequestOf(r *http.Request) sentRequest {
	orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request)
	if !ok || orig.URL == nil {
		orig = *r
	}
	target, readable := targetOf(orig.Method, orig.URL, orig.RequestURI)
	return sentRequest{orig.Method, orig.RequestURI, orig.URL.Path, orig.URL.RawQuery, orig.RemoteAddr, target, readable}
}

// targetOf returns the request target a decision judges: the path and
// query of u, the request's URL as Go's server parsed it from what the
// client sent, in their escaped form. This is what the handlers after
// this one read (file_server opens u.Path; reverse_proxy forwards the
// escaped path and query), so no spelling the server reads one way can be
// judged another: "x:/private/a" is the path "/private/a", and a raw "#"
// is part of the path, not the start of a fragment. The raw request line
// (requestURI) is used only when it is exactly that target, to avoid a
// copy. readable is false for a URL with no such path (opaque, like
// "x:private"), which decisions then fail closed on.
func targetOf(method string, u *url.URL, requestURI string) (target string, readable bool) {
	if u.Opaque != "" {
		return "", false
	}
	p := u.EscapedPath()
	switch {
	case p == "" && method == http.MethodConnect:
		return "", true // authority-form: no path
	case p == "":
		p = "/" // absolute-form without a path: the root
	case p != "*" && p[0] != '/':
		return "", false
	}
	if u.RawQuery == "" {
		if requestURI == p {
			return requestURI, true
		}
		return p, true
	}
	if len(requestURI) == len(p)+1+len(u.RawQuery) && strings.HasPrefix(requestURI, p) &&
		requestURI[len(p)] == '?' && strings.HasSuffix(requestURI, u.RawQuery) {
		return requestURI, true
	}
	return p + "?" + u.RawQuery, true
}

// deny answers a disallowed request in enforce mode: with the body option's
// text, or with an error for Caddy's error handling (handle_errors). It is
// kept out of line, with the room its error takes.
//
//go:noinline
func (h *Handler) deny(w http.ResponseWriter, dec *enforce.Decision) error {
	if len(h.denyBody) > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(h.Status)
		_, err := w.Write(h.denyBody)
		return err
	}
	return caddyhttp.Error(h.Status, fmt.Errorf("robots.txt disallows %s for %q (%s)", dec.Path, dec.Token, dec.Reason))
}

// handOn makes a decision's placeholders available to the rest of the
// route, and counts it.
func (h *Handler) handOn(repl *caddy.Replacer, dec *enforce.Decision) {
	if !dec.Bound {
		// No agent, no rule: the placeholders and the series depend on
		// the verdict and reason alone, the case of most requests.
		if repl != nil {
			repl.Map(constantProviders[dec.Reason][b2i(dec.Allowed)])
		}
		h.plainSeries[b2i(dec.Allowed)].Inc()
		return
	}
	f := h.facts.get(dec)
	if repl != nil {
		repl.Map(f.provider)
	}
	f.counter.Inc()
}

// botClass says how robots.txt saw the client, for the record's
// bot_class: "named" when a group names it, else its class ("crawler",
// "automated", "browser"), which the wildcard policy held to the "*"
// group.
func botClass(dec *enforce.Decision) string {
	if dec.Named {
		return "named"
	}
	return dec.Classification.Class.String()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// remoteIP returns a client's address without its port.
func remoteIP(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// clientIP returns the client's address as Caddy resolved it (after
// trusted_proxies), or the connection's peer when Caddy gave none.
func clientIP(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	return remoteIP(r.RemoteAddr)
}

// userAgent returns the first User-Agent header, "" when there is none.
// net/http and Caddy store header names canonical, so the name is looked
// up as it is, without Header.Get canonicalising it on every request.
func userAgent(h http.Header) string {
	if v := h["User-Agent"]; len(v) > 0 {
		return v[0]
	}
	return ""
}
