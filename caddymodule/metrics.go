package caddymodule

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// metrics are the handler's Prometheus collectors, on Caddy's registry.
// Labels come from bounded sets only: the agent label is a product token
// named in a robots.txt group (lower-cased), or "_other". The handler
// resolves the series it counts in ahead of requests (see factsTable), so
// counting costs no label lookup.
type metrics struct {
	decisions  *prometheus.CounterVec // verdict, mode, agent
	denials    *prometheus.CounterVec // mode, compliance, fetcher
	fetches    *prometheus.CounterVec // outcome
	claims     *prometheus.CounterVec // outcome, method
	dnsLookups *prometheus.CounterVec // result
	escalated  *prometheus.CounterVec // mode
	// listFailures counts range lists that could not be fetched or read.
	listFailures *prometheus.CounterVec // list
	// sitesForgotten, sitesRefetched, sitesRefused and robotsCut count
	// what the bounds on sites (max_hosts, max_memory, new_hosts) do to
	// them; siteSeries are their series by event, resolved once.
	sitesForgotten *prometheus.CounterVec // reason
	sitesRefetched prometheus.Counter
	sitesRefused   *prometheus.CounterVec // reason
	robotsCut      prometheus.Counter
	siteSeries     [robotstxt.SiteCut + 1]prometheus.Counter
	// gauges are read from the live states and verifiers when scraped;
	// fleet from the states' storage loops.
	gauges *stateGauges
	fleet  *fleetCollector
	// claimSeries are claims' series, by outcome and method, resolved
	// once: a label lookup per claimed crawler's request would cost more
	// than the verification itself.
	claimSeries [7][4]prometheus.Counter
	// denialSeries are the denials' series, by mode (enforce, log),
	// fetcher (crawler, user-triggered) and compliance, resolved once for
	// the same reason.
	denialSeries [2][2][4]prometheus.Counter
}

// collectors holds the metric collectors, under metricsName, for as long
// as a handler uses them.
var collectors = caddy.NewUsagePool()

// metricsName names the collectors in collectors: they are
// made once, by the first handler, and registered in each configuration's
// registry (Caddy makes a new one for each config load), so that counters
// go on counting across reloads.
const metricsName = "robots_enforce/metrics"

// provisionMetrics returns the collectors every handler counts in, made
// by the first handler, and registers them in reg (nil: none). Each call
// holds them until a releaseMetrics.
func provisionMetrics(reg *prometheus.Registry) (*metrics, error) {
	v, _, _ := collectors.LoadOrNew(metricsName, func() (caddy.Destructor, error) {
		return newCollectors(), nil
	})
	m := v.(*metrics)
	if reg == nil {
		return m, nil
	}
	if err := m.registerIn(reg); err != nil {
		releaseMetrics()
		return nil, err
	}
	return m, nil
}

// releaseMetrics lets go of the collectors held by provisionMetrics.
func releaseMetrics() { _, _ = collectors.Delete(metricsName) }

// Destruct implements caddy.Destructor: collectors hold no resources.
func (m *metrics) Destruct() error { return nil }

// newCollectors makes the collectors, registered nowhere.
func newCollectors() *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "decisions_total",
			Help: "Requests decided, by verdict (allow, deny), mode (enforce, log) and agent (a token of the crawler catalogue, or _other).",
		}, []string{"verdict", "mode", "agent"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "denials_total",
			Help: "Denied requests of clients the rules bind, by mode (enforce, log), compliance (violation, grace, protective) and fetcher (crawler, user_triggered).",
		}, []string{"mode", "compliance", "fetcher"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "robots_fetches_total",
			Help: "robots.txt requests sent, by outcome (2xx, 3xx, 4xx, 5xx, error).",
		}, []string{"outcome"}),
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "identity_claims_total",
			Help: "Crawler claims judged, by outcome (verified, forged, unverified, pending, unconfirmed, replayed) and method (ip_ranges, reverse_dns, web_bot_auth, none).",
		}, []string{"outcome", "method"}),
		dnsLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "dns_lookups_total",
			Help: "Reverse DNS lookups for crawler verification, by result (confirmed, refuted, error, rate_limited).",
		}, []string{"result"}),
		listFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "ip_ranges_failures_total",
			Help: "IP range lists that could not be fetched, or ip_ranges files that could not be read, by list (a built-in list's name, or custom); the last good copy stays in use.",
		}, []string{"list"}),
		escalated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "escalations_total",
			Help: "Crawlers escalated for a violation (the violators option), by mode (enforce, block).",
		}, []string{"mode"}),
		sitesForgotten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "sites_forgotten_total",
			Help: "Sites whose robots.txt was let go to keep within a bound, by reason (max_hosts, max_memory).",
		}, []string{"reason"}),
		sitesRefetched: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "sites_refetched_total",
			Help: "robots.txt fetched again for a site forgotten before its copy was due for a refresh: fetches the bounds cost.",
		}),
		sitesRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "sites_refused_total",
			Help: "Requests for a site not held that were refused its robots.txt (host_budget), by reason (new_hosts: the budget of first fetches is spent; in_flight: max_hosts fetches are in flight).",
		}, []string{"reason"}),
		robotsCut: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "caddy", Subsystem: "robots_enforce", Name: "robots_txt_cut_total",
			Help: "robots.txt files read only in part because the site would hold more than a quarter of max_memory.",
		}),
		gauges: newStateGauges(),
		fleet:  newFleetCollector(),
	}
	m.resolveSiteSeries()
	m.resolveClaimSeries()
	for i, mode := range [2]string{"enforce", "log"} {
		for u, fetcher := range [2]string{record.FetcherCrawler, record.FetcherUserTriggered} {
			for c := range m.denialSeries[i][u] {
				m.denialSeries[i][u][c] = m.denials.WithLabelValues(mode, enforce.Compliance(c).String(), fetcher)
			}
		}
	}
	return m
}

// registerIn registers the collectors in reg. Collectors already there
// (the same ones, registered by an earlier handler of the same
// configuration) are fine; others under the same names are an error.
func (m *metrics) registerIn(reg *prometheus.Registry) error {
	for _, c := range []prometheus.Collector{m.decisions, m.denials, m.fetches, m.claims, m.dnsLookups, m.escalated, m.listFailures,
		m.sitesForgotten, m.sitesRefetched, m.sitesRefused, m.robotsCut, m.gauges, m.fleet} {
		err := reg.Register(c)
		var are prometheus.AlreadyRegisteredError
		if err != nil && !(errors.As(err, &are) && are.ExistingCollector == c) {
			return err
		}
	}
	return nil
}

// series returns the series a decision counts in: by its verdict, the
// mode, and the token that named its group, lower-cased, or "_other" when
// no named group decided.
func (m *metrics) series(allowed bool, reason enforce.Reason, token, mode string) prometheus.Counter {
	// Catalogued tokens only: a robots.txt may name thousands of tokens,
	// and a client may cycle through them, but the catalogue is fixed.
	label := "_other"
	if reason == enforce.ReasonNamedGroup && agent.LookupCrawler(token) != agent.CategoryNone {
		label = strings.ToLower(token)
	}
	return m.decisions.WithLabelValues(enforce.VerdictName(allowed), mode, label)
}

// countingFetcher counts the requests of the Fetcher it wraps.
type countingFetcher struct {
	robotstxt.Fetcher
	m *metrics
}

func (f countingFetcher) Fetch(ctx context.Context, url string, limit int) (robotstxt.Response, error) {
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

// resolveSiteSeries fills siteSeries, for the events a store tells of.
func (m *metrics) resolveSiteSeries() {
	for _, ev := range []robotstxt.SiteEvent{robotstxt.SiteForgottenHosts, robotstxt.SiteForgottenMemory} {
		m.siteSeries[ev] = m.sitesForgotten.WithLabelValues(ev.String())
	}
	for _, ev := range []robotstxt.SiteEvent{robotstxt.SiteRefusedNewHosts, robotstxt.SiteRefusedInFlight} {
		m.siteSeries[ev] = m.sitesRefused.WithLabelValues(ev.String())
	}
	m.siteSeries[robotstxt.SiteRefetched] = m.sitesRefetched
	m.siteSeries[robotstxt.SiteCut] = m.robotsCut
}

// countSite counts what a store's bounds did to a site (StoreConfig.OnSite).
func (m *metrics) countSite(ev robotstxt.SiteEvent, _ string) {
	if int(ev) < len(m.siteSeries) && m.siteSeries[ev] != nil {
		m.siteSeries[ev].Inc()
	}
}

// countDenial counts a denial by its compliance, and whether a
// user-triggered fetcher's.
func (m *metrics) countDenial(mode string, c enforce.Compliance, userTriggered bool) {
	i, u := b2i(mode == "log"), b2i(userTriggered)
	if int(c) < len(m.denialSeries[i][u]) {
		m.denialSeries[i][u][c].Inc()
		return
	}
	m.denials.WithLabelValues(mode, c.String(), [2]string{record.FetcherCrawler, record.FetcherUserTriggered}[u]).Inc()
}

// countClaim counts a crawler's claim by its outcome and method.
func (m *metrics) countClaim(res verify.Result) {
	if int(res.Outcome) < len(m.claimSeries) && int(res.Method) < len(m.claimSeries[0]) {
		if c := m.claimSeries[res.Outcome][res.Method]; c != nil {
			c.Inc()
			return
		}
	}
	m.claims.WithLabelValues(res.Outcome.String(), claimMethod(res.Method)).Inc()
}

// claimMethod is a method's label: its name, or "none".
func claimMethod(m verify.Method) string {
	if name := m.String(); name != "" {
		return name
	}
	return "none"
}

// resolveClaimSeries fills claimSeries, for the outcomes a claim can have.
func (m *metrics) resolveClaimSeries() {
	for _, o := range []verify.Outcome{verify.Verified, verify.Forged, verify.Unverified, verify.Pending, verify.Unconfirmed, verify.Replayed} {
		for _, meth := range []verify.Method{verify.NoMethod, verify.IPRanges, verify.ReverseDNS, verify.WebBotAuth} {
			m.claimSeries[o][meth] = m.claims.WithLabelValues(o.String(), claimMethod(meth))
		}
	}
}
