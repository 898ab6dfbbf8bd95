package caddymodule

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
)

// rewriteHeaders are request headers some origins serve instead of the
// request's own path: IIS and Symfony read X-Original-URL and
// X-Rewrite-URL as the path to serve, and frameworks behind proxies put
// X-Forwarded-Prefix before it. reverse_proxy passes them on as the client
// sent them, so a crawler could ask for an allowed path and be served a
// disallowed one. The handler does not remove them (an application may
// rely on them from a proxy of its own); it judges what they would make
// the origin serve, and denies when that is disallowed. Only clients the
// rules bind pay for it, and only when they send one.
var rewriteHeaders = [...]string{"X-Original-Url", "X-Rewrite-Url", "X-Forwarded-Prefix"}

// judgeRewriteHeaders turns dec, an allowed decision about a client the
// rules bind, into a denial when a rewrite header of r leads to a target
// the same robots.txt disallows.
func (h *Handler) judgeRewriteHeaders(r *http.Request, target string, snap *enforce.Snapshot, req *enforce.Request, dec *enforce.Decision) {
	for _, name := range rewriteHeaders {
		values, ok := r.Header[name]
		if !ok {
			continue
		}
		for _, v := range values {
			alt, readable := rewrittenTarget(name, v, target)
			rd := h.readings.Get().(*enforce.Readings)
			var alternative enforce.Decision
			h.decider.DecideInto(&alternative, snap, &enforce.Request{Target: alt, Unreadable: !readable, UserAgent: req.UserAgent, Forged: req.Forged}, rd)
			h.readings.Put(rd)
			if !alternative.Allowed {
				path := dec.Path
				*dec = alternative
				dec.Path, dec.Reading = path, enforce.RewriteHeader
				return
			}
		}
	}
}

// rewrittenTarget returns the target an origin honouring the header name
// with value v would serve, for a request whose own target is target.
func rewrittenTarget(name, v, target string) (string, bool) {
	if name == "X-Forwarded-Prefix" {
		return strings.TrimSuffix(v, "/") + target, strings.HasPrefix(v, "/")
	}
	if strings.HasPrefix(v, "/") {
		return v, true
	}
	u, err := url.Parse(v) // an absolute URL, as some proxies send
	if err != nil || u.Opaque != "" || u.Path != "" && u.Path[0] != '/' {
		return "", false
	}
	t := u.EscapedPath()
	if t == "" {
		t = "/"
	}
	if u.RawQuery != "" {
		t += "?" + u.RawQuery
	}
	return t, true
}

// hasRewriteHeader reports whether h has one of rewriteHeaders.
func hasRewriteHeader(h http.Header) bool {
	for _, name := range rewriteHeaders {
		if _, ok := h[name]; ok {
			return true
		}
	}
	return false
}
