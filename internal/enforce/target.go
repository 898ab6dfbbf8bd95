package enforce

import (
	"net/http"
	"net/url"
	"strings"
)

// TargetOf returns the request target a decision judges: the path and
// query of u, the request's URL as Go's server parsed it from what the
// client sent, in their escaped form. This is what the handlers after
// this one read (file_server opens u.Path; reverse_proxy forwards the
// escaped path and query), so no spelling the server reads one way can be
// judged another: "x:/private/a" is the path "/private/a", and a raw "#"
// is part of the path, not the start of a fragment. The raw request line
// (requestURI) is used only when it is exactly that target, to avoid a
// copy. readable is false for a URL with no such path (opaque, like
// "x:private", or none), which decisions then fail closed on.
func TargetOf(method string, u *url.URL, requestURI string) (target string, readable bool) {
	if u == nil || u.Opaque != "" {
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
