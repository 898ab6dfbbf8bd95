package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
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

// Validate checks the configuration, as the handler's Validate does; the
// "caddy robots" commands check their flags with it.
func (v *Verify) Validate() error { return errors.Join(v.validate()...) }

// validate checks the configuration.
func (v *Verify) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, onOff := range [...][2]string{{"web_bot_auth", v.WebBotAuth}, {"builtin", v.Builtin}} {
		if onOff[1] != "" && onOff[1] != "on" && onOff[1] != "off" {
			bad("verify %s %q: want on or off", onOff[0], onOff[1])
		}
	}
	switch v.Forged {
	case "", "wildcard", "deny", "ignore":
	default:
		bad("verify forged %q: want wildcard, deny or ignore", v.Forged)
	}
	switch v.Pending {
	case "", "claimed", "wildcard":
	default:
		bad("verify pending %q: want claimed or wildcard", v.Pending)
	}
	switch v.Undeclared {
	case "", "bind", "ignore":
	default:
		bad("verify undeclared %q: want bind or ignore", v.Undeclared)
	}
	for _, r := range v.IPRanges {
		switch {
		case !rules.IsProductToken(r.Token) || r.Source == "":
			bad("verify ip_ranges %q %q: want a product token and a file or URL", r.Token, r.Source)
		case !strings.HasPrefix(r.Source, "http://") && !strings.HasPrefix(r.Source, "https://"):
			// A local list is read when the configuration loads: say now
			// that it is not there (a malformed one is named, with its
			// line, when the verifier is built).
			if st, err := os.Stat(r.Source); err != nil {
				bad("verify ip_ranges %s: %w", r.Token, err)
			} else if st.IsDir() {
				bad("verify ip_ranges %s: %s is a directory", r.Token, r.Source)
			}
		}
	}
	if v.Resolver != "" {
		host, port, err := net.SplitHostPort(v.Resolver)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
			bad("verify resolver %q: want <host:port>, e.g. 127.0.0.1:53", v.Resolver)
		}
	}
	for tok, suffixes := range v.ReverseDNS {
		if !rules.IsProductToken(tok) || len(suffixes) == 0 {
			bad("verify reverse_dns %q: want a product token and at least one domain suffix", tok)
		}
	}
	if len(v.SignatureAgents) > 0 && v.WebBotAuth == "off" {
		bad("verify web_bot_auth off: signature agents are given; leave them out, or web_bot_auth on")
	}
	for i := range v.SignatureAgents {
		if err := v.checkAgent(i); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
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

// verifiers holds the verifier of each verify configuration across
// reloads: its range lists and DNS answers outlive a reload as the
// robots.txt state does.
var verifiers = caddy.NewUsagePool()

// sharedVerifier is the verifier of one verify configuration, kept in
// verifiers across reloads; it starts its background work with the first
// claim a handler asks about (verify.Config.StartOnUse), never while a
// configuration is only validated.
type sharedVerifier struct {
	v *verify.Verifier
}

// Destruct implements caddy.Destructor.
func (s *sharedVerifier) Destruct() error { return s.v.Close() }

// provisionVerifier builds, or finds, the verifier of the handler's
// configuration.
func (h *Handler) provisionVerifier(storage certmagic.Storage) error {
	cfg := h.Verify
	if cfg == nil {
		cfg = &Verify{}
	}
	if cfg.Off {
		return nil
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("robots_enforce verify: %w", err)
	}
	// The pinned keys are part of what identifies the verifier: a reload
	// after a keys file changed builds a new one, which reads it again.
	sum := sha256.New()
	sum.Write(b)
	for _, a := range cfg.SignatureAgents {
		if a.Keys != "" {
			sum.Write(fileDigest(a.Keys))
		}
	}
	key := "robots_enforce/verify/" + hex.EncodeToString(sum.Sum(nil)[:16])
	log := h.logger.Named("verify")
	m := h.metrics
	warnings := loadListWarnings()
	h.hold(func() error { releaseListWarnings(); return nil })
	v, loaded, err := verifiers.LoadOrNew(key, func() (caddy.Destructor, error) {
		vc := cfg.VerifierConfig()
		vc.StartOnUse = true
		vc.OnEvent = func(ev verify.Event) {
			switch ev.Kind {
			case verify.EventDNSLookup:
				m.dnsLookups.WithLabelValues(ev.Result).Inc()
			case verify.EventListFailed:
				m.listFailures.WithLabelValues(ev.List).Inc()
				warnings.event(log, ev)
			case verify.EventListLoaded:
				warnings.event(log, ev)
			}
		}
		vc.OnError = func(err error) { log.Warn("crawler verification", zap.Error(err)) }
		if storage != nil {
			vc.Storage = storage
		}
		ver, err := verify.New(vc)
		if err != nil {
			return nil, err
		}
		return &sharedVerifier{v: ver}, nil
	})
	if err != nil {
		return fmt.Errorf("robots_enforce verify: %w", err)
	}
	// A reload finds its predecessor's verifier: it reads the ip_ranges
	// files now, so that an operator who edited one and reloaded has it in
	// force at once, not at the verifier's next look. One that no longer
	// reads fails the reload, as a malformed one fails a first load; the
	// running configuration keeps the last good list.
	if loaded {
		if err := v.(*sharedVerifier).v.RecheckFiles(); err != nil {
			_, _ = verifiers.Delete(key) // this handler's use, which Cleanup will not see
			return fmt.Errorf("robots_enforce verify: %w", err)
		}
	}
	h.verifier = v.(*sharedVerifier)
	h.metrics.addVerifier(h.verifier.v)
	h.hold(func() error {
		h.metrics.removeVerifier(h.verifier.v)
		_, err := verifiers.Delete(key)
		return err
	})
	return nil
}

// fileDigest is the SHA-256 of a small regular file, or nil when it cannot
// be read: verify.New then reports why.
func fileDigest(path string) []byte {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxKeysFileDigest)); err != nil {
		return nil
	}
	return h.Sum(nil)
}

// maxKeysFileDigest bounds what fileDigest reads: past the 64 KiB the
// verifier accepts, the file is refused anyway.
const maxKeysFileDigest = 1 << 20

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

// IdentityPolicy returns what a claim's outcome does to a decision
// (Forged and Pending), from a configuration Validate accepted; a nil
// Verify has the defaults.
func (cfg *Verify) IdentityPolicy() enforce.IdentityPolicy {
	if cfg == nil {
		return enforce.IdentityPolicy{}
	}
	forged, _ := enforce.ParseForgedPolicy(cfg.Forged)
	return enforce.IdentityPolicy{Forged: forged, PendingWildcard: cfg.Pending == "wildcard"}
}
