// Command caddy is Caddy with its standard modules and robots_enforce, as
// xcaddy would build it: go run ./cmd/caddy run --config Caddyfile.example
//
// Built here, this module is the main module, not a dependency: its version
// is on the "mod" line of "caddy build-info" (stamped from git by go build),
// and "caddy list-modules --versions" shows none for robots_enforce. Builds
// that require the module (xcaddy, docs/install.md) show it in both.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// Caddy's standard modules.
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	// The robots_enforce module.
	_ "github.com/robotsenforce/caddy-robots-enforce"
)

func main() {
	caddycmd.Main()
}
