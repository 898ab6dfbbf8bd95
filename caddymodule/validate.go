package caddymodule

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// A fieldCheck checks one option of the configuration, and reads it into
// the Settings. The same checks run when a Caddyfile is adapted (each as
// its option is read, so that the error names the file and line), when a
// JSON configuration is provisioned or validated, and when "caddy robots
// check" reads its flags.
type fieldCheck struct {
	option string // the Caddyfile subdirective, and the JSON field
	check  func(h *Handler, s *Settings) error
}

var fieldChecks = []fieldCheck{
	{"mode", func(h *Handler, s *Settings) (err error) {
		s.mode, err = modeWords.must("mode", h.Mode)
		return err
	}},
	{"status", func(h *Handler, _ *Settings) error {
		if h.Status < 400 || h.Status > 599 {
			return fmt.Errorf("status %d: want an error status, 400 to 599", h.Status)
		}
		return nil
	}},
	{"wildcard", func(h *Handler, s *Settings) (err error) {
		if h.Wildcard == "" {
			s.Judge.Policy.Wildcard = agent.WildcardCrawlers
			return nil
		}
		s.Judge.Policy.Wildcard, err = agent.ParseWildcardPolicy(h.Wildcard)
		return err
	}},
	{"unreachable", func(h *Handler, s *Settings) (err error) {
		s.unreachable, err = unreachableWords.read("unreachable", h.Unreachable)
		return err
	}},
	{"refresh", func(h *Handler, _ *Settings) error {
		if r := time.Duration(h.Refresh); r != 0 && (r < robotstxt.DefaultMinRefresh || r > robotstxt.MaxRefresh) {
			return fmt.Errorf("refresh %v: want between %v and %v (RFC 9309 §2.4)", r, robotstxt.DefaultMinRefresh, robotstxt.MaxRefresh)
		}
		return nil
	}},
	{"max_size", func(h *Handler, _ *Settings) error {
		if h.MaxSize != 0 && h.MaxSize < rules.DefaultMaxSize {
			return fmt.Errorf("max_size %d: want at least %d octets (at least 500KiB, RFC 9309 §2.5)", h.MaxSize, rules.DefaultMaxSize)
		}
		if h.MaxSize > maxMaxSize {
			return fmt.Errorf("max_size %d: want at most %d octets (%d MiB)", h.MaxSize, maxMaxSize, maxMaxSize>>20)
		}
		return nil
	}},
	{"fetch_timeout", func(h *Handler, _ *Settings) error {
		if d := time.Duration(h.FetchTimeout); d != 0 && (d < minFetchTimeout || d > maxFetchTimeout) {
			return fmt.Errorf("fetch_timeout %v: want between %v and %v", d, minFetchTimeout, maxFetchTimeout)
		}
		return nil
	}},
	{"max_hosts", func(h *Handler, _ *Settings) error {
		if h.MaxHosts < 0 || h.MaxHosts > maxMaxHosts {
			return fmt.Errorf("max_hosts %d: want between 1 and %d", h.MaxHosts, maxMaxHosts)
		}
		return nil
	}},
	{"max_memory", func(h *Handler, _ *Settings) error {
		if m := int64(h.MaxMemory); m != 0 && (m < robotstxt.MinMaxMemory || m > robotstxt.MaxMaxMemory) {
			return fmt.Errorf("max_memory %d: want between %d (%d MiB, so that a quarter of it holds any robots.txt read to 500 KiB) and %d octets",
				m, robotstxt.MinMaxMemory, robotstxt.MinMaxMemory>>20, int64(robotstxt.MaxMaxMemory))
		}
		return nil
	}},
	{"new_hosts", func(h *Handler, _ *Settings) error {
		if n := h.NewHosts; n != nil && (n.Count <= 0 || n.Per <= 0) {
			return fmt.Errorf("new_hosts %d per %v: want a positive count and period", n.Count, time.Duration(n.Per))
		}
		return nil
	}},
	{"allow_agents", func(h *Handler, _ *Settings) error {
		for _, a := range h.AllowAgents {
			if !rules.IsProductToken(a) {
				return fmt.Errorf("allow_agents %q: a product token is letters, '-' and '_' only", a)
			}
		}
		return nil
	}},
	{"source", func(h *Handler, s *Settings) error { return h.Source.read(s, int(h.MaxSize)) }},
	{"content_usage", func(h *Handler, s *Settings) (err error) {
		s.usage, err = usageWords.read("content_usage", h.ContentUsage)
		return err
	}},
	{"serve_robots", func(h *Handler, s *Settings) (err error) {
		s.serve, err = serveWords.read("serve_robots", h.ServeRobots)
		return err
	}},
	{"origin", func(h *Handler, s *Settings) (err error) {
		s.Judge.Policy.CaseInsensitive, err = originWords.read("origin", h.Origin)
		return err
	}},
	{"violators", func(h *Handler, s *Settings) (err error) {
		v := h.Violators
		if v == nil {
			return nil
		}
		if s.Judge.Escalation, err = escalationWords.must("violators", v.Mode); err != nil {
			return err
		}
		d := time.Duration(v.For)
		if d != 0 && (d < minEscalation || d > maxEscalation) {
			return fmt.Errorf("violators for %v: want between %v and %v", d, minEscalation, maxEscalation)
		}
		s.Judge.EscalationFor = d
		return nil
	}},
	{"distributed", func(h *Handler, _ *Settings) error { return h.Distributed.check() }},
	{"verify", func(h *Handler, s *Settings) error {
		v := h.Verify
		if v == nil {
			v = &Verify{}
		}
		return errors.Join(v.read(s)...)
	}},
}

// A crossCheck checks options against each other, once all are read; the
// Caddyfile names the line of option in its error.
type crossCheck struct {
	option string
	check  func(h *Handler, s *Settings) error
}

var crossChecks = []crossCheck{
	{"serve_robots", func(_ *Handler, s *Settings) error {
		if s.serve == serveOrigin && s.source == sourceUpstream {
			return errors.New("serve_robots origin: the upstream source is the site's own robots.txt, which the site answers itself; " +
				"serve_robots is for a file, url or inline source: leave it out")
		}
		return nil
	}},
}

// defaultStatus is the status of a denial when the status option is not
// given.
const defaultStatus = http.StatusForbidden

// minEscalation and maxEscalation bound "violators for": shorter than a
// minute escalates nothing a crawler would notice; past a month, an
// honest crawler's one mistake, or a stale copy, costs it too long.
const (
	minEscalation = time.Minute
	maxEscalation = 30 * 24 * time.Hour
)

// maxMaxSize bounds max_size: RFC 9309 §2.5 asks for at least 500 KiB,
// and every tracked host may hold a file this large.
const maxMaxSize = 16 << 20

// read checks a source and reads its kind into s; maxSize is the max_size
// option. A file source's file must exist when the configuration is
// adapted or loaded, so that a typo surfaces then; a file or inline
// source's text must have no error that "caddy robots lint" finds (see
// lintSource).
func (src *Source) read(s *Settings, maxSize int) error {
	if src == nil {
		return nil
	}
	kind, err := sourceWords.read("source", src.Kind)
	if err != nil {
		return err
	}
	s.source = kind
	switch kind {
	case sourceFile:
		if src.Path == "" {
			return errors.New("source file: no path")
		}
		st, err := os.Stat(src.Path)
		if err != nil {
			return fmt.Errorf("source file: %w", err)
		}
		if st.IsDir() {
			return fmt.Errorf("source file %s is a directory: want a robots.txt file", src.Path)
		}
		body, err := readSourceFile(src.Path, maxSize)
		if err != nil {
			return fmt.Errorf("source file: %w", err)
		}
		return s.lintSource("source file "+src.Path, body, maxSize)
	case sourceInline:
		return s.lintSource("source inline", []byte(src.Text), maxSize)
	case sourceURL:
		u, err := url.Parse(src.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("source url %q: want an http or https URL%s", src.URL, noHost(u))
		}
		if u.User != nil {
			return errors.New("source url: credentials in the URL would be logged with every record; serve the file without them")
		}
	}
	return nil
}

// noHost says, for a URL of the right scheme without a host, that this
// is what is wrong with it.
func noHost(u *url.URL) string {
	if u != nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return " (this one has no host)"
	}
	return ""
}

// checkOption runs the check of one option, for the Caddyfile parser.
func (h *Handler) checkOption(option string) error {
	for _, c := range fieldChecks {
		if c.option == option {
			return c.check(h, new(Settings))
		}
	}
	return nil
}

// Validate checks the configuration, as JSON gives it once Provision set
// its defaults. Provision has checked it already, before building
// anything from it, and refused to provision an invalid one: Caddy's call
// after Provision finds nothing more, and is not made to check twice.
func (h *Handler) Validate() error {
	if h.judge != nil {
		return nil // provisioned, so checked
	}
	return h.validate()
}

// validate checks the configuration as it is, every problem at once.
func (h *Handler) validate() error {
	if errs := h.read(new(Settings)); len(errs) > 0 {
		return fmt.Errorf("robots_enforce: %w", problems(errs))
	}
	return nil
}
