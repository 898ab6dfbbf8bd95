package caddymodule

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
)

// metrics are the handler's Prometheus collectors, on Caddy's registry.
// Labels come from bounded sets only: the agent label is a product token
// named in a robots.txt group (lower-cased), or "_other". The handler
// resolves the series it counts in ahead of requests (see factsTable), so
// counting costs no label lookup.
type metrics struct {
	decisions *prometheus.CounterVec // verdict, mode, agent
	fetches   *prometheus.CounterVec // outcome
}

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

// series returns the series a decision counts in: by its verdict, the
// mode, and the token that named its group, lower-cased, or "_other" when
// no named group decided.
func (m *metrics) series(allowed bool, reason enforce.Reason, token, mode string) prometheus.Counter {
	agent := "_other"
	if reason == enforce.ReasonNamedGroup {
		agent = strings.ToLower(token)
	}
	return m.decisions.WithLabelValues(verdictName(allowed), mode, agent)
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
