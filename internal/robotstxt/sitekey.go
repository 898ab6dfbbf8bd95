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
// "" when unknown. Every spelling of one site is one key, so that neither
// the robots.txt in force nor what a crawler's requests bring on it (the
// evidence of what it was served, an escalation) can be escaped by
// writing the Host another way:
//
//   - the host is lower-cased and a trailing dot dropped;
//   - an IPv4 address is written in dotted-decimal whatever form the
//     client chose ("127.1", "0x7f.0.0.1", "2130706433", as the WHATWG URL
//     standard and inet_aton read them), an IPv6 literal the one way netip
//     writes it, an IPv4-mapped IPv6 literal as the IPv4 address;
//   - the loopback host, by any name or address ("localhost",
//     "a.localhost", "127.0.0.1", "[::1]", RFC 6761 §6.3), is "localhost";
//   - the port is kept only when it is the listener's own and not the
//     scheme's default: any other port a client writes reaches the same
//     listener, and the same site, so "victim.test:1",
//     "victim.test:0009301" and "VICTIM.test." are all
//     "https://victim.test". A Host that leaves the listener's port out
//     is kept without it, as a site whose instances listen on different
//     ports behind one balancer, which passes the client's Host on, is
//     one site for all of them; what a client's requests bring on a site
//     (an escalation) is keyed by its host alone (see SiteHost), so that
//     leaving the port out escapes nothing.
//
// A client therefore cannot make up keys beyond the host names the server
// answers to, each with at most two spellings. It allocates only for a
// key it has to build.
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

// SiteHost returns a site key without its port: the scheme and host. A
// Host written with the listener's port and one that leaves it out are
// two keys of one site (see SiteKey); consequences that follow a client
// across every spelling of a site key it by this.
func SiteHost(key string) string {
	scheme, rest, ok := strings.Cut(key, "://")
	if !ok {
		return key
	}
	if strings.HasPrefix(rest, "[") {
		if i := strings.IndexByte(rest, ']'); i >= 0 {
			return scheme + "://" + rest[:i+1]
		}
		return key
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		return scheme + "://" + rest[:i]
	}
	return key
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
		return canonicalAddr(a), true
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
	if endsInNumber(h) {
		a, ok := parseIPv4(h)
		if !ok {
			return "", false // a number that is no address: no host
		}
		return canonicalAddr(a), true
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "localhost", true
	}
	return h, true
}

// canonicalAddr writes an IP address as a site key's host: "localhost"
// for the loopback, an IPv4-mapped address as the IPv4 address, an IPv6
// address bracketed.
func canonicalAddr(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "localhost"
	case a.Is4():
		return a.String()
	}
	return "[" + a.String() + "]"
}

// endsInNumber reports whether the last label of the host name h (lower
// case, no trailing dot) is a number, as the WHATWG URL standard's
// "ends in a number" reads it: all decimal digits, or "0x" and hex
// digits. Such a host is an IPv4 address or no host at all.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		for i := 0; i < len(rest); i++ {
			if !isHexDigit(rest[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return last != ""
}

// parseIPv4 reads h as the WHATWG URL standard's IPv4 parser does (and
// inet_aton): one to four parts, each decimal, octal with a leading "0"
// or hex with "0x"; the last fills the octets the others leave.
func parseIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums [4]uint64
	for i, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"):
			p, base = p[2:], 16
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" {
			if base == 10 {
				return netip.Addr{}, false
			}
			p = "0" // "0x" and "0" followed by nothing: zero
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(parts) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(5-len(parts))) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
}
