package caddymodule

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("robots_enforce", parseCaddyfile)
	// Before redir: after the directives that set variables and headers,
	// and before everything that redirects, rewrites the path (rewrite,
	// uri, try_files), authenticates or answers (respond, reverse_proxy,
	// file_server), so that a crawler is judged on the path it asked for
	// and before any work is done for it.
	httpcaddyfile.RegisterDirectiveOrder("robots_enforce", httpcaddyfile.Before, "redir")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	var r Handler
	err := r.UnmarshalCaddyfile(h.Dispenser)
	return &r, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	robots_enforce [<matcher>] [enforce|log] {
//	    mode          enforce|log
//	    source        upstream|file <path>|url <url>|inline <text>
//	    serve_robots  enforced|origin
//	    content_usage header|off|override
//	    status        <code>
//	    body          <text>
//	    wildcard      crawlers|automated|all|none
//	    unreachable   deny|allow
//	    refresh       <duration>
//	    max_size      <size>
//	    fetch_timeout <duration>
//	    max_hosts     <count>
//	    max_memory    <size>
//	    new_hosts     <count> per <duration>
//	    allow_agents  <token...>
//	    origin        case_sensitive|case_insensitive
//	    log_allowed
//	    verify off
//	    verify {
//	        builtin      on|off
//	        ip_ranges    <token> <file|url>
//	        reverse_dns  <token> <domain-suffix>...
//	        web_bot_auth on|off
//	        web_bot_auth [on] {
//	            agent <token> <https-origin> [keys <jwks-file>]
//	        }
//	        forged       wildcard|deny|ignore
//	        pending      claimed|wildcard
//	        resolver     <host:port>
//	        undeclared   bind|ignore
//	    }
//	    violators     enforce|block [for <duration>]
//	}
//
// wildcard also reads bots, as automated. Each subdirective is given at
// most once, but for allow_agents, and ip_ranges and reverse_dns within
// verify, and agent within web_bot_auth, which add to what the earlier
// lines gave; the mode is given either as the directive's argument or as
// mode. A second one is an error that names both lines, rather than a
// silent choice of one. A web_bot_auth block turns Web Bot Auth on; each
// agent line names a token's signature agent (one origin may speak for
// several tokens), with, after keys, a local file pinning its keys.
//
// The inline text is best a heredoc (<<END ... END); a quoted string works
// when it holds real line breaks, since the Caddyfile does not read escapes
// such as \n.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive's name
	seen := givenOnce{}
	if d.NextArg() {
		seen.note(d, "mode", "as the directive's argument")
		h.Mode = d.Val()
		if err := h.checkOption("mode"); err != nil {
			return d.Errf("%v", err)
		}
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for d.NextBlock(0) {
		if err := h.unmarshalOption(d, seen); err != nil {
			return err
		}
	}
	return nil
}

// givenOnce remembers where each single-valued subdirective was given:
// "file:line" and how, by name.
type givenOnce map[string]string

// note records that name is given at the dispenser's token; how, when not
// empty, says in what form.
func (g givenOnce) note(d *caddyfile.Dispenser, name, how string) {
	where := fmt.Sprintf("%s:%d", d.File(), d.Line())
	if how != "" {
		where += ", " + how
	}
	g[name] = where
}

// once fails when name was given before, naming where; the error carries
// the file and line of this, the second one.
func (g givenOnce) once(d *caddyfile.Dispenser, name string) error {
	if first, ok := g[name]; ok {
		return d.Errf("%s given twice: first at %s; give it once", name, first)
	}
	g.note(d, name, "")
	return nil
}

// unmarshalOption reads one subdirective, and checks its value at once,
// so that an error names the file and line it is on.
func (h *Handler) unmarshalOption(d *caddyfile.Dispenser, seen givenOnce) error {
	opt := d.Val()
	// allow_agents adds tokens line by line; every other subdirective
	// sets one value, which a second line would silently replace.
	if opt != "allow_agents" {
		if err := seen.once(d, opt); err != nil {
			return err
		}
	}
	if err := h.readOption(d, opt); err != nil {
		return err
	}
	if opt == "max_hosts" && h.MaxHosts == 0 {
		return d.Errf("max_hosts 0: want at least 1 (leave it out for the default, %d)", robotstxt.DefaultMaxHosts)
	}
	if err := h.checkOption(opt); err != nil {
		return d.Errf("%v", err)
	}
	return nil
}

// readOption reads the subdirective opt.
func (h *Handler) readOption(d *caddyfile.Dispenser, opt string) error {
	switch opt {
	case "mode", "status", "body", "wildcard", "unreachable", "refresh", "max_size", "fetch_timeout", "max_hosts",
		"max_memory", "content_usage", "serve_robots", "origin":
		var val string
		if !d.Args(&val) || d.NextArg() {
			return d.ArgErr()
		}
		if err := h.setOption(d, opt, val); err != nil {
			return err
		}
	case "source":
		if err := h.parseSource(d); err != nil {
			return err
		}
	case "new_hosts":
		if err := h.parseNewHosts(d); err != nil {
			return err
		}
	case "allow_agents":
		args := d.RemainingArgs()
		if len(args) == 0 {
			return d.ArgErr()
		}
		h.AllowAgents = append(h.AllowAgents, args...)
	case "verify":
		if err := h.parseVerify(d); err != nil {
			return err
		}
	case "violators":
		if err := h.parseViolators(d); err != nil {
			return err
		}
	case "log_allowed":
		if d.NextArg() {
			return d.ArgErr()
		}
		h.LogAllowed = true
	default:
		return d.Errf("unrecognized subdirective %q", opt)
	}
	return nil
}

// setOption sets an option that takes one value.
func (h *Handler) setOption(d *caddyfile.Dispenser, opt, val string) error {
	switch opt {
	case "mode":
		h.Mode = val
	case "status":
		n, err := strconv.Atoi(val)
		if err != nil {
			return d.Errf("status %q: not a number", val)
		}
		h.Status = n
	case "body":
		h.Body = val
	case "content_usage":
		h.ContentUsage = val
	case "serve_robots":
		h.ServeRobots = val
	case "origin":
		h.Origin = val
	case "wildcard":
		h.Wildcard = val
	case "unreachable":
		h.Unreachable = val
	case "refresh", "fetch_timeout":
		dur, err := caddy.ParseDuration(val)
		if err != nil {
			return d.Errf("%s %q: %v", opt, val, err)
		}
		if opt == "refresh" {
			h.Refresh = caddy.Duration(dur)
		} else {
			h.FetchTimeout = caddy.Duration(dur)
		}
	case "max_size":
		n, err := humanize.ParseBytes(val)
		if err != nil || n > 1<<31 {
			return d.Errf("max_size %q: not a size such as 500KiB or 1MiB", val)
		}
		h.MaxSize = ByteSize(n)
	case "max_hosts":
		n, err := strconv.Atoi(val)
		if err != nil {
			return d.Errf("max_hosts %q: not a number", val)
		}
		h.MaxHosts = n
	case "max_memory":
		n, err := humanize.ParseBytes(val)
		if err != nil || n > maxByteSize {
			return d.Errf("max_memory %q: not a size such as 256MiB or 1GiB", val)
		}
		h.MaxMemory = ByteSize(n)
	}
	return nil
}

// parseViolators reads "violators enforce|block [for <duration>]".
func (h *Handler) parseViolators(d *caddyfile.Dispenser) error {
	args := d.RemainingArgs()
	if len(args) != 1 && (len(args) != 3 || args[1] != "for") {
		return d.Errf("violators: want enforce or block, then for <duration> if not %v", enforce.DefaultEscalation)
	}
	h.Violators = &RepeatViolators{Mode: args[0]}
	if len(args) == 3 {
		dur, err := caddy.ParseDuration(args[2])
		if err != nil {
			return d.Errf("violators for %q: %v", args[2], err)
		}
		h.Violators.For = caddy.Duration(dur)
	}
	return nil
}

// parseVerify reads "verify off" or a verify block.
func (h *Handler) parseVerify(d *caddyfile.Dispenser) error {
	v := &Verify{}
	h.Verify = v
	seen := givenOnce{}
	if d.NextArg() {
		if d.Val() != "off" || d.NextArg() {
			return d.Errf("verify: want verify off, or a block")
		}
		v.Off = true
		return nil
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		// ip_ranges and reverse_dns add a token's sources line by line;
		// the others set one value.
		if opt != "ip_ranges" && opt != "reverse_dns" {
			if err := seen.once(d, "verify "+opt); err != nil {
				return err
			}
		}
		switch opt {
		case "ip_ranges":
			var tok, src string
			if !d.Args(&tok, &src) || d.NextArg() {
				return d.Errf("verify ip_ranges: want <token> <file|url>")
			}
			v.IPRanges = append(v.IPRanges, IPRanges{Token: tok, Source: src})
		case "reverse_dns":
			args := d.RemainingArgs()
			if len(args) < 2 {
				return d.Errf("verify reverse_dns: want <token> <domain-suffix>...")
			}
			if v.ReverseDNS == nil {
				v.ReverseDNS = make(map[string][]string)
			}
			v.ReverseDNS[args[0]] = append(v.ReverseDNS[args[0]], args[1:]...)
		case "web_bot_auth":
			if err := parseWebBotAuth(d, v); err != nil {
				return err
			}
		case "builtin", "forged", "pending", "resolver", "undeclared":
			var val string
			if !d.Args(&val) || d.NextArg() {
				return d.ArgErr()
			}
			switch opt {
			case "builtin":
				v.Builtin = val
			case "forged":
				v.Forged = val
			case "pending":
				v.Pending = val
			case "undeclared":
				v.Undeclared = val
			default:
				v.Resolver = val
			}
		default:
			return d.Errf("verify: unrecognized subdirective %q", opt)
		}
	}
	if errs := v.validate(); len(errs) > 0 {
		return d.Errf("%v", errs[0])
	}
	return nil
}

// parseWebBotAuth reads "web_bot_auth on|off", or "web_bot_auth [on]"
// with a block of "agent <token> <https-origin> [keys <jwks-file>]"
// lines, each checked as it is read so that an error names its line.
func parseWebBotAuth(d *caddyfile.Dispenser, v *Verify) error {
	args := d.RemainingArgs()
	if len(args) > 1 {
		return d.ArgErr()
	}
	if len(args) == 1 {
		v.WebBotAuth = args[0]
	}
	block := false
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		block = true
		if d.Val() != "agent" {
			return d.Errf("verify web_bot_auth: unrecognized subdirective %q", d.Val())
		}
		a := d.RemainingArgs()
		switch {
		case len(a) == 2:
			v.SignatureAgents = append(v.SignatureAgents, SignatureAgent{Token: a[0], Origin: a[1]})
		case len(a) == 4 && a[2] == "keys":
			v.SignatureAgents = append(v.SignatureAgents, SignatureAgent{Token: a[0], Origin: a[1], Keys: a[3]})
		default:
			return d.Errf("verify web_bot_auth agent: want <token> <https-origin> [keys <jwks-file>]")
		}
		if err := v.checkAgent(len(v.SignatureAgents) - 1); err != nil {
			return d.Errf("%v", err)
		}
	}
	switch {
	case !block && len(args) == 0:
		return d.Errf("verify web_bot_auth: want on, off, or a block of agent lines")
	case block && v.WebBotAuth == "off":
		return d.Errf("verify web_bot_auth off: a block of agents needs it on; leave off out")
	}
	return nil
}

// parseNewHosts reads "new_hosts <count> per <duration>".
func (h *Handler) parseNewHosts(d *caddyfile.Dispenser) error {
	args := d.RemainingArgs()
	if len(args) != 3 || args[1] != "per" {
		return d.Errf("new_hosts: want <count> per <duration>, as in new_hosts 100 per 10s")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return d.Errf("new_hosts %q: want a count of at least 1", args[0])
	}
	per, err := caddy.ParseDuration(args[2])
	if err != nil || per <= 0 {
		return d.Errf("new_hosts per %q: want a positive duration", args[2])
	}
	h.NewHosts = &NewHosts{Count: n, Per: caddy.Duration(per)}
	return nil
}

// parseSource reads "source upstream|file <path>|url <url>|inline <text>".
func (h *Handler) parseSource(d *caddyfile.Dispenser) error {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.ArgErr()
	}
	s := &Source{Kind: args[0]}
	switch {
	case s.Kind == "upstream" && len(args) == 1:
	case s.Kind == "file" && len(args) == 2:
		s.Path = args[1]
	case s.Kind == "url" && len(args) == 2:
		s.URL = args[1]
	case s.Kind == "inline" && len(args) == 2:
		s.Text = args[1]
		if !strings.HasSuffix(s.Text, "\n") {
			s.Text += "\n"
		}
	case s.Kind == "upstream" || s.Kind == "file" || s.Kind == "url" || s.Kind == "inline":
		return d.Errf("source %s: wrong number of arguments", s.Kind)
	default:
		return d.Errf("source %q: want upstream, file, url or inline", s.Kind)
	}
	h.Source = s
	return nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Handler)(nil)
