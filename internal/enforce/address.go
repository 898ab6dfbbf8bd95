package enforce

import "net/netip"

// addressKey returns the address by which the consequences of a client's
// requests (what it was served, an escalation) are keyed when it proves no
// token: an IPv4 address; an IPv4-mapped IPv6 address as the IPv4 address
// it maps, so that "::ffff:192.0.2.1" in a proxy's header is 192.0.2.1;
// an IPv6 address by its /64, the network one subscriber is given and
// within which a client may pick any address; the zero Addr for an
// invalid one.
func addressKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		p, err := a.WithZone("").Prefix(64)
		if err != nil {
			return netip.Addr{}
		}
		return p.Addr()
	}
	return a
}
