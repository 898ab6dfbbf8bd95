// Package robotsenforce is the root of caddy-robots-enforce, a Caddy module
// that holds crawlers to a site's own robots.txt. Importing it registers the
// module, so that
//
//	xcaddy build --with github.com/robotsenforce/caddy-robots-enforce
//
// builds a Caddy with it. The module lives in package caddymodule; the
// robots.txt engine in rules; the decisions in enforce.
package robotsenforce

import (
	// Registers http.handlers.robots_enforce and its Caddyfile directive.
	_ "github.com/robotsenforce/caddy-robots-enforce/caddymodule"
	// Registers the "caddy robots" commands.
	_ "github.com/robotsenforce/caddy-robots-enforce/caddymodule/robotscmd"
)
