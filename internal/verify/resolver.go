package verify

import (
	"context"
	"net"
	"time"
)

// dialTimeout bounds connecting to a configured DNS server.
const dialTimeout = 3 * time.Second

// NewResolver returns the default Resolver: Go's resolver, asking server (a
// "host:port", e.g. "127.0.0.1:53") when it is not empty, or the system's
// configured servers otherwise.
func NewResolver(server string) Resolver {
	if server == "" {
		return &net.Resolver{}
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, network, server)
		},
	}
}
