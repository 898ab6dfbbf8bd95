package caddymodule

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
)

// metrics are the handler's Prometheus collectors, on Caddy's registry.
// Labels come from bounded sets only: the agent label is a product token
// named in a robots.txt group (lower-cased), or "_other".
type metrics struct {
	decisions *prometheus.CounterVec // verdict, mode, agent
	fetches   *prometheus.CounterVec // outcome
	// browserAllow is the series most requests land in, resolved once per
	// mode so that counting them costs no label lookup.
	browserAllow map[string]prometheus.Counter
	// named caches the series of named agents by verdict, mode and the
	// token as clients spell it, so that counting costs no allocation once
	// seen; at most maxNamedSeries spellings are cached.
	named     sync.Map // namedKey → prometheus.Counter
	namedSize atomic.Int64
}

type namedKey struct {
	allowed bool
	mode    string
	token   string
}

// maxNamedSeries bounds the cache of named series: clients choose how they
// spell a token's case, and must not grow memory by it.
const maxNamedSeries = 1024

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "decisions_total",
			Help: "Requests decided, by verdict (allow, deny), mode (enforce, log) and agent (a product token named in robots.txt, or _other).",
		}, []string{"verdict", "mode", "agent"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "robots_fetches_total",
			Help: "robots.txt requests sent, by outcome (2xx, 3xx, 4xx, 5xx, error).",
		}, []string{"outcome"}),
	}
	if reg != nil {
		var err error
		if m.decisions, err = register(reg, m.decisions); err != nil {
			return nil, err
		}
		if m.fetches, err = register(reg, m.fetches); err != nil {
			return nil, err
		}
	}
	m.browserAllow = map[string]prometheus.Counter{
		"enforce": m.decisions.WithLabelValues("allow", "enforce", "_other"),
		"log":     m.decisions.WithLabelValues("allow", "log", "_other"),
	}
	return m, nil
}

// register registers c, or returns the collector a previous configuration
// registered under the same name: metrics outlive config reloads.
func register(reg *prometheus.Registry, c *prometheus.CounterVec) (*prometheus.CounterVec, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing, nil
		}
	}
	return nil, err
}

// count counts a decision.
func (m *metrics) count(dec *enforce.Decision, mode string) {
	if dec.Allowed && dec.Reason != enforce.ReasonNamedGroup {
		m.browserAllow[mode].Inc()
		return
	}
	verdict := verdictName(dec.Allowed)
	if dec.Reason != enforce.ReasonNamedGroup {
		m.decisions.WithLabelValues(verdict, mode, "_other").Inc()
		return
	}
	k := namedKey{dec.Allowed, mode, dec.Token}
	if c, ok := m.named.Load(k); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	c := m.decisions.WithLabelValues(verdict, mode, strings.ToLower(dec.Token))
	c.Inc()
	if m.namedSize.Add(1) <= maxNamedSeries {
		k.token = strings.Clone(k.token) // not a view of the request's header
		m.named.Store(k, c)
	}
}

// countingFetcher counts the requests of the Fetcher it wraps.
type countingFetcher struct {
	enforce.Fetcher
	m *metrics
}

func (f countingFetcher) Fetch(ctx context.Context, url string, limit int) (enforce.Response, error) {
	resp, err := f.Fetcher.Fetch(ctx, url, limit)
	f.m.countFetch(resp.StatusCode, err)
	return resp, err
}

// countFetch counts a robots.txt request by its outcome.
func (m *metrics) countFetch(status int, err error) {
	outcome := "error"
	if err == nil {
		outcome = strconv.Itoa(status/100) + "xx"
	}
	m.fetches.WithLabelValues(outcome).Inc()
}
