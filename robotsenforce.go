// Package robotsenforce is the root of caddy-robots-enforce, a Caddy module
// that holds crawlers to a site's own robots.txt. Importing it registers the
// module, so that
//
//	xcaddy build --with github.com/robotsenforce/caddy-robots-enforce
//
// builds a Caddy with it. The handler lives in package caddymodule, the
// robots_buffered log writer in caddymodule/robotsbuf, the commands in
// caddymodule/robotscmd; the robots.txt engine in rules; the judgement in
// internal/enforce.
package robotsenforce

import (
	// Registers http.handlers.robots_enforce and its Caddyfile directive.
	_ "github.com/robotsenforce/caddy-robots-enforce/caddymodule"
	// Registers the robots_buffered log writer.
	_ "github.com/robotsenforce/caddy-robots-enforce/caddymodule/robotsbuf"
	// Registers the "caddy robots" commands.
	_ "github.com/robotsenforce/caddy-robots-enforce/caddymodule/robotscmd"
)
