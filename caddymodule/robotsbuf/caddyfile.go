package robotsbuf

import (
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// UnmarshalCaddyfile sets up the writer from Caddyfile tokens, in a log
// block. Syntax:
//
//	output robots_buffered {
//	    flush_interval <duration>
//	    buffer_size    <size>
//	    output         <writer> [<args...>] [{
//	        <writer options>
//	    }]
//	}
//
// The inner output is required and is written as in a log block: output
// file, net, stdout, stderr or any other log writer, with its options.
// Each subdirective is given once.
func (bw *Writer) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the writer's name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]string{} // where each subdirective was given
	var inner caddy.WriterOpener
	for d.NextBlock(0) {
		opt := d.Val()
		switch opt {
		case "flush_interval", "buffer_size", "output":
		default:
			return d.Errf("robots_buffered: unrecognized subdirective %q", opt)
		}
		if first, ok := seen[opt]; ok {
			return d.Errf("robots_buffered: %s given twice: first at %s; give it once", opt, first)
		}
		seen[opt] = fmt.Sprintf("%s:%d", d.File(), d.Line())
		if opt == "output" {
			wo, err := bw.unmarshalInner(d)
			if err != nil {
				return err
			}
			inner = wo
			continue
		}
		var val string
		if !d.Args(&val) || d.NextArg() {
			return d.ArgErr()
		}
		switch opt {
		case "flush_interval":
			dur, err := caddy.ParseDuration(val)
			if err != nil {
				return d.Errf("robots_buffered: flush_interval %q: %v", val, err)
			}
			if dur < minFlushInterval || dur > maxFlushInterval {
				return d.Errf("robots_buffered: flush_interval %s: want between %v and %v", val, minFlushInterval, maxFlushInterval)
			}
			bw.FlushInterval = caddy.Duration(dur)
		case "buffer_size":
			n, err := humanize.ParseBytes(val)
			if err != nil {
				return d.Errf("robots_buffered: buffer_size %q: not a size such as 64KiB or 1MiB", val)
			}
			if n < minBufferSize || n > maxBufferSize {
				return d.Errf("robots_buffered: buffer_size %s: want between 4KiB and 16MiB", val)
			}
			bw.BufferSize = int(n)
		}
	}
	if inner == nil {
		return d.Err("robots_buffered: no output: give the writer the entries go to, e.g. output file <path>")
	}
	if err := checkInnerWriter(inner, bw.BufferSize); err != nil {
		return d.Errf("robots_buffered: %v (output at %s)", err, seen["output"])
	}
	return nil
}

// unmarshalInner reads "output <writer> ...", as Caddy's log directive
// reads its output, and sets WriterRaw.
func (bw *Writer) unmarshalInner(d *caddyfile.Dispenser) (caddy.WriterOpener, error) {
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	name := d.Val()
	var wo caddy.WriterOpener
	switch name {
	// The standard streams and discard are Caddy's own writers, which
	// have no Caddyfile syntax; Caddy's log directive makes them so too.
	case "stdout", "stderr", "discard":
		if d.NextArg() {
			return nil, d.ArgErr()
		}
		wo = map[string]caddy.WriterOpener{
			"stdout": caddy.StdoutWriter{}, "stderr": caddy.StderrWriter{}, "discard": caddy.DiscardWriter{},
		}[name]
	default:
		id := "caddy.logging.writers." + name
		unm, err := caddyfile.UnmarshalModule(d, id)
		if err != nil {
			return nil, err
		}
		var ok bool
		if wo, ok = unm.(caddy.WriterOpener); !ok {
			return nil, d.Errf("robots_buffered: output %s: module %s (%T) is not a log writer", name, id, unm)
		}
	}
	bw.WriterRaw = caddyconfig.JSONModuleObject(wo, "output", name, nil)
	return wo, nil
}
