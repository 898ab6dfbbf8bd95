package rules

import "strings"

// targetPath returns the part of target that rules are matched against: the
// path, its parameters and the query, without scheme, authority or fragment,
// always starting with "/". When addSlash is set, the path starts with "?" or
// ";" and is to be read with a "/" before it; returning the flag instead of a
// new string keeps the decision free of allocations.
//
// A target that starts with "/" is an origin-form request target (RFC 9112
// §3.2.1), which is what a server receives: it is taken as it is, so
// "//private/x" stays a path with an empty first segment. Any other target is
// read as a URL the way Google's parser reads one: an optional scheme ending
// in "://", then an authority up to the first "/", "?" or ";". Deviation from
// Google's parser: it also reads a target starting with "//" as a URL without
// a scheme, which would let "//private/x" be judged as "/x".
func targetPath(target string) (path string, addSlash bool) {
	if strings.HasPrefix(target, "/") {
		if i := strings.IndexByte(target, '#'); i >= 0 {
			target = target[:i]
		}
		return target, false
	}
	start := 0
	early := strings.IndexAny(target, "/?;")
	if scheme := strings.Index(target, "://"); scheme >= 0 && (early < 0 || scheme < early) {
		start = scheme + 3
	}
	rel := strings.IndexAny(target[start:], "/?;")
	if rel < 0 {
		return "/", false
	}
	pathStart := start + rel
	end := len(target)
	if hash := strings.IndexByte(target, '#'); hash >= 0 {
		if hash < pathStart {
			return "/", false
		}
		end = hash
	}
	return target[pathStart:end], target[pathStart] != '/'
}
