// Package caddymodule is the Caddy adapter of caddy-robots-enforce: the HTTP
// handler http.handlers.robots_enforce (Caddyfile directive robots_enforce),
// its configuration, the state it keeps across reloads and restarts, its
// compliance records, placeholders and metrics. The judgement of a request
// is made by package internal/enforce, in one call; this package gathers
// the request, writes what the judgement hands back, and denies or hands
// the request on. The "caddy robots" commands are in caddymodule/robotscmd,
// the robots_buffered log writer in caddymodule/robotsbuf.
package caddymodule

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/certmagic"
	"github.com/dustin/go-humanize"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler holds crawlers to the site's own robots.txt (RFC 9309). For each
// request it finds the robots.txt group the User-Agent names (or the "*"
// group, for automated clients), matches the request path against it, and
// in enforce mode answers a disallowed request with an error (403 by
// default), which handle_errors can shape; in log mode it lets the request
// pass. In both modes it writes the same compliance record for each decision
// about an automated client that was denied (and, with log_allowed, allowed).
// Requests for /robots.txt always pass.
//
// The handler sets these placeholders for the rest of the route, to ""
// where they do not apply:
//
//	{http.robots_enforce.verdict}    allow or deny
//	{http.robots_enforce.reason}     why (named_group, wildcard_group, not_automated, ...)
//	{http.robots_enforce.agent}      the product token the decision is about, if any
//	{http.robots_enforce.rule}       the deciding rule's pattern, if any
//	{http.robots_enforce.rule_line}  the deciding rule's line, if any
type Handler struct {
	// Mode is "enforce" (the default: disallowed requests are answered
	// with Status) or "log" (they pass, and are recorded).
	Mode string `json:"mode,omitempty"`

	// Source says where robots.txt comes from. The default, upstream, is
	// the site's own file, fetched through the rest of the route.
	Source *Source `json:"source,omitempty"`

	// Status is the HTTP status of a denial in enforce mode. Default: 403.
	Status int `json:"status,omitempty"`

	// Body, when set, is written as the response body of a denial, with
	// Status, by the handler itself. When empty, the handler returns an
	// error with Status, for handle_errors to answer.
	Body string `json:"body,omitempty"`

	// Wildcard says whom the robots.txt "*" group binds: "crawlers" (the
	// default: catalogued crawlers and clients that call themselves bots,
	// crawlers, spiders, fetchers or scrapers), "automated" (also HTTP
	// libraries and tools, monitors, link previewers, clients without a
	// User-Agent or whose header is not shaped like a browser's; "bots" is
	// read as this), "all" or "none". Groups that name a product token
	// always bind clients that send it.
	Wildcard string `json:"wildcard,omitempty"`

	// Unreachable says what applies while a host's robots.txt could never
	// be fetched (server errors, timeouts): "deny" (the default: complete
	// disallow for automated clients, RFC 9309 §2.3.1.4) or "allow".
	Unreachable string `json:"unreachable,omitempty"`

	// Refresh is how long a fetched robots.txt is used before it is fetched
	// again, at most (and by default) 24h; the response's Cache-Control can
	// make it shorter.
	Refresh caddy.Duration `json:"refresh,omitempty"`

	// MaxSize is how many octets of robots.txt are parsed, at least (and by
	// default) 500 KiB (RFC 9309 §2.5), at most 16 MiB. JSON takes a
	// number of octets or a size with a unit: 1048576 or "1MiB".
	MaxSize ByteSize `json:"max_size,omitempty"`

	// FetchTimeout bounds one robots.txt fetch, redirects included; a
	// request on a host whose file was never fetched waits for it. Default
	// 10s.
	FetchTimeout caddy.Duration `json:"fetch_timeout,omitempty"`

	// MaxHosts bounds how many hosts' robots.txt are held (upstream and url
	// sources); past it, one is forgotten, sites in regular use last (see
	// docs/internals.md). Default 1024.
	MaxHosts int `json:"max_hosts,omitempty"`

	// MaxMemory bounds the octets the hosts' robots.txt hold (upstream and
	// url sources), beside MaxHosts: each host's parsed file, the index
	// of its groups and its earlier versions, as the heap holds them.
	// Past it, one is forgotten, sites in regular use last; a host whose
	// file alone would hold more than a quarter of it is held read only
	// as far as fits (see docs/internals.md). At least 64 MiB; JSON takes
	// a number of octets or a size with a unit. Default 256MiB.
	MaxMemory ByteSize `json:"max_memory,omitempty"`

	// NewHosts is the budget of first fetches for hosts not seen before
	// (upstream source): at most Count in any Per, on average. A request
	// for a new host over budget is judged as if its robots.txt were
	// unreachable, never allowed for the clients the rules bind. Default:
	// 100 per 10s.
	NewHosts *NewHosts `json:"new_hosts,omitempty"`

	// AllowAgents are product tokens never enforced (your own monitor, say),
	// compared case-insensitively with the User-Agent's tokens.
	AllowAgents []string `json:"allow_agents,omitempty"`

	// LogAllowed also records allowed requests of automated clients.
	LogAllowed bool `json:"log_allowed,omitempty"`

	// ContentUsage says what the handler does with the AIPREF usage
	// preference that robots.txt attaches to a response's path
	// (Content-Usage rules): "header" (the default) adds it as the
	// Content-Usage response header unless the origin set one; "override"
	// replaces the origin's; "off" adds nothing.
	ContentUsage string `json:"content_usage,omitempty"`

	// ServeRobots says who answers GET and HEAD /robots.txt when the
	// source is not upstream: "enforced" (the default) answers with the
	// file the handler enforces, so that crawlers read the rules they are
	// held to; "origin" passes the request on to the site, which may serve
	// another file, or none.
	ServeRobots string `json:"serve_robots,omitempty"`

	// Verify configures crawler identity verification, on by default with
	// the built-in sources; {"off": true} turns it off.
	Verify *Verify `json:"verify,omitempty"`

	// Origin says how the origin behind the handler reads paths:
	// "case_sensitive" (the default, as RFC 9309 and URIs compare them) or
	// "case_insensitive" (IIS, or files on a file system that folds case,
	// serve /PRIVATE/x as /private/x): paths are then also judged folded,
	// so that no spelling of a disallowed path escapes.
	Origin string `json:"origin,omitempty"`

	// Violators escalates a crawler once it is recorded with a violation
	// (never for grace or a protective denial), for a while: see
	// RepeatViolators. Off by default.
	Violators *RepeatViolators `json:"violators,omitempty"`

	// Distributed shares the robots.txt versions in force, who was served
	// which, and the escalations with the other instances that share
	// Caddy's storage: see Distributed. Off by default: each instance
	// judges by what it saw itself.
	Distributed *Distributed `json:"distributed,omitempty"`

	// logger writes the compliance records; warnings, what operators
	// must know (see warningsLogger).
	logger, warnings *zap.Logger
	// settings are the options read into typed values (see Settings).
	settings *Settings
	// state outlives config reloads (see robotsStates).
	state *sharedState
	// held says how to give back each share of a state that outlives
	// reloads the handler took, in the order it took them (see hold).
	held  []func() error
	sites *siteCache // the upstream source's sites, as this handler saw them
	// retired is set when the handler is cleaned up: the routes it gave
	// the sites must no longer be used.
	retired *atomic.Bool
	// rewriteWarned is set once the handler has warned that it runs after
	// a path rewrite (see warnRewritten).
	rewriteWarned *atomic.Bool
	// judge judges each request, in one call (see enforce.Judge).
	judge *enforce.Judge
	facts *factsTable
	// plainSeries are the series of decisions about clients not
	// automated, by verdict (deny, allow).
	plainSeries [2]prometheus.Counter
	metrics     *metrics
	denyBody    []byte
	// verifier checks crawlers' claims (nil when verification is off).
	verifier *sharedVerifier
}

// ByteSize is a number of octets. In JSON it is a number, or a string with
// a unit as the Caddyfile takes it ("500KiB", "1MiB", "2MB"), up to
// maxByteSize; each option bounds its own further.
type ByteSize int

// UnmarshalJSON reads a number of octets or a size with a unit.
func (b *ByteSize) UnmarshalJSON(data []byte) error {
	var n int
	if err := json.Unmarshal(data, &n); err == nil {
		*b = ByteSize(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("want a number of octets or a size such as \"1MiB\", got %s", data)
	}
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// ParseByteSize reads a size as max_size takes it: a number of octets, or
// a size with a unit, such as 500KiB, 1MiB or 2MB.
func ParseByteSize(s string) (ByteSize, error) {
	v, err := humanize.ParseBytes(s)
	if err != nil || v > maxByteSize {
		return 0, fmt.Errorf("size %q: want a size such as 500KiB or 1MiB, at most 1TiB", s)
	}
	return ByteSize(v), nil
}

// RepeatViolators says what a crawler recorded with a violation gets
// next. A crawler is its product token when it was verified as it, else
// its token and address, so that no one can get another crawler
// escalated. The escalations outlive reloads and restarts with the rest
// of the state.
type RepeatViolators struct {
	// Mode is "enforce" (what its group disallows is denied, in log mode
	// too) or "block" (everything but /robots.txt is denied).
	Mode string `json:"mode"`
	// For is how long an escalation lasts. Default: 24h, as long as a
	// crawler may keep a robots.txt (RFC 9309 §2.4).
	For caddy.Duration `json:"for,omitempty"`
}

// NewHosts is a budget: Count events in any Per, on average.
type NewHosts struct {
	// Count is how many; it is also the largest burst.
	Count int `json:"count,omitempty"`
	// Per is the period the budget is spread over.
	Per caddy.Duration `json:"per,omitempty"`
}

// Source says where robots.txt comes from.
type Source struct {
	// Kind is "upstream" (the default), "file", "url" or "inline".
	Kind string `json:"kind,omitempty"`
	// Path is the file of a file source, read again when it changes.
	Path string `json:"path,omitempty"`
	// URL is the robots.txt of a url source, used for every host.
	URL string `json:"url,omitempty"`
	// Text is the robots.txt of an inline source.
	Text string `json:"text,omitempty"`
}

// Limits of the adapter, each with its reason.
const (
	// minFetchTimeout and maxFetchTimeout bound fetch_timeout: a fetch
	// shorter than a round trip could never succeed, and the first request
	// for a site waits for its fetch, which no client waits a minute for.
	minFetchTimeout = 100 * time.Millisecond
	maxFetchTimeout = time.Minute
	// maxMaxHosts bounds max_hosts: each host holds a parsed robots.txt of
	// up to max_size, and a million is more sites than one server has.
	maxMaxHosts = 1_000_000
	// maxByteSize bounds a ByteSize as read: the most max_memory takes
	// (robotstxt.MaxMaxMemory).
	maxByteSize = robotstxt.MaxMaxMemory
)

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.robots_enforce",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets defaults, reads the options into typed values (see
// Settings) and prepares the source. It starts no fetch: the first
// request for a host does. The robots.txt state is shared with the
// handlers of earlier and later configurations with the same source
// settings (see robotsStates).
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger, h.warnings = ctx.Logger(), warningsLogger(ctx)
	h.retired, h.rewriteWarned = new(atomic.Bool), new(atomic.Bool)
	h.setDefaults()
	s, err := h.Settings()
	if err != nil {
		return err
	}
	h.settings = s
	s.logLintWarnings(h.warnings)
	h.denyBody = denyBody(h.Body)
	if h.metrics, err = provisionMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("registering robots_enforce metrics: %w", err)
	}
	h.hold(func() error { releaseMetrics(); return nil })
	h.facts = newFactsTable(h.newFacts)
	for allowed := range h.plainSeries {
		h.plainSeries[allowed] = h.metrics.series(allowed == 1, enforce.ReasonNotAutomated, "", h.Mode)
	}
	h.sites = newSiteCache(cmp.Or(h.MaxHosts, robotstxt.DefaultMaxHosts), h.retired)
	storage := storageOf(ctx)
	if h.state, err = h.loadState(storage); err != nil {
		return err
	}
	if up := h.state.upstream; up != nil {
		m := h.metrics
		h.sites.fetcherFor = func(sr *siteRoute) robotstxt.Fetcher { return countingFetcher{siteFetcher{up, sr}, m} }
	}
	if h.state.store != nil {
		h.metrics.gauges.addStore(h.state.store)
	}
	if s.Verify {
		if err := h.provisionVerifier(storage); err != nil {
			return err
		}
	}
	cfg := s.Judge
	cfg.Source, cfg.FixedKey, cfg.Served = h.state.source, s.FixedKey, h.state.served
	if h.verifier != nil {
		cfg.Identity = h.verifier.v
	}
	if h.Violators != nil {
		cfg.Violators = h.state.violators
	}
	if h.Distributed != nil && h.state.persist != nil {
		// One log may gather a fleet's records (a net writer to one
		// collector): each names the instance that judged, as its part in
		// the storage is named, so that the audit tells them apart.
		cfg.Instance = h.state.persist.base
	}
	h.judge = enforce.NewJudge(cfg)
	return nil
}

// denyBody is the response body of a denial with the body option: its
// text, ended with a line break as a text answer is (a terminal shows the
// next prompt on a line of its own).
func denyBody(text string) []byte {
	if text == "" || strings.HasSuffix(text, "\n") {
		return []byte(text)
	}
	return []byte(text + "\n")
}

// buildSource builds the robots.txt source of st, the state of the
// handler's source settings, for the first handler that has them.
func (h *Handler) buildSource(st *sharedState) error {
	s := h.settings
	switch {
	case s.File != nil:
		src, err := robotstxt.NewFileSource(*s.File)
		if err != nil {
			return fmt.Errorf("robots.txt source file %s: %w", s.File.Path, err)
		}
		st.source = src
		return nil
	case s.Inline != nil:
		src, err := robotstxt.NewInlineSource(*s.Inline)
		if err != nil {
			return fmt.Errorf("robots.txt source inline: %w", err)
		}
		st.source = src
		return nil
	}
	cfg := *s.Store
	cfg.OnChange = st.logRobotsChange
	cfg.OnSite = h.metrics.countSite
	if st.persist != nil {
		cfg.OnVersion = st.persist.keepBody
	}
	st.transport = http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	st.transport.DialContext = (&dialGuard{dial: dialer.DialContext, resolver: net.DefaultResolver}).DialContext
	external := &robotstxt.HTTPFetcher{Client: &http.Client{Transport: st.transport}, UserAgent: robotstxt.FetchUserAgent}
	if cfg.URL != "" {
		cfg.Fetcher = guardedFetcher{external, urlPolicy(cfg.URL)}
	} else {
		st.upstream = &upstreamFetcher{external: external, logger: st.log}
		cfg.Fetcher = st.upstream
	}
	cfg.Fetcher = countingFetcher{cfg.Fetcher, h.metrics}
	store, err := robotstxt.NewStore(cfg)
	if err != nil {
		return fmt.Errorf("robots.txt store: %w", err)
	}
	st.source, st.store = store, store
	return nil
}

// storageOf returns the storage of ctx's configuration, or nil for a
// context made without one (a command or a test provisioning a handler on
// its own), whose Storage would panic.
func storageOf(ctx caddy.Context) (s certmagic.Storage) {
	defer func() {
		if recover() != nil {
			s = nil
		}
	}()
	return ctx.Storage()
}

// Cleanup retires the routes the handler gave its sites, and lets go of
// what it holds of the states that outlive reloads, in the reverse order
// it took them (see hold): each is closed (the robots.txt state's
// background fetches stopped, its idle connections closed) when no
// handler of a newer configuration took it over. It copes with a
// provisioning that stopped half way: only what was taken is let go.
func (h *Handler) Cleanup() error {
	if h.retired != nil {
		h.retired.Store(true)
	}
	var errs []error
	for i := len(h.held) - 1; i >= 0; i-- {
		errs = append(errs, h.held[i]())
	}
	h.held = nil
	return errors.Join(errs...)
}

// hold notes that the handler took a share of a state that outlives
// reloads, and how to give it back at Cleanup.
func (h *Handler) hold(release func() error) { h.held = append(h.held, release) }

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
