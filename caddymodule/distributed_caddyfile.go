package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// parseDistributed reads the distributed subdirective:
//
//	distributed {
//	    read_interval  <duration>
//	    write_interval <duration>
//	}
//
// or distributed alone, for the defaults. Each interval is given at most
// once.
func (h *Handler) parseDistributed(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.Errf("distributed: want no argument, and a block of read_interval and write_interval if not the defaults")
	}
	dist := &Distributed{}
	seen := givenOnce{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if err := seen.once(d, "distributed "+opt); err != nil {
			return err
		}
		var val string
		if !d.Args(&val) || d.NextArg() {
			return d.Errf("distributed %s: want one duration", opt)
		}
		dur, err := caddy.ParseDuration(val)
		if err != nil {
			return d.Errf("distributed %s %q: %v", opt, val, err)
		}
		switch opt {
		case "read_interval":
			dist.ReadInterval = caddy.Duration(dur)
		case "write_interval":
			dist.WriteInterval = caddy.Duration(dur)
		default:
			return d.Errf("distributed: unrecognized subdirective %q", opt)
		}
		if err := dist.check(); err != nil {
			return d.Errf("%v", err) // on the interval's line
		}
	}
	h.Distributed = dist
	return nil
}
