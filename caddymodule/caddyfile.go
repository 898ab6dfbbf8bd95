package caddymodule

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/dustin/go-humanize"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

func init() {
	httpcaddyfile.RegisterDirective("robots_enforce", parseDirective)
	// Before redir: after the directives that set variables and headers,
	// and before everything that redirects, rewrites the path (rewrite,
	// uri, try_files), authenticates or answers (respond, reverse_proxy,
	// file_server), so that a crawler is judged on the path it asked for
	// and before any work is done for it.
	httpcaddyfile.RegisterDirectiveOrder("robots_enforce", httpcaddyfile.Before, "redir")
}

// parseDirective reads a robots_enforce directive into a route, as
// httpcaddyfile.RegisterHandlerDirective would, and refuses a second
// handler that would judge the same requests (see oneHandlerPerSite).
func parseDirective(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	where := fmt.Sprintf("%s:%d", h.File(), h.Line()) // before the matcher's look-ahead resets the cursor
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	if err := oneHandlerPerSite(h, where, matcherSet != nil); err != nil {
		return nil, err
	}
	var r Handler
	if err := r.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return h.NewRoute(matcherSet, &r), nil
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
//	    distributed {
//	        read_interval  <duration>
//	        write_interval <duration>
//	    }
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
// such as \n. A file or inline source's text is linted as it is read: an
// error "caddy robots lint" would report fails the Caddyfile.
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
			return d.Errf("robots_enforce %s %s: want at most one argument, the mode (enforce or log), then a block", h.Mode, d.Val())
		}
	}
	for d.NextBlock(0) {
		if err := h.unmarshalOption(d, seen); err != nil {
			return err
		}
	}
	s := new(Settings)
	for _, c := range fieldChecks {
		_ = c.check(h, s) // each was checked as it was read
	}
	for _, c := range crossChecks {
		if err := c.check(h, s); err != nil {
			return seen.errAt(c.option, err)
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

// errAt returns err with the file and line where option was given, as
// the dispenser's errors carry theirs.
func (g givenOnce) errAt(option string, err error) error {
	where, _, _ := strings.Cut(g[option], ", ")
	return fmt.Errorf("%w, at %s", err, where)
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

// optionSyntax is how each subdirective of one value is written: the
// error of a line that gives it none, or more than one, says so.
var optionSyntax = map[string]string{
	"mode":          "mode enforce|log",
	"status":        "status <code>, as in status 451",
	"body":          `body <text>, the text quoted when it has spaces, as in body "Disallowed by robots.txt"`,
	"wildcard":      "wildcard crawlers|automated|all|none",
	"unreachable":   "unreachable deny|allow",
	"refresh":       "refresh <duration>, in one word, as in refresh 12h or refresh 1d",
	"max_size":      "max_size <size>, in one word, as in max_size 1MiB",
	"fetch_timeout": "fetch_timeout <duration>, in one word, as in fetch_timeout 5s",
	"max_hosts":     "max_hosts <count>, as in max_hosts 4096",
	"max_memory":    "max_memory <size>, in one word, as in max_memory 512MiB",
	"content_usage": "content_usage header|off|override",
	"serve_robots":  "serve_robots enforced|origin",
	"origin":        "origin case_sensitive|case_insensitive",
}

// oneValue reads the one value of the subdirective opt, whose syntax
// says how it is written.
func oneValue(d *caddyfile.Dispenser, opt, syntax string) (string, error) {
	args := d.RemainingArgs()
	if len(args) != 1 {
		return "", d.Errf("%s: want one value, written %s", strings.Join(append([]string{opt}, args...), " "), syntax)
	}
	return args[0], nil
}

// readOption reads the subdirective opt.
func (h *Handler) readOption(d *caddyfile.Dispenser, opt string) error {
	if syntax, ok := optionSyntax[opt]; ok {
		val, err := oneValue(d, opt, syntax)
		if err != nil {
			return err
		}
		return h.setOption(d, opt, val)
	}
	switch opt {
	case "source":
		return h.parseSource(d)
	case "new_hosts":
		return h.parseNewHosts(d)
	case "allow_agents":
		args := d.RemainingArgs()
		if len(args) == 0 {
			return d.Errf("allow_agents: want one or more product tokens, as in allow_agents UptimeRobot MyMonitor")
		}
		h.AllowAgents = append(h.AllowAgents, args...)
	case "verify":
		return h.parseVerify(d)
	case "violators":
		return h.parseViolators(d)
	case "distributed":
		return h.parseDistributed(d)
	case "log_allowed":
		if args := d.RemainingArgs(); len(args) > 0 {
			return d.Errf("log_allowed %s: log_allowed takes no value; give log_allowed alone to record allowed requests too, or leave it out",
				strings.Join(args, " "))
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
		n, err := ParseByteSize(val)
		if err != nil {
			return d.Errf("max_size %q: not a size such as 500KiB or 1MiB", val)
		}
		h.MaxSize = n
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

// sourceSyntax is how each kind of source is written.
var sourceSyntax = map[string]string{
	"upstream": "source upstream",
	"file":     "source file <path>, as in source file /etc/caddy/robots.txt",
	"url":      "source url <url>, as in source url https://static.example.com/robots.txt",
	"inline":   "source inline <text>, best a heredoc: source inline <<TXT, its lines, then TXT",
}

// parseSource reads "source upstream|file <path>|url <url>|inline <text>".
func (h *Handler) parseSource(d *caddyfile.Dispenser) error {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.Errf("source: want upstream, file <path>, url <url> or inline <text>")
	}
	s := &Source{Kind: args[0]}
	syntax, known := sourceSyntax[s.Kind]
	switch {
	case !known:
		return d.Errf("source %q: want upstream, file, url or inline", s.Kind)
	case s.Kind == "upstream" && len(args) == 1:
	case s.Kind == "upstream":
		return d.Errf("source %s: the upstream source takes no value, written %s", strings.Join(args, " "), syntax)
	case len(args) != 2:
		return d.Errf("source %s: want one value, written %s", strings.Join(args, " "), syntax)
	case s.Kind == "file":
		s.Path = args[1]
	case s.Kind == "url":
		s.URL = args[1]
	case s.Kind == "inline":
		s.Text = args[1]
		if !strings.HasSuffix(s.Text, "\n") {
			s.Text += "\n"
		}
	}
	h.Source = s
	return nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Handler)(nil)
