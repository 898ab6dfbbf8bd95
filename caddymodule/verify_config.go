package caddymodule

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Verify configures crawler identity verification: whether a client that
// names a crawler's product token in its User-Agent is that crawler (see
// package verify). It is on by default, with the built-in sources.
type Verify struct {
	// Off turns verification off: every claim is taken as made.
	Off bool `json:"off,omitempty"`
	// Builtin is "on" (the default) or "off": whether the built-in
	// published range lists, reverse DNS domains and Web Bot Auth
	// signature agents are used. Off, only those configured here are: for
	// servers that must not reach the crawler operators' sites, or that
	// keep their own copies.
	Builtin string `json:"builtin,omitempty"`
	// IPRanges replace the built-in published range lists of the tokens
	// they name with the operator's own (a file path or an http(s) URL,
	// in the published format).
	IPRanges []IPRanges `json:"ip_ranges,omitempty"`
	// ReverseDNS maps a product token to the domain suffixes its clients'
	// reverse DNS names must lie under, replacing the built-in ones for
	// that token.
	ReverseDNS map[string][]string `json:"reverse_dns,omitempty"`
	// WebBotAuth is "on" (the default) or "off": verification of signed
	// requests (HTTP Message Signatures, Web Bot Auth).
	WebBotAuth string `json:"web_bot_auth,omitempty"`
	// SignatureAgents adds Web Bot Auth signature agents to the built-in
	// ones (the Caddyfile's agent lines in a web_bot_auth block). A token
	// named here must be signed: a claim of it that carries no signature
	// of its agent is forged.
	SignatureAgents []SignatureAgent `json:"signature_agents,omitempty"`
	// Forged says what a client that fails to prove its claim gets:
	// "wildcard" (the default: judged as an unnamed crawler, by the "*"
	// group), "deny" (refused outright) or "ignore" (judged as claimed, and
	// recorded as forged).
	Forged string `json:"forged,omitempty"`
	// Pending says how a claim whose proof is not in yet is judged:
	// "claimed" (the default: as claimed, so a real crawler is never
	// refused while DNS answers) or "wildcard".
	Pending string `json:"pending,omitempty"`
	// Resolver is the DNS server ("host:port") reverse DNS asks; empty
	// means the system's resolver.
	Resolver string `json:"resolver,omitempty"`
	// Undeclared says what happens to a client whose User-Agent names no
	// crawler a group names, but whose address is in a crawler operator's
	// published range list (built-in or ip_ranges): "ignore" (the
	// default) or "bind": judged as that crawler, by the groups its tokens
	// name (or "*" as a crawler), recorded with bot_class "undeclared" and
	// identity verified by ip_ranges.
	Undeclared string `json:"undeclared,omitempty"`
}

// IPRanges names an operator's own range list for a product token.
type IPRanges struct {
	Token  string `json:"token"`
	Source string `json:"source"`
}

// SignatureAgent names the Web Bot Auth signature agent of a product
// token. One origin may speak for several tokens, each in its own entry.
type SignatureAgent struct {
	// Token is the product token the agent signs for.
	Token string `json:"token"`
	// Origin is the agent's https origin, as its Signature-Agent header
	// names it ("https://agent.example"): no path, query or fragment.
	Origin string `json:"origin"`
	// Keys, when set, is a local file pinning the agent's public keys, in
	// the key directory's format (a JWK Set of Ed25519 keys): the agent's
	// directory is then never fetched. It is read when the configuration
	// is loaded, and again on each reload. Keys are per origin: entries of
	// one origin that give keys give the same file.
	Keys string `json:"keys,omitempty"`
}

// Validate checks the configuration, as the handler's Validate does;
// the "caddy robots" commands check their flags with it. Each problem is
// an *OptionError.
func (v *Verify) Validate() error {
	if errs := v.read(new(Settings)); len(errs) > 0 {
		return problems(errs)
	}
	return nil
}

// A verifyCheck checks one option of the verify block, and reads it into
// the Settings; the Caddyfile parser runs it as the option's line is read.
type verifyCheck struct {
	option string // as the Caddyfile names it: "verify forged"
	check  func(v *Verify, s *Settings) error
}

var verifyChecks = []verifyCheck{
	{"verify builtin", func(v *Verify, _ *Settings) error {
		_, err := onOffWords.read("verify builtin", v.Builtin)
		return err
	}},
	{"verify web_bot_auth", func(v *Verify, _ *Settings) error {
		on, err := onOffWords.read("verify web_bot_auth", v.WebBotAuth)
		if err == nil && !on && len(v.SignatureAgents) > 0 {
			return errors.New("verify web_bot_auth off: signature agents are given; leave them out, or web_bot_auth on")
		}
		return err
	}},
	{"verify forged", func(v *Verify, s *Settings) (err error) {
		s.Judge.IdentityPolicy.Forged, err = forgedWords.read("verify forged", v.Forged)
		return err
	}},
	{"verify pending", func(v *Verify, s *Settings) (err error) {
		s.Judge.IdentityPolicy.PendingWildcard, err = pendingWords.read("verify pending", v.Pending)
		return err
	}},
	{"verify undeclared", func(v *Verify, s *Settings) (err error) {
		s.Judge.Undeclared, err = undeclaredWords.read("verify undeclared", v.Undeclared)
		return err
	}},
	{"verify ip_ranges", func(v *Verify, _ *Settings) error {
		var errs []error
		for _, r := range v.IPRanges {
			if err := checkRangeSource(r); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}},
	{"verify resolver", func(v *Verify, _ *Settings) error {
		if v.Resolver == "" {
			return nil
		}
		host, port, err := net.SplitHostPort(v.Resolver)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
			return fmt.Errorf("verify resolver %q: want <host:port>, e.g. 127.0.0.1:53", v.Resolver)
		}
		return nil
	}},
	{"verify reverse_dns", func(v *Verify, _ *Settings) error {
		var errs []error
		for tok, suffixes := range v.ReverseDNS {
			if !rules.IsProductToken(tok) || len(suffixes) == 0 {
				errs = append(errs, fmt.Errorf("verify reverse_dns %q: want a product token and at least one domain suffix", tok))
			}
		}
		return errors.Join(errs...)
	}},
	{"verify web_bot_auth agent", func(v *Verify, _ *Settings) error {
		var errs []error
		for i := range v.SignatureAgents {
			if err := v.checkAgent(i); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}},
}

// verifyCrossChecks check the verify block's options against each other,
// once the block is read.
var verifyCrossChecks = []verifyCheck{
	{"verify undeclared", func(v *Verify, s *Settings) error {
		builtin, _ := onOffWords.read("verify builtin", v.Builtin) // checked before
		if s.Judge.Undeclared && !builtin && len(v.IPRanges) == 0 {
			return errors.New("verify undeclared bind: there is no range list to bind a client by (builtin off, and no ip_ranges), " +
				"so it would bind nobody; add ip_ranges, leave builtin on, or leave undeclared out")
		}
		return nil
	}},
}

// read checks the configuration and reads what it makes of claims into s:
// the policies for forged and pending claims, and undeclared crawlers.
// Each problem is an *OptionError.
func (v *Verify) read(s *Settings) []error {
	if v.Off {
		if given := v.given(); len(given) > 0 {
			them := "them"
			if len(given) == 1 {
				them = "it"
			}
			return []error{&OptionError{Option: "verify off", Err: fmt.Errorf(
				"verify off: %s given too, which would do nothing with verification off; leave %s out, or verification on",
				strings.Join(given, ", "), them)}}
		}
		return nil
	}
	var errs []error
	for _, c := range verifyChecks {
		errs = append(errs, optionErrors(c.option, c.check(v, s))...)
	}
	if len(errs) > 0 {
		return errs
	}
	for _, c := range verifyCrossChecks {
		errs = append(errs, optionErrors(c.option, c.check(v, s))...)
	}
	return errs
}

// checkOption runs the check of one option of the block, for the
// Caddyfile parser: option is as the block names it ("forged").
func (v *Verify) checkOption(option string) error {
	for _, c := range verifyChecks {
		if c.option == "verify "+option {
			return c.check(v, new(Settings))
		}
	}
	return nil
}

// given names the fields given besides off, as the Caddyfile names them.
func (v *Verify) given() []string {
	var names []string
	for _, f := range [...]struct {
		name  string
		given bool
	}{
		{"builtin", v.Builtin != ""}, {"ip_ranges", len(v.IPRanges) > 0}, {"reverse_dns", len(v.ReverseDNS) > 0},
		{"web_bot_auth", v.WebBotAuth != ""}, {"signature_agents", len(v.SignatureAgents) > 0}, {"forged", v.Forged != ""},
		{"pending", v.Pending != ""}, {"resolver", v.Resolver != ""}, {"undeclared", v.Undeclared != ""},
	} {
		if f.given {
			names = append(names, f.name)
		}
	}
	return names
}

// checkRangeSource checks an operator's range list: a product token, and
// an http(s) URL with a host, or a local file, read and parsed now as the
// verifier will read it, so that a missing or malformed list is named
// when the configuration is adapted, not only when it is loaded.
func checkRangeSource(r IPRanges) error {
	if !rules.IsProductToken(r.Token) || r.Source == "" {
		return fmt.Errorf("verify ip_ranges %q %q: want a product token and a file or URL", r.Token, r.Source)
	}
	if strings.HasPrefix(r.Source, "http://") || strings.HasPrefix(r.Source, "https://") {
		if u, err := url.Parse(r.Source); err != nil || u.Host == "" {
			return fmt.Errorf("verify ip_ranges %s %q: a URL with no host", r.Token, r.Source)
		}
		return nil
	}
	if err := verify.CheckRangeFile(r.Source); err != nil {
		return fmt.Errorf("verify ip_ranges %s: %w", r.Token, err)
	}
	return nil
}

// checkAgent checks the i-th signature agent, and against the earlier
// ones: a product token, an https origin, a keys file that reads as pinned
// keys, no entry twice, one keys file per origin. The Caddyfile parser
// calls it line by line, so that its error names the line.
func (v *Verify) checkAgent(i int) error {
	a := v.SignatureAgents[i]
	wrap := func(err error) error {
		return fmt.Errorf("verify web_bot_auth agent %s %s: %w", a.Token, a.Origin, err)
	}
	if !rules.IsProductToken(a.Token) {
		return wrap(errors.New("not a product token (letters, '-' and '_')"))
	}
	origin, err := verify.AgentOrigin(a.Origin)
	if err != nil {
		return wrap(fmt.Errorf("want an https origin, such as https://agent.example: %w", err))
	}
	if a.Keys != "" {
		if err := verify.CheckKeyFile(a.Keys); err != nil {
			return wrap(err)
		}
	}
	for _, b := range v.SignatureAgents[:i] {
		other, _ := verify.AgentOrigin(b.Origin)
		switch {
		case other != origin:
		case strings.EqualFold(b.Token, a.Token):
			return wrap(errors.New("given twice"))
		case a.Keys != "" && b.Keys != "" && a.Keys != b.Keys:
			return wrap(fmt.Errorf("keys %s and %s for one agent: keys are the origin's, give one file", b.Keys, a.Keys))
		}
	}
	return nil
}

// VerifierConfig returns the configuration of the verifier cfg describes:
// the sources of proof and the resolver. The caller adds what belongs to
// its process (storage, metrics, logs). The handler and the "caddy robots"
// commands build their verifiers from it.
func (cfg *Verify) VerifierConfig() verify.Config {
	vc := verify.Config{
		ReverseDNS:          cfg.ReverseDNS,
		WebBotAuth:          cfg.WebBotAuth != "off",
		NoBuiltinLists:      cfg.Builtin == "off",
		NoBuiltinReverseDNS: cfg.Builtin == "off",
		NoBuiltinAgents:     cfg.Builtin == "off",
	}
	for _, r := range cfg.IPRanges {
		vc.RangeOverrides = append(vc.RangeOverrides, verify.RangeOverride{Token: r.Token, Source: r.Source})
	}
	for _, a := range cfg.SignatureAgents {
		if vc.SignatureAgents == nil {
			vc.SignatureAgents, vc.AgentKeys = make(map[string][]string), make(map[string]string)
		}
		// Keyed by the normalized origin, so that two spellings of one
		// agent are one agent, with one set of keys.
		origin, err := verify.AgentOrigin(a.Origin)
		if err != nil {
			origin = a.Origin // verify.New reports it
		}
		vc.SignatureAgents[origin] = append(vc.SignatureAgents[origin], a.Token)
		if a.Keys != "" {
			vc.AgentKeys[origin] = a.Keys
		}
	}
	if cfg.Resolver != "" {
		vc.Resolver = verify.NewResolver(cfg.Resolver)
	}
	return vc
}
