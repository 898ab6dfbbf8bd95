// Package robotsbuf is the robots_buffered log writer
// (caddy.logging.writers.robots_buffered): it wraps another Caddy log
// writer and hands it whole log entries in batches, one write for many.
// It is meant for the compliance records of robots_enforce, which may
// come one for every request of a crawler that is denied; it works for
// any log. Importing the package registers the module.
package robotsbuf

import "github.com/caddyserver/caddy/v2"

func init() {
	caddy.RegisterModule(Writer{})
}
