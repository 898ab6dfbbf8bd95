package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// RFC 9309 §2.3.1.2 has crawlers follow a robots.txt redirect to another
// host, and so does the handler, over the network. An origin must not be
// able to point the handler's own requests at what only the server can
// reach: the admin endpoint (whose answers once read as an allow-all
// robots.txt), other services on this machine, the private network, cloud
// metadata on link-local addresses. The handler dials such addresses only
// where the site itself is (see dialPolicy.allows): the listener the
// site's requests come to, and the origin reverse_proxy reached for its
// robots.txt; the url source's own URL, which the operator chose, is
// dialled wherever it points.

// addrClass sorts addresses by what may reach them.
type addrClass uint8

const (
	classPublic   addrClass = iota
	classLoopback           // this machine
	classPrivate            // RFC 1918, RFC 6598 shared space, RFC 4193 unique local
	classNever              // link-local (cloud metadata), unspecified, multicast
)

var sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598, carrier-grade NAT

func classOf(a netip.Addr) addrClass {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return classLoopback
	case a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.Is4() && a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return classNever
	case a.IsPrivate() || sharedSpace.Contains(a):
		return classPrivate
	}
	return classPublic
}

// dialPolicy is where a redirected robots.txt request may connect, given
// where the site itself is.
type dialPolicy struct {
	// site is the address the site's request arrived at (the handler's
	// listener); invalid when unknown.
	site netip.AddrPort
	// origin is the host and port reverse_proxy reached for the site's
	// robots.txt, when it did: a name or an address.
	origin string
	// siteHost and sitePort, when site is unknown, name the host whose
	// addresses stand for the site's (the url source's own URL).
	siteHost string
	sitePort uint16
}

// allows reports whether a redirect may lead to addr, given the site's
// own addresses (its listener, and its origin): public addresses always;
// the private network when the site is in it too; this machine only on
// the ports the site itself is on (another virtual host of this server,
// or of the origin), never on another, where the admin endpoint and other
// local services listen; link-local, unspecified and multicast addresses
// never.
func (p *dialPolicy) allows(addr netip.AddrPort, site []netip.AddrPort) bool {
	switch classOf(addr.Addr()) {
	case classPublic:
		return true
	case classPrivate:
		for _, s := range site {
			if c := classOf(s.Addr()); c == classPrivate {
				return true
			}
		}
	case classLoopback:
		for _, s := range site {
			if classOf(s.Addr()) == classLoopback && s.Port() == addr.Port() {
				return true
			}
		}
	}
	return false
}

type dialPolicyKey struct{}

// withDialPolicy returns ctx whose requests the guard holds to p.
func withDialPolicy(ctx context.Context, p *dialPolicy) context.Context {
	return context.WithValue(ctx, dialPolicyKey{}, p)
}

// errRefusedAddress is the error of a connection the policy refuses.
var errRefusedAddress = errors.New("refused: a robots.txt redirect may not lead there")

// dialGuard dials for the handler's own HTTP client, holding requests that
// carry a dialPolicy to it. It resolves the name itself and dials the
// address it checked, so that a name cannot resolve to one address for
// the check and another for the connection.
type dialGuard struct {
	// dial connects to an address the policy allowed.
	dial     func(ctx context.Context, network, address string) (net.Conn, error)
	resolver *net.Resolver
}

// DialContext implements http.Transport.DialContext.
func (g *dialGuard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	p, _ := ctx.Value(dialPolicyKey{}).(*dialPolicy)
	if p == nil {
		return g.dial(ctx, network, address)
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portText, err)
	}
	site, err := g.siteAddrs(ctx, p)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var lastErr error = fmt.Errorf("%s: %w", address, errRefusedAddress)
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), uint16(port))
		if !p.allows(ap, site) {
			continue
		}
		conn, err := g.dial(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// siteAddrs returns the site's own addresses for p: its listener's, or
// those its host name resolves to.
func (g *dialGuard) siteAddrs(ctx context.Context, p *dialPolicy) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	if p.site.IsValid() {
		out = append(out, p.site)
	}
	host, port := p.siteHost, p.sitePort
	if p.origin != "" {
		h, portText, err := net.SplitHostPort(p.origin)
		if n, perr := strconv.ParseUint(portText, 10, 16); err == nil && perr == nil {
			host, port = h, uint16(n)
		}
	}
	if host == "" {
		return out, nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolving the site's origin %s: %w", host, err)
	}
	for _, a := range addrs {
		out = append(out, netip.AddrPortFrom(a.Unmap(), port))
	}
	return out, nil
}

// urlPolicy is the policy of the redirects from a url source's URL: its
// own host stands for the site.
func urlPolicy(rawURL string) *dialPolicy {
	u, err := url.Parse(rawURL)
	if err != nil {
		return &dialPolicy{}
	}
	port, _ := strconv.ParseUint(u.Port(), 10, 16)
	if port == 0 {
		port = 443
		if u.Scheme == "http" {
			port = 80
		}
	}
	return &dialPolicy{siteHost: u.Hostname(), sitePort: uint16(port)}
}

// guardedFetcher holds the redirects of the fetches it sends to policy;
// the URL a fetch starts from is the operator's choice, and goes wherever
// it points.
type guardedFetcher struct {
	robotstxt.Fetcher
	policy *dialPolicy
}

// Fetch implements robotstxt.Fetcher.
func (f guardedFetcher) Fetch(ctx context.Context, rawURL string, limit int) (robotstxt.Response, error) {
	if rawURL != robotstxt.FetchOrigin(ctx) {
		ctx = withDialPolicy(ctx, f.policy)
	}
	return f.Fetcher.Fetch(ctx, rawURL, limit)
}
