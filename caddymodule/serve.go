package caddymodule

import (
	"fmt"
	"net"
	"net/http"
	"unsafe"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// ServeHTTP implements caddyhttp.MiddlewareHandler: it gathers what the
// request is, has the core judge it once, makes the judgement known
// (placeholders, metrics, the compliance record), then denies or hands
// the request on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	ua := userAgent(r.Header)
	if isInternalFetch(r, ua) {
		return next.ServeHTTP(w, r) // the handler's own robots.txt request
	}
	jd := h.judgeRequest(r, ua, next)
	h.publish(r, jd)
	switch {
	case jd.Deny:
		defer jd.Release()
		return h.deny(w, r, jd)
	case jd.RobotsTxt:
		defer jd.Release()
		return h.serveRobotsTxt(w, r, next, jd)
	}
	usage := jd.Usage.String()
	jd.Release()
	if usage != "" {
		w = h.withUsage(w, usage)
	}
	return next.ServeHTTP(w, r)
}

// judgeRequest gathers what the core needs to know of r, as the client
// sent it, into a judgement's request, and judges it; ua is r's
// User-Agent. It is a function of its own, too large for the compiler to
// inline, so that what it reads is not on ServeHTTP's stack while the
// rest of the route runs.
func (h *Handler) judgeRequest(r *http.Request, ua string, next caddyhttp.Handler) *enforce.Judgement {
	jd := h.judge.NewJudgement()
	sent := originalRequest(r)
	target, readable := enforce.TargetOf(sent.Method, sent.URL, sent.RequestURI)
	// Field by field: a composite literal would be built on the stack
	// first, and copied.
	req := jd.Request()
	*req = enforce.Request{}
	req.Target, req.Unreadable = target, !readable
	req.UserAgent, req.ClientIP, req.RemoteIP = ua, clientIP(r), remoteIP(sent.RemoteAddr)
	req.Host, req.Method, req.URI = r.Host, sent.Method, sent.RequestURI
	req.Header, req.HTTP = r.Header, r
	if sent.URL.Path != r.URL.Path {
		h.warnRewritten(sent.URL.Path, r.URL.Path)
	}
	if sr, ok := h.sites.site(r, next); ok {
		req.Site, req.Via = sr.key, sr.fetcher
	}
	return h.judge.JudgeIn(r.Context(), jd)
}

// isInternalFetch reports whether r, whose User-Agent is ua, is the
// handler's own request for a site's robots.txt, sent through the rest of
// the route.
func isInternalFetch(r *http.Request, ua string) bool {
	return ua == robotstxt.FetchUserAgent && r.Context().Value(internalKey{}) != nil
}

// warnRewritten says, once per handler, that a handler before this one
// rewrote the path (handle_path, uri strip_prefix): robots.txt belongs to
// the site (RFC 9309 §2.3), and the handler judges the path the client
// sent; with the upstream source it also fetches robots.txt through the
// rest of its own route, which answers /robots.txt for the rewritten site,
// not the site's own file.
func (h *Handler) warnRewritten(sent, now string) {
	if h.rewriteWarned.CompareAndSwap(false, true) {
		h.logger.Warn("robots_enforce runs after a path rewrite: it judges the path the client sent, and the robots.txt it enforces may not be the one the site answers for /robots.txt; place robots_enforce at the site level",
			zap.String("sent_path", sent), zap.String("rewritten_path", now), zap.String("source", h.Source.Kind))
	}
}

// originalRequest returns the request r was as the client sent it, before
// any rewrite, which Caddy keeps for r (its method, URL and remote
// address; not its headers, which the handler reads before the
// directives that change them), or r itself when there is none.
//
// Caddy keeps the request by value: a type assertion would copy its 250
// octets on every request, so the request is read where the context holds
// it. An interface holding a struct points to the struct (its second
// word), which is never written after Caddy stores it.
// TestOriginalRequestRead holds the reading to the copy's.
func originalRequest(r *http.Request) *http.Request {
	v := r.Context().Value(caddyhttp.OriginalRequestCtxKey)
	if _, ok := v.(http.Request); !ok {
		return r
	}
	orig := (*http.Request)((*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1])
	if orig.URL == nil {
		return r
	}
	return orig
}

// deny answers a denied request: with the body option's text; with an
// error for Caddy's error handling when the server has handle_errors
// routes, which operators use to style their pages; else with the status
// alone, as Caddy's error handling would answer it, without building an
// error, its trace and its place in the request for nobody to read.
func (h *Handler) deny(w http.ResponseWriter, r *http.Request, jd *enforce.Judgement) error {
	if len(h.denyBody) > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(h.Status)
		_, err := w.Write(h.denyBody)
		return err
	}
	if srv, _ := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); srv != nil &&
		(srv.Errors == nil || len(srv.Errors.Routes) == 0) {
		w.WriteHeader(h.Status)
		return nil
	}
	return caddyhttp.Error(h.Status, fmt.Errorf("robots.txt disallows %s for %q (%s)", jd.Path, jd.Token, jd.Reason))
}

// publish makes a judgement known to the rest of the route (its
// placeholders), to the metrics and, when one is due, to the compliance
// record.
func (h *Handler) publish(r *http.Request, jd *enforce.Judgement) {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if !jd.Bound {
		// No agent, no rule: the placeholders and the series depend on
		// the verdict and reason alone, the case of most requests.
		if repl != nil {
			repl.Map(constantProviders[jd.Reason][b2i(jd.Allowed)])
		}
		if !jd.RobotsTxt {
			h.plainSeries[b2i(jd.Allowed)].Inc()
		}
	} else {
		f := h.facts.get(&jd.Decision)
		if repl != nil {
			repl.Map(f.provider)
		}
		f.counter.Inc()
		if jd.Record {
			h.record(r, jd, f)
		}
	}
	if repl != nil && jd.Usage.Found() {
		repl.Set(phContentUsage, jd.Usage.String())
	}
	if jd.Identity.Outcome != verify.None {
		h.metrics.countClaim(jd.Identity)
	}
	if jd.Escalated {
		h.metrics.escalated.WithLabelValues(h.Violators.Mode).Inc()
	}
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
