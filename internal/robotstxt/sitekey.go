package robotstxt

import (
	"net/netip"
	"strconv"
	"strings"
)

// MaxHostNameLength is the longest host name a site key holds: a DNS name
// is at most 253 octets (RFC 1035 §2.3.4); a bracketed IPv6 literal is
// shorter. A longer Host header names no site.
const MaxHostNameLength = 253

// SiteKey returns the Store key of the site a request is for: the origin
// (RFC 6454) "scheme://host[:port]" whose robots.txt applies to it (RFC
// 9309 §2.3), in one canonical spelling, and false when hostHeader names no
// host a robots.txt could be fetched for.
//
// hostHeader is the request's Host (or :authority); scheme is "http" or
// "https"; localPort is the port of the listener the request arrived on,
// "" when unknown. The host is lower-cased, a trailing dot dropped, and an
// IP literal written the one way netip writes it. The port is kept only
// when it is the listener's own and not the scheme's default: any other
// port a client writes reaches the same listener, and the same site, so
// "victim.test:1", "victim.test:0009301" and "VICTIM.test." are all the
// site "https://victim.test". A client therefore cannot make up keys
// beyond the host names the server answers to, each with at most two
// spellings (with and without the listener's port).
//
// It allocates only for a key it has to build: a Host that is already
// canonical, with the default port or none, costs the concatenation.
func SiteKey(scheme, hostHeader, localPort string) (string, bool) {
	host, port := splitHostPort(hostHeader)
	host, ok := canonicalHostName(host)
	if !ok || (scheme != "http" && scheme != "https") {
		return "", false
	}
	if port != "" {
		n, err := strconv.ParseUint(strings.TrimLeft(port, "0"), 10, 16)
		listener, lerr := strconv.ParseUint(localPort, 10, 16)
		if err != nil || lerr != nil || n != listener || n == defaultPort(scheme) {
			port = ""
		} else {
			port = strconv.FormatUint(n, 10)
		}
	}
	if port == "" {
		return scheme + "://" + host, true
	}
	return scheme + "://" + host + ":" + port, true
}

func defaultPort(scheme string) uint64 {
	if scheme == "http" {
		return 80
	}
	return 443
}

// splitHostPort splits a Host header into its host and port, either
// possibly empty; an IPv6 literal keeps its brackets. Unlike
// net.SplitHostPort it accepts a host without a port.
func splitHostPort(h string) (host, port string) {
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return h, ""
		}
		host, rest := h[:end+1], h[end+1:]
		if p, ok := strings.CutPrefix(rest, ":"); ok {
			return host, p
		}
		if rest != "" {
			return h, "" // junk after the literal: invalid below
		}
		return host, ""
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i], h[i+1:]
	}
	return h, ""
}

// canonicalHostName returns a host name or IP literal in its canonical
// spelling, and false when it is neither. A name is dot-separated labels of
// ASCII letters, digits, '-' and '_' (seen in internal names), compared
// without regard to case; one trailing dot (the DNS root) is dropped.
func canonicalHostName(h string) (string, bool) {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
		return "[" + a.String() + "]", true
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > MaxHostNameLength {
		return "", false
	}
	upper := false
	label := 0
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c == '.':
			if label == 0 {
				return "", false // an empty label
			}
			label = 0
			continue
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return "", false
		}
		label++
	}
	if label == 0 {
		return "", false
	}
	if upper {
		h = strings.ToLower(h) // ASCII only, as checked
	}
	return h, true
}
