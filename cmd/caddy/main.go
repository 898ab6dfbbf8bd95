// Command caddy is Caddy with its standard modules and robots_enforce, as
// xcaddy would build it: go run ./cmd/caddy run --config Caddyfile.example
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
