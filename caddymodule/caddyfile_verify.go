package caddymodule

import (
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// verifySyntax is how each subdirective of the verify block that takes
// one value is written.
var verifySyntax = map[string]string{
	"builtin":    "builtin on|off",
	"forged":     "forged wildcard|deny|ignore",
	"pending":    "pending claimed|wildcard",
	"resolver":   "resolver <host:port>, as in resolver 127.0.0.1:53",
	"undeclared": "undeclared bind|ignore",
}

// parseVerify reads "verify off" or a verify block. Each line is checked
// as it is read, and the block as a whole at its end, so that an error
// names the line of the option it is about.
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
		} else {
			seen.note(d, "verify "+opt, "")
		}
		if err := v.readOption(d, opt); err != nil {
			return err
		}
		if err := v.checkOption(opt); err != nil {
			return d.Errf("%v", err)
		}
	}
	s := new(Settings)
	for _, c := range verifyChecks {
		_ = c.check(v, s) // each was checked as it was read
	}
	for _, c := range verifyCrossChecks {
		if err := c.check(v, s); err != nil {
			return seen.errAt(c.option, err)
		}
	}
	return nil
}

// readOption reads the subdirective opt of a verify block.
func (v *Verify) readOption(d *caddyfile.Dispenser, opt string) error {
	if syntax, ok := verifySyntax[opt]; ok {
		val, err := oneValue(d, "verify "+opt, syntax)
		if err != nil {
			return err
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
		return nil
	}
	switch opt {
	case "ip_ranges":
		args := d.RemainingArgs()
		if len(args) != 2 {
			return d.Errf("%s: want <token> <file|url>, as in ip_ranges GPTBot /etc/caddy/gptbot.json",
				strings.Join(append([]string{"verify ip_ranges"}, args...), " "))
		}
		v.IPRanges = append(v.IPRanges, IPRanges{Token: args[0], Source: args[1]})
	case "reverse_dns":
		args := d.RemainingArgs()
		if len(args) < 2 {
			return d.Errf("%s: want <token> <domain-suffix>..., as in reverse_dns ExampleBot crawl.example.net",
				strings.Join(append([]string{"verify reverse_dns"}, args...), " "))
		}
		if v.ReverseDNS == nil {
			v.ReverseDNS = make(map[string][]string)
		}
		v.ReverseDNS[args[0]] = append(v.ReverseDNS[args[0]], args[1:]...)
	case "web_bot_auth":
		return parseWebBotAuth(d, v)
	default:
		return d.Errf("verify: unrecognized subdirective %q", opt)
	}
	return nil
}

// parseWebBotAuth reads "web_bot_auth on|off", or "web_bot_auth [on]"
// with a block of "agent <token> <https-origin> [keys <jwks-file>]"
// lines, each checked as it is read so that an error names its line.
func parseWebBotAuth(d *caddyfile.Dispenser, v *Verify) error {
	args := d.RemainingArgs()
	if len(args) > 1 {
		return d.Errf("verify web_bot_auth %s: want on or off, or a block of agent lines", strings.Join(args, " "))
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
