package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Resolver answers the two DNS questions of forward-confirmed reverse DNS.
// *net.Resolver satisfies it; NewResolver builds one that asks a chosen
// server. Implementations must be safe for concurrent use and must return
// soon after ctx is done.
type Resolver interface {
	// LookupAddr returns the PTR names of addr (an IP address in text form).
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	// LookupIPAddr returns the A and AAAA addresses of host.
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Storage keeps the last good copy of each range list across restarts. Its
// two methods have the shape of certmagic.Storage's Load and Store, so a
// Caddy adapter can pass Caddy's configured storage. Load returns an error
// satisfying errors.Is(err, fs.ErrNotExist) when the key holds nothing.
// Implementations must be safe for concurrent use.
type Storage interface {
	Load(ctx context.Context, key string) ([]byte, error)
	Store(ctx context.Context, key string, value []byte) error
}

// RangeOverride replaces the built-in range lists of one token with an
// operator's own list (the Caddyfile's `ip_ranges <token> <file|url>`).
// Several overrides may name the same token; an address in any of them
// proves it.
type RangeOverride struct {
	// Token is the product token the list proves, compared case-insensitively.
	Token string
	// Source is an http:// or https:// URL, or a local file path, of a list
	// in the published format (see ParseRangeList).
	Source string
}

// Config configures a Verifier. The zero value verifies with the built-in
// range lists, the built-in reverse DNS domains and Web Bot Auth off.
type Config struct {
	// StartOnUse starts the background work (see Verifier.Start) in a
	// goroutine of its own when the verifier is first asked about a
	// claim or an address, not before: a server starts it with its first
	// request, and a configuration that is only validated never does.
	StartOnUse bool
	// NoBuiltinLists turns off the built-in published range lists; only
	// RangeOverrides are used.
	NoBuiltinLists bool
	// RangeOverrides replace the built-in lists of the tokens they name.
	RangeOverrides []RangeOverride
	// ReverseDNS maps a product token to the domain suffixes its PTR names
	// must lie under (e.g. "googlebot.com"); an entry replaces the built-in
	// suffixes of that token. An empty slice turns reverse DNS off for it.
	ReverseDNS map[string][]string
	// NoBuiltinReverseDNS turns off the built-in reverse DNS domains.
	NoBuiltinReverseDNS bool
	// WebBotAuth turns on verification of signed requests.
	WebBotAuth bool
	// SignatureAgents adds signature agents (an https origin, e.g.
	// "https://chatgpt.com") and the tokens each speaks for, to the
	// built-in ones. A token named here must be signed: a claim of it that
	// carries no signature naming one of its agents is Forged by Web Bot
	// Auth (the operator who names a token's agent says that it signs).
	SignatureAgents map[string][]string
	// NoBuiltinAgents turns off the built-in signature agents: only
	// SignatureAgents are known, so no directory but theirs is fetched.
	NoBuiltinAgents bool
	// AgentKeys pins the keys of agents named in SignatureAgents: origin →
	// path of a local file holding them in the key directory's format (a
	// JWK Set of Ed25519 keys, see CheckKeyFile). New reads each file, and
	// a pinned agent's directory is never fetched.
	AgentKeys map[string]string

	// Resolver answers DNS; nil means NewResolver("").
	Resolver Resolver
	// HTTPClient fetches range lists and key directories; nil means a
	// client with FetchTimeout. Its redirect policy is replaced for key
	// directories, which are never followed through a redirect.
	HTTPClient *http.Client
	// UserAgent is sent with list and directory fetches; "" means
	// DefaultUserAgent. Some operators' CDNs challenge unnamed clients.
	UserAgent string
	// Storage keeps the last good copy of each list; nil keeps none.
	Storage Storage
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// DNSCacheSize bounds how many addresses' reverse DNS answers are held
	// (default DefaultDNSCacheSize).
	DNSCacheSize int
	// DNSRate bounds how many reverse DNS lookups start per second (default
	// DefaultDNSRate); DNSBurst is the bucket's depth (default DefaultDNSBurst).
	DNSRate  float64
	DNSBurst int
	// DNSConcurrency bounds lookups under way at once (default
	// DefaultDNSConcurrency).
	DNSConcurrency int
	// DNSPositiveTTL and DNSNegativeTTL say how long a confirmed or refuted
	// answer is kept (defaults DefaultPositiveTTL, DefaultNegativeTTL), within
	// [MinDNSTTL, MaxDNSTTL]. The standard resolver reports no TTL, so fixed
	// lifetimes are used.
	DNSPositiveTTL time.Duration
	DNSNegativeTTL time.Duration
	// PendingBound is how long a claim waits for its first reverse DNS
	// answer as Pending (default DefaultPendingBound); past it, and for any
	// lookup that failed, the claim is Unconfirmed.
	PendingBound time.Duration

	// OnEvent, when set, is told of list loads, lookups and fetches (for
	// metrics). It is called from background goroutines and, for
	// rate-limited lookups, from Verify: it must be fast and safe for
	// concurrent use.
	OnEvent func(Event)
	// OnError, when set, is told of problems an operator should see (a
	// corrupt stored copy, a copy that cannot be stored, a recovered
	// panic). A range list that cannot be fetched or parsed is told to
	// OnEvent alone (EventListFailed), with the tokens it proves, so that
	// the caller can say it once however many verifiers use the list, and
	// to whom it matters. Same rules as OnEvent.
	OnError func(error)

	// lists replaces the built-in table; tests use it to point at
	// 127.0.0.1.
	lists []PublishedList
	// fileCheckInterval is how often a local range list file is looked
	// at for a change (default defaultFileCheckInterval); tests make it
	// short.
	fileCheckInterval time.Duration
	// replayCacheSize bounds the Web Bot Auth signatures remembered
	// against replay (default defaultReplayCacheSize); tests make it
	// small.
	replayCacheSize int
}

// DefaultUserAgent names the fetcher to the operators whose lists and key
// directories it reads.
const DefaultUserAgent = "caddy-robots-enforce-verify/1 (+https://github.com/robotsenforce/caddy-robots-enforce)"

// Limits and defaults, each with its reason.
const (
	// DefaultDNSCacheSize holds the answers for this many addresses: enough
	// for the crawler fleets that visit one server in a day, small enough
	// (a few MB at most) that a flood of forged claims from distinct
	// addresses cannot grow memory.
	DefaultDNSCacheSize = 16384
	// DefaultDNSRate and DefaultDNSBurst bound the lookups a flood of forged
	// claims can cause: 20 a second after a burst of 50, a load any
	// resolver carries, while a real crawler's addresses, few and cached
	// for hours, stay well inside it.
	DefaultDNSRate  = 20
	DefaultDNSBurst = 50
	// DefaultDNSConcurrency bounds lookups under way at once, so a slow
	// resolver ties up a fixed number of goroutines.
	DefaultDNSConcurrency = 8
	// DefaultPositiveTTL keeps a confirmed name for an hour: crawler PTR
	// records change rarely, and an hour bounds how long a reassigned
	// address keeps its old verdict.
	DefaultPositiveTTL = time.Hour
	// DefaultNegativeTTL keeps a refuted answer for 30 minutes, so a forger
	// costs at most one lookup per address per half hour.
	DefaultNegativeTTL = 30 * time.Minute
	// errorTTL keeps a failed lookup (timeout, SERVFAIL) briefly: the
	// answer is unknown, so the claim is Unconfirmed, and is retried soon.
	errorTTL = time.Minute
	// DefaultPendingBound is how long a claim is Pending while its first
	// lookup runs: a resolver answers in milliseconds, or within a second
	// or two when it must ask far; a claim may pass as made meanwhile, and
	// no longer (see Verify).
	DefaultPendingBound = 2 * time.Second
	// MaxPendingBound bounds a configured PendingBound: past a lookup's
	// own timeout a claim could never be answered in it.
	MaxPendingBound = lookupTimeout
	// MinDNSTTL and MaxDNSTTL bound configured lifetimes: below a minute a
	// flood re-asks too often; past a day a reassigned address keeps a
	// wrong verdict too long.
	MinDNSTTL = time.Minute
	MaxDNSTTL = 24 * time.Hour
	// FetchTimeout bounds one fetch of a range list or key directory.
	FetchTimeout = 30 * time.Second
	// maxDNSCacheSize bounds a configured cache: 1M entries is already
	// hundreds of MB of names.
	maxDNSCacheSize = 1 << 20
)

// Event tells OnEvent what the verifier did.
type Event struct {
	// Kind says what happened.
	Kind EventKind
	// List is the range list's name for list events ("googlebot",
	// "custom"); URL its source, or the key directory's URL; Tokens the
	// product tokens the list proves.
	List   string
	URL    string
	Tokens []string
	// Result is the lookup's result for EventDNSLookup: "confirmed",
	// "refuted", "error" or "rate_limited".
	Result string
	// Prefixes is how many prefixes a loaded list holds.
	Prefixes int
	// Err is the failure of a *Failed event.
	Err error
	// Kept, for EventListFailed, says that an earlier copy of the list
	// stays in use (a local file that no longer reads, a fetch that
	// failed after one that did not).
	Kept bool
}

// EventKind names an Event.
type EventKind uint8

const (
	// EventListLoaded: a range list was fetched, read, or loaded from storage.
	EventListLoaded EventKind = iota + 1
	// EventListFailed: fetching or parsing a range list failed; the last
	// good copy stays in use.
	EventListFailed
	// EventDNSLookup: a reverse DNS lookup finished or was refused by the
	// rate limit.
	EventDNSLookup
	// EventDirectoryLoaded: a key directory was fetched.
	EventDirectoryLoaded
	// EventDirectoryFailed: a key directory could not be fetched.
	EventDirectoryFailed
)

// validate checks c and returns it with defaults filled in; it does no I/O.
func (c Config) validate() (Config, error) {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Resolver == nil {
		c.Resolver = NewResolver("")
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: FetchTimeout}
	}
	if c.DNSCacheSize == 0 {
		c.DNSCacheSize = DefaultDNSCacheSize
	}
	if c.DNSCacheSize < 0 || c.DNSCacheSize > maxDNSCacheSize {
		return c, fmt.Errorf("dns cache size %d: out of range 1..%d", c.DNSCacheSize, maxDNSCacheSize)
	}
	if c.fileCheckInterval <= 0 {
		c.fileCheckInterval = defaultFileCheckInterval
	}
	if c.replayCacheSize <= 0 {
		c.replayCacheSize = defaultReplayCacheSize
	}
	if c.DNSRate == 0 {
		c.DNSRate = DefaultDNSRate
	}
	if c.DNSBurst == 0 {
		c.DNSBurst = DefaultDNSBurst
	}
	if c.DNSRate < 0 || c.DNSBurst < 0 {
		return c, errors.New("dns rate and burst must not be negative")
	}
	if c.DNSConcurrency == 0 {
		c.DNSConcurrency = DefaultDNSConcurrency
	}
	if c.DNSConcurrency < 0 || c.DNSConcurrency > 1024 {
		return c, fmt.Errorf("dns concurrency %d: out of range 1..1024", c.DNSConcurrency)
	}
	var err error
	if c.DNSPositiveTTL, err = ttlOrDefault(c.DNSPositiveTTL, DefaultPositiveTTL); err != nil {
		return c, fmt.Errorf("dns positive ttl: %w", err)
	}
	if c.DNSNegativeTTL, err = ttlOrDefault(c.DNSNegativeTTL, DefaultNegativeTTL); err != nil {
		return c, fmt.Errorf("dns negative ttl: %w", err)
	}
	if c.PendingBound == 0 {
		c.PendingBound = DefaultPendingBound
	}
	if c.PendingBound < 0 || c.PendingBound > MaxPendingBound {
		return c, fmt.Errorf("pending bound %v: out of range 0..%v", c.PendingBound, MaxPendingBound)
	}
	for _, o := range c.RangeOverrides {
		if !validToken(o.Token) {
			return c, fmt.Errorf("ip_ranges: invalid product token %q", o.Token)
		}
		if err := checkSource(o.Source); err != nil {
			return c, fmt.Errorf("ip_ranges %s: %w", o.Token, err)
		}
	}
	for tok, suffixes := range c.ReverseDNS {
		if !validToken(tok) {
			return c, fmt.Errorf("reverse_dns: invalid product token %q", tok)
		}
		for _, s := range suffixes {
			if _, ok := normalizeSuffix(s); !ok {
				return c, fmt.Errorf("reverse_dns %s: invalid domain suffix %q", tok, s)
			}
		}
	}
	if err := c.validateAgents(); err != nil {
		return c, err
	}
	return c, nil
}

// validateAgents checks SignatureAgents and AgentKeys: https origins,
// product tokens, and pinned keys only for agents that speak for a token.
func (c Config) validateAgents() error {
	named := make(map[string]bool, len(c.SignatureAgents))
	for agent, toks := range c.SignatureAgents {
		origin, err := agentOrigin(agent)
		if err != nil {
			return fmt.Errorf("signature agent %q: %w", agent, err)
		}
		for _, tok := range toks {
			if !validToken(tok) {
				return fmt.Errorf("signature agent %q: invalid product token %q", agent, tok)
			}
		}
		named[origin] = named[origin] || len(toks) > 0
	}
	pinned := make(map[string]string, len(c.AgentKeys))
	for agent, path := range c.AgentKeys {
		origin, err := agentOrigin(agent)
		if err != nil {
			return fmt.Errorf("signature agent %q: %w", agent, err)
		}
		switch {
		case !named[origin]:
			return fmt.Errorf("signature agent %q: keys pinned for an agent that speaks for no token", agent)
		case path == "":
			return fmt.Errorf("signature agent %q: empty keys file path", agent)
		case pinned[origin] != "" && pinned[origin] != path:
			return fmt.Errorf("signature agent %q: keys pinned twice, from %s and %s", agent, pinned[origin], path)
		}
		pinned[origin] = path
	}
	return nil
}

func ttlOrDefault(d, def time.Duration) (time.Duration, error) {
	if d == 0 {
		return def, nil
	}
	if d < MinDNSTTL || d > MaxDNSTTL {
		return 0, fmt.Errorf("%v: out of range %v..%v", d, MinDNSTTL, MaxDNSTTL)
	}
	return d, nil
}

// checkSource accepts an http(s) URL with a host, or anything else as a
// local file path (read by New).
func checkSource(s string) error {
	if s == "" {
		return errors.New("empty source")
	}
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("source url: %w", err)
		}
		if u.Host == "" {
			return fmt.Errorf("source url %q: no host", s)
		}
	}
	return nil
}

// validToken reports whether s is a product token: RFC 9309 §2.2.1 allows
// letters, "_" and "-"; digits and "." occur in the wild and are accepted.
func validToken(s string) bool {
	if s == "" || len(s) > maxTokenLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// normalizeSuffix lower-cases a domain suffix and strips its leading and
// trailing dots; it reports false for one that is not a plausible domain.
func normalizeSuffix(s string) (string, bool) {
	s = strings.ToLower(strings.Trim(s, "."))
	if s == "" || len(s) > 253 || strings.Contains(s, "..") {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", false
		}
	}
	return s, true
}

// unmap returns a in the form the prefix tables hold: IPv4-mapped IPv6
// addresses as IPv4, and no zone.
func unmap(a netip.Addr) netip.Addr {
	return a.Unmap().WithZone("")
}
