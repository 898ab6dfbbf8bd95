// Package caddymodule is the Caddy adapter of caddy-robots-enforce: the HTTP
// handler http.handlers.robots_enforce (Caddyfile directive robots_enforce),
// its configuration, compliance records, placeholders, metrics and the
// "caddy robots" commands. Decisions are made by package enforce; this
// package wires them into Caddy.
package caddymodule

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
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

	// Wildcard says whom the robots.txt "*" group binds: "bots" (the
	// default: automated clients only), "all" or "none". Groups that name a
	// product token always bind clients that send it.
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
	// default) 500 KiB (RFC 9309 §2.5).
	MaxSize int `json:"max_size,omitempty"`

	// FetchTimeout bounds one robots.txt fetch, redirects included; a
	// request on a host whose file was never fetched waits for it. Default
	// 10s.
	FetchTimeout caddy.Duration `json:"fetch_timeout,omitempty"`

	// MaxHosts bounds how many hosts' robots.txt are held (upstream and url
	// sources); past it, the least recently used is forgotten. Default 1024.
	MaxHosts int `json:"max_hosts,omitempty"`

	// AllowAgents are product tokens never enforced (your own monitor, say),
	// compared case-insensitively with the User-Agent's tokens.
	AllowAgents []string `json:"allow_agents,omitempty"`

	// LogAllowed also records allowed requests of automated clients.
	LogAllowed bool `json:"log_allowed,omitempty"`

	logger   *zap.Logger
	source   enforce.Source
	upstream *upstreamFetcher // set for the upstream source
	offers   *enforce.Store   // the upstream source's: takes clients' robots.txt answers
	decider  *enforce.Decider
	readings *sync.Pool // of *enforce.Readings, scratch space for decisions
	facts    *factsTable
	// plainSeries are the series of decisions about clients not
	// automated, by verdict (deny, allow).
	plainSeries [2]prometheus.Counter
	fetchers    *robotsFetchers
	metrics     *metrics
	enforce     bool
	denyBody    []byte
	fixed       string // the host key of a url, file or inline source
	// transport carries the requests that leave Caddy (url source,
	// redirects to other hosts); its idle connections close with the
	// handler.
	transport *http.Transport
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
	// maxLoggedUserAgent is how much of a User-Agent a record keeps: enough
	// for any real header, not enough for a client to fill the log.
	maxLoggedUserAgent = 512
	// internalUserAgent names the handler's own robots.txt requests.
	internalUserAgent = "caddy-robots-enforce (robots.txt fetch)"
)

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.robots_enforce",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets defaults and prepares the source. It starts no fetch:
// the first request for a host does.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.Mode == "" {
		h.Mode = "enforce"
	}
	h.enforce = h.Mode == "enforce"
	if h.Status == 0 {
		h.Status = http.StatusForbidden
	}
	h.denyBody = []byte(h.Body)
	if h.Source == nil {
		h.Source = &Source{Kind: "upstream"}
	}
	if h.Source.Kind == "" {
		h.Source.Kind = "upstream"
	}
	wildcard, err := enforce.ParseWildcardPolicy(cmp.Or(h.Wildcard, "bots"))
	if err != nil {
		return err
	}
	h.decider = enforce.NewDecider(enforce.Policy{Wildcard: wildcard, AllowAgents: h.AllowAgents}, nil)
	h.fetchers = newRobotsFetchers(defaultTrackedFetchers)
	h.readings = &sync.Pool{New: func() any { return new(enforce.Readings) }}
	h.metrics, err = newMetrics(ctx.GetMetricsRegistry())
	if err != nil {
		return fmt.Errorf("registering robots_enforce metrics: %w", err)
	}
	h.facts = newFactsTable(h.newFacts)
	for allowed := range h.plainSeries {
		h.plainSeries[allowed] = h.metrics.series(allowed == 1, enforce.ReasonNotAutomated, "", h.Mode)
	}
	if err := h.Validate(); err != nil {
		return err
	}
	h.source, err = h.newSource()
	return err
}

// newSource builds the robots.txt source the configuration names.
func (h *Handler) newSource() (enforce.Source, error) {
	switch h.Source.Kind {
	case "file":
		h.fixed = "file"
		src, err := enforce.NewFileSource(enforce.FileConfig{Path: h.Source.Path, MaxSize: h.MaxSize})
		if err != nil {
			return nil, fmt.Errorf("robots.txt source file %s: %w", h.Source.Path, err)
		}
		return src, nil
	case "inline":
		h.fixed = "inline"
		src, err := enforce.NewInlineSource(enforce.InlineConfig{Body: h.Source.Text, MaxSize: h.MaxSize})
		if err != nil {
			return nil, fmt.Errorf("robots.txt source inline: %w", err)
		}
		return src, nil
	}
	cfg := enforce.StoreConfig{
		OnChange:     h.logRobotsChange,
		MaxSize:      h.MaxSize,
		FetchTimeout: time.Duration(h.FetchTimeout),
		Refresh:      time.Duration(h.Refresh),
		MaxHosts:     h.MaxHosts,
		Unreachable:  enforce.UnreachableDisallow,
	}
	if h.Unreachable == "allow" {
		cfg.Unreachable = enforce.UnreachableAllow
	}
	h.transport = http.DefaultTransport.(*http.Transport).Clone()
	external := &enforce.HTTPFetcher{Client: &http.Client{Transport: h.transport}, UserAgent: internalUserAgent}
	if h.Source.Kind == "url" {
		cfg.URL, cfg.Fetcher = h.Source.URL, external
		h.fixed = urlHost(h.Source.URL)
		if strings.HasPrefix(h.Source.URL, "http://") {
			cfg.Scheme = "http"
		}
	} else {
		h.upstream = &upstreamFetcher{external: external, maxSites: int64(cmp.Or(h.MaxHosts, enforce.DefaultMaxHosts))}
		cfg.Fetcher = h.upstream
	}
	cfg.Fetcher = countingFetcher{cfg.Fetcher, h.metrics}
	store, err := enforce.NewStore(cfg)
	if err != nil {
		return nil, fmt.Errorf("robots.txt store: %w", err)
	}
	if h.upstream != nil {
		h.offers = store
	}
	return store, nil
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch h.Mode {
	case "enforce", "log":
	default:
		bad("mode %q: want enforce or log", h.Mode)
	}
	if h.Status < 400 || h.Status > 599 {
		bad("status %d: want an error status, 400 to 599", h.Status)
	}
	switch h.Unreachable {
	case "", "deny", "allow":
	default:
		bad("unreachable %q: want deny or allow", h.Unreachable)
	}
	if h.Refresh < 0 || time.Duration(h.Refresh) > enforce.MaxRefresh {
		bad("refresh %v: want at most %v (RFC 9309 §2.4)", time.Duration(h.Refresh), enforce.MaxRefresh)
	}
	if h.MaxSize != 0 && h.MaxSize < rules.DefaultMaxSize {
		bad("max_size %d: want at least %d octets (500 KiB, RFC 9309 §2.5)", h.MaxSize, rules.DefaultMaxSize)
	}
	if h.FetchTimeout < 0 || h.MaxHosts < 0 {
		bad("fetch_timeout and max_hosts must not be negative")
	}
	for _, a := range h.AllowAgents {
		if !rules.IsProductToken(a) {
			bad("allow_agents %q: a product token is letters, '-' and '_' only", a)
		}
	}
	if s := h.Source; s != nil {
		switch s.Kind {
		case "", "upstream":
		case "file":
			if s.Path == "" {
				bad("source file: no path")
			}
		case "url":
			if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") || urlHost(s.URL) == "" {
				bad("source url %q: want an http or https URL", s.URL)
			}
		case "inline":
		default:
			bad("source %q: want upstream, file, url or inline", s.Kind)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("robots_enforce: %w", errors.Join(errs...))
	}
	return nil
}

// urlHost returns the authority of an http(s) URL, or "".
func urlHost(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// Cleanup stops the source's background fetches and closes the idle
// connections they left. It copes with a provisioning that stopped half
// way.
func (h *Handler) Cleanup() error {
	var err error
	if h.source != nil {
		err = h.source.Close()
	}
	if h.transport != nil {
		h.transport.CloseIdleConnections()
	}
	return err
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
