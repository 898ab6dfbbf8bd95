package enforce

import (
	"net/http"
	"net/url"
	"strings"
)

// rewriteHeaders are request headers some origins serve instead of the
// request's own path: IIS and Symfony read X-Original-URL and
// X-Rewrite-URL as the path to serve, and frameworks behind proxies put
// X-Forwarded-Prefix before it. A proxy passes them on as the client sent
// them, so a crawler could ask for an allowed path, /robots.txt included,
// and be served a disallowed one. They are not removed (an application
// may rely on them from a proxy of its own): the judgement reads what
// they would make the origin serve, and denies when that is disallowed.
// The names are canonical, as net/http stores them.
var rewriteHeaders = [...]string{"X-Original-Url", "X-Rewrite-Url", "X-Forwarded-Prefix"}

// hasRewriteHeader reports whether h has one of rewriteHeaders.
func hasRewriteHeader(h http.Header) bool {
	for _, name := range rewriteHeaders {
		if _, ok := h[name]; ok {
			return true
		}
	}
	return false
}

// judgeRewrites turns jd's allowed decision into a denial when a rewrite
// header of its request leads to a target the same robots.txt disallows
// for the client: the decision of that target, with the request's own
// path and the reading RewriteHeader.
func (j *Judge) judgeRewrites(jd *Judgement) {
	alt := &jd.scratch.alt
	for _, name := range rewriteHeaders {
		for _, v := range jd.req.Header[name] {
			target, readable := rewrittenTarget(name, v, jd.q.Target)
			aq := Query{Target: target, Unreadable: !readable, UserAgent: jd.q.UserAgent, Forged: jd.q.Forged}
			var dec Decision
			if jd.listed != nil { // an undeclared crawler, whatever the target
				built := readable && alt.Build(target)
				j.decider.decideUndeclared(&dec, jd.Snapshot, &aq, alt, built, jd.listed)
			} else {
				j.decider.DecideInto(&dec, jd.Snapshot, &aq, alt)
				j.identify(jd, &aq, &dec, alt)
				jd.q.Forged = aq.Forged // a claim proved or not holds for the rest
			}
			if !dec.Allowed {
				path := jd.Path
				jd.Decision = dec
				jd.Path, jd.Reading = path, RewriteHeader
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
