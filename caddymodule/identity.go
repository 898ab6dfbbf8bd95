package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"

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
	// published range lists and reverse DNS domains are used. Off, only
	// those configured here are: for servers that must not reach the
	// crawler operators' sites, or that keep their own copies.
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
}

// IPRanges names an operator's own range list for a product token.
type IPRanges struct {
	Token  string `json:"token"`
	Source string `json:"source"`
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
	return errs
}

// sharedVerifier is the verifier of one verify configuration, kept in
// states' usage pool: its range lists and DNS answers outlive config
// reloads as the robots.txt state does. It is the handlers' Identity.
type sharedVerifier struct {
	v       *verify.Verifier
	started sync.Once
}

// Verify implements enforce.Identity, starting the verifier's background
// work with the first claim.
func (s *sharedVerifier) Verify(token string, addr netip.Addr, r *http.Request) verify.Result {
	s.start()
	return s.v.Verify(token, addr, r)
}

// HasMethod implements enforce.Identity.
func (s *sharedVerifier) HasMethod(token string) bool { return s.v.HasMethod(token) }

// ListedTokens implements enforce.Identity, starting the verifier's
// background work with the first question.
func (s *sharedVerifier) ListedTokens(addr netip.Addr) []string {
	s.start()
	return s.v.ListedTokens(addr)
}

// Destruct implements caddy.Destructor.
func (s *sharedVerifier) Destruct() error { return s.v.Close() }

// start starts the verifier's background work, once: on the first request
// a handler serves, never while a configuration is only validated.
func (s *sharedVerifier) start() {
	s.started.Do(func() { go s.v.Start() })
}

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
	sum := sha256.Sum256(b)
	key := "robots_enforce/verify/" + hex.EncodeToString(sum[:16])
	log := h.logger.Named("verify")
	m := h.metrics
	h.listWarnings = loadListWarnings()
	warnings := h.listWarnings
	v, _, err := states.LoadOrNew(key, func() (caddy.Destructor, error) {
		vc := cfg.VerifierConfig()
		vc.OnEvent = func(ev verify.Event) {
			switch ev.Kind {
			case verify.EventDNSLookup:
				m.dnsLookups.WithLabelValues(ev.Result).Inc()
			case verify.EventListFailed, verify.EventListLoaded:
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
	h.verifier, h.verifierName = v.(*sharedVerifier), key
	h.metrics.addVerifier(h.verifier.v)
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
	}
	for _, r := range cfg.IPRanges {
		vc.RangeOverrides = append(vc.RangeOverrides, verify.RangeOverride{Token: r.Token, Source: r.Source})
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
