package caddymodule

import (
	"fmt"
	"net"
	"net/http"
	"net/url"

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
// sent it, and judges it; ua is r's User-Agent.
func (h *Handler) judgeRequest(r *http.Request, ua string, next caddyhttp.Handler) *enforce.Judgement {
	sent := sentRequest(r)
	if sent.url.Path != r.URL.Path {
		h.warnRewritten(sent.url.Path, r.URL.Path)
	}
	req := enforce.Request{
		Method: sent.method, URL: sent.url, URI: sent.requestURI,
		Host: r.Host, UserAgent: ua, ClientIP: clientIP(r), RemoteIP: remoteIP(sent.remoteAddr),
		Header: r.Header, HTTP: r,
	}
	if sr, ok := h.sites.site(r, next); ok {
		req.Site, req.Via = sr.key, sr.fetcher
	}
	return h.judge.Judge(r.Context(), &req)
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
		h.warnings.Warn("robots_enforce runs after a path rewrite: it judges the path the client sent, and the robots.txt it enforces may not be the one the site answers for /robots.txt; place robots_enforce at the site level",
			zap.String("sent_path", sent), zap.String("rewritten_path", now), zap.String("source", h.Source.Kind))
	}
}

// asSent is the request line of a request as the client sent it.
type asSent struct {
	method, requestURI, remoteAddr string
	url                            *url.URL
}

// sentRequest returns the request line of r as the client sent it, before
// any rewrite, which Caddy keeps for r (its method, URL and remote
// address; not its headers, which the handler reads before the
// directives that change them), or r's own when there is none. Caddy
// keeps the request by value; a pointer is read too, so that a Caddy that
// kept one would not have the rewritten request judged.
func sentRequest(r *http.Request) asSent {
	switch orig := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(type) {
	case http.Request:
		if orig.URL != nil {
			return asSent{orig.Method, orig.RequestURI, orig.RemoteAddr, orig.URL}
		}
	case *http.Request:
		if orig != nil && orig.URL != nil {
			return asSent{orig.Method, orig.RequestURI, orig.RemoteAddr, orig.URL}
		}
	}
	return asSent{r.Method, r.RequestURI, r.RemoteAddr, r.URL}
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
		if jd.Record != nil {
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
