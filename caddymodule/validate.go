package caddymodule

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// A fieldCheck checks one option of the configuration. The same checks
// run when a Caddyfile is adapted (each as its option is read, so that the
// error names the file and line) and when a JSON configuration is
// validated.
type fieldCheck struct {
	option string // the Caddyfile subdirective, and the JSON field
	check  func(h *Handler) error
}

var fieldChecks = []fieldCheck{
	{"mode", func(h *Handler) error {
		if h.Mode != "enforce" && h.Mode != "log" {
			return fmt.Errorf("mode %q: want enforce or log", h.Mode)
		}
		return nil
	}},
	{"status", func(h *Handler) error {
		if h.Status < 400 || h.Status > 599 {
			return fmt.Errorf("status %d: want an error status, 400 to 599", h.Status)
		}
		return nil
	}},
	{"wildcard", func(h *Handler) error {
		if h.Wildcard == "" {
			return nil
		}
		_, err := agent.ParseWildcardPolicy(h.Wildcard)
		return err
	}},
	{"unreachable", func(h *Handler) error {
		return oneOf("unreachable", h.Unreachable, "deny", "allow")
	}},
	{"refresh", func(h *Handler) error {
		if r := time.Duration(h.Refresh); r != 0 && (r < robotstxt.DefaultMinRefresh || r > robotstxt.MaxRefresh) {
			return fmt.Errorf("refresh %v: want between %v and %v (RFC 9309 §2.4)", r, robotstxt.DefaultMinRefresh, robotstxt.MaxRefresh)
		}
		return nil
	}},
	{"max_size", func(h *Handler) error {
		if h.MaxSize != 0 && h.MaxSize < rules.DefaultMaxSize {
			return fmt.Errorf("max_size %d: want at least %d octets (500 KiB, RFC 9309 §2.5)", h.MaxSize, rules.DefaultMaxSize)
		}
		if h.MaxSize > maxMaxSize {
			return fmt.Errorf("max_size %d: want at most %d octets (%d MiB)", h.MaxSize, maxMaxSize, maxMaxSize>>20)
		}
		return nil
	}},
	{"fetch_timeout", func(h *Handler) error {
		if d := time.Duration(h.FetchTimeout); d != 0 && (d < minFetchTimeout || d > maxFetchTimeout) {
			return fmt.Errorf("fetch_timeout %v: want between %v and %v", d, minFetchTimeout, maxFetchTimeout)
		}
		return nil
	}},
	{"max_hosts", func(h *Handler) error {
		if h.MaxHosts < 0 || h.MaxHosts > maxMaxHosts {
			return fmt.Errorf("max_hosts %d: want between 1 and %d", h.MaxHosts, maxMaxHosts)
		}
		return nil
	}},
	{"max_memory", func(h *Handler) error {
		if m := int64(h.MaxMemory); m != 0 && (m < robotstxt.MinMaxMemory || m > robotstxt.MaxMaxMemory) {
			return fmt.Errorf("max_memory %d: want between %d (%d MiB, so that a quarter of it holds any robots.txt read to 500 KiB) and %d octets",
				m, robotstxt.MinMaxMemory, robotstxt.MinMaxMemory>>20, int64(robotstxt.MaxMaxMemory))
		}
		return nil
	}},
	{"new_hosts", func(h *Handler) error {
		if n := h.NewHosts; n != nil && (n.Count <= 0 || n.Per <= 0) {
			return fmt.Errorf("new_hosts %d per %v: want a positive count and period", n.Count, time.Duration(n.Per))
		}
		return nil
	}},
	{"allow_agents", func(h *Handler) error {
		for _, a := range h.AllowAgents {
			if !rules.IsProductToken(a) {
				return fmt.Errorf("allow_agents %q: a product token is letters, '-' and '_' only", a)
			}
		}
		return nil
	}},
	{"source", func(h *Handler) error { return h.Source.check() }},
	{"content_usage", func(h *Handler) error {
		return oneOf("content_usage", h.ContentUsage, "header", "off", "override")
	}},
	{"serve_robots", func(h *Handler) error {
		return oneOf("serve_robots", h.ServeRobots, "enforced", "origin")
	}},
	{"origin", func(h *Handler) error {
		return oneOf("origin", h.Origin, "case_sensitive", "case_insensitive")
	}},
	{"violators", func(h *Handler) error {
		v := h.Violators
		if v == nil {
			return nil
		}
		if _, err := enforce.ParseEscalationMode(v.Mode); err != nil || v.Mode == "" {
			return fmt.Errorf("violators %q: want enforce or block", v.Mode)
		}
		if d := time.Duration(v.For); d != 0 && (d < minEscalation || d > maxEscalation) {
			return fmt.Errorf("violators for %v: want between %v and %v", d, minEscalation, maxEscalation)
		}
		return nil
	}},
	{"verify", func(h *Handler) error {
		if h.Verify == nil {
			return nil
		}
		return errors.Join(h.Verify.validate()...)
	}},
}

// minEscalation and maxEscalation bound "violators for": shorter than a
// minute escalates nothing a crawler would notice; past a month, an
// honest crawler's one mistake, or a stale copy, costs it too long.
const (
	minEscalation = time.Minute
	maxEscalation = 30 * 24 * time.Hour
)

// oneOf checks that an option is empty (its default) or one of the names.
func oneOf(option, value string, names ...string) error {
	if value == "" {
		return nil
	}
	for _, n := range names {
		if value == n {
			return nil
		}
	}
	want := names[0]
	for i, n := range names[1:] {
		if i == len(names)-2 {
			want += " or " + n
		} else {
			want += ", " + n
		}
	}
	return fmt.Errorf("%s %q: want %s", option, value, want)
}

// maxMaxSize bounds max_size: RFC 9309 §2.5 asks for at least 500 KiB,
// and every tracked host may hold a file this large.
const maxMaxSize = 16 << 20

// check checks a source. A file source's file must exist when the
// configuration is adapted or loaded, so that a typo surfaces then.
func (s *Source) check() error {
	if s == nil {
		return nil
	}
	switch s.Kind {
	case "", "upstream", "inline":
	case "file":
		if s.Path == "" {
			return errors.New("source file: no path")
		}
		if _, err := os.Stat(s.Path); err != nil {
			return fmt.Errorf("source file: %w", err)
		}
	case "url":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("source url %q: want an http or https URL", s.URL)
		}
		if u.User != nil {
			return errors.New("source url: credentials in the URL would be logged with every record; serve the file without them")
		}
	default:
		return fmt.Errorf("source %q: want upstream, file, url or inline", s.Kind)
	}
	return nil
}

// checkOption runs the check of one option, for the Caddyfile parser.
func (h *Handler) checkOption(option string) error {
	for _, c := range fieldChecks {
		if c.option == option {
			return c.check(h)
		}
	}
	return nil
}

// Validate checks the configuration, as JSON gives it. Provision has
// checked it already, before building anything from it, and refused to
// provision an invalid one: Caddy's call after Provision finds nothing
// more, and is not made to check twice.
func (h *Handler) Validate() error {
	if h.judge != nil {
		return nil // provisioned, so checked
	}
	return h.validate()
}

// validate checks the configuration.
func (h *Handler) validate() error {
	var errs []error
	for _, c := range fieldChecks {
		if err := c.check(h); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("robots_enforce: %w", errors.Join(errs...))
	}
	return nil
}
