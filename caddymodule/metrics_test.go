package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

const (
	unitDecisionsMetric = "caddy_robots_enforce_decisions_total"
	unitFetchesMetric   = "caddy_robots_enforce_robots_fetches_total"
)

// unitSeries gathers the counter series of one metric from reg that have
// counted something, keyed by their labels written as name=value pairs in
// label order. (The collectors create the browser series up front, at
// zero.)
func unitSeries(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	series := make(map[string]float64)
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			if v := m.GetCounter().GetValue(); v != 0 {
				series[strings.Join(labels, ",")] = v
			}
		}
	}
	return series
}

func unitDecisionLabels(agent, mode, verdict string) string {
	return "agent=" + agent + ",mode=" + mode + ",verdict=" + verdict
}

// unitCount counts a decision as the handler does, in its series.
func unitCount(m *metrics, dec *enforce.Decision, mode string) {
	m.series(dec.Allowed, dec.Reason, dec.Token, mode).Inc()
}

func unitNewMetrics(t *testing.T, reg *prometheus.Registry) *metrics {
	t.Helper()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatalf("newMetrics: %v", err)
	}
	return m
}

// TestMetricsAcrossReloads provisions the collectors as two configurations
// do, each registering them in its own registry (Caddy makes one for each
// config load): the second counts on where the first left off.
func TestMetricsAcrossReloads(t *testing.T) {
	first, second := prometheus.NewRegistry(), prometheus.NewRegistry()
	m1, err := provisionMetrics(first)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseMetrics()
	m2, err := provisionMetrics(second)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseMetrics()
	if m1 != m2 {
		t.Fatal("a second configuration got new collectors, want the first's")
	}
	browser := enforce.Decision{Allowed: true, Reason: enforce.ReasonNotAutomated}
	named := enforce.Decision{Allowed: false, Reason: enforce.ReasonNamedGroup, Token: "GPTBot"}
	wildcard := enforce.Decision{Allowed: false, Reason: enforce.ReasonWildcardGroup, Token: "curl"}
	for _, m := range []*metrics{m1, m2, m2} {
		unitCount(m, &browser, "enforce")
		unitCount(m, &named, "enforce")
		unitCount(m, &wildcard, "log")
		m.countFetch(http.StatusOK, nil)
	}
	want := map[string]float64{
		unitDecisionLabels("_other", "enforce", "allow"): 3,
		unitDecisionLabels("gptbot", "enforce", "deny"):  3,
		unitDecisionLabels("_other", "log", "deny"):      3,
	}
	unitCompareSeries(t, unitSeries(t, second, unitDecisionsMetric), want)
	unitCompareSeries(t, unitSeries(t, second, unitFetchesMetric), map[string]float64{"outcome=2xx": 3})
}

func unitCompareSeries(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("series {%s} = %v, want %v", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected series {%s} = %v", k, g)
		}
	}
}

// TestMetricsWithoutRegistry checks that the collectors work when Caddy
// gives no registry.
func TestMetricsWithoutRegistry(t *testing.T) {
	m := unitNewMetrics(t, nil)
	unitCount(m, &enforce.Decision{Allowed: true, Reason: enforce.ReasonNotAutomated}, "log")
	unitCount(m, &enforce.Decision{Reason: enforce.ReasonNamedGroup, Token: "CCBot"}, "log")
	m.countFetch(404, nil)
}

// TestMetricsRegistrationConflict checks that a different collector under
// the same name is reported, not silently shared.
func TestMetricsRegistrationConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "robots_enforce", Name: "decisions_total", Help: "something else",
	}, []string{"host"}))
	if _, err := newMetrics(reg); err == nil {
		t.Error("newMetrics with a conflicting collector registered = nil error, want one")
	}
}

// TestMetricsAgentLabel checks the agent label of each kind of decision:
// the lower-cased token for a named group's, "_other" for every other.
func TestMetricsAgentLabel(t *testing.T) {
	reasons := []enforce.Reason{
		enforce.ReasonNamedGroup, enforce.ReasonWildcardGroup, enforce.ReasonNoGroup,
		enforce.ReasonNotAutomated, enforce.ReasonRobotsTxt, enforce.ReasonUnreachable,
		enforce.ReasonUnavailable, enforce.ReasonAllowListed, enforce.ReasonNoPath,
	}
	for _, reason := range reasons {
		for _, allowed := range []bool{true, false} {
			for _, mode := range []string{"enforce", "log"} {
				dec := enforce.Decision{Allowed: allowed, Reason: reason, Token: "GPTBot"}
				reg := prometheus.NewRegistry()
				unitCount(unitNewMetrics(t, reg), &dec, mode)
				agent := "_other"
				if reason == enforce.ReasonNamedGroup {
					agent = "gptbot"
				}
				verdict := "deny"
				if allowed {
					verdict = "allow"
				}
				got := unitSeries(t, reg, unitDecisionsMetric)
				if key := unitDecisionLabels(agent, mode, verdict); got[key] != 1 || len(got) != 1 {
					t.Errorf("count(%s, allowed %v, mode %s): series %v, want only {%s} = 1", reason, allowed, mode, got, key)
				}
			}
		}
	}
}

// TestMetricsAgentLabelFromDecider counts real decisions: the label never
// holds the User-Agent header, only a token the robots.txt names, lower-cased
// however the client spells it, or "_other".
func TestMetricsAgentLabelFromDecider(t *testing.T) {
	src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{
		Body: "User-agent: GPTBot\nDisallow: /\n\nUser-agent: Googlebot\nAllow: /\n\nUser-agent: *\nDisallow: /private/\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	snap := src.Snapshot(context.Background(), "inline")
	decider := enforce.NewDecider(enforce.Policy{}, nil)
	const (
		gptbot  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
		google  = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
		crawler = "SomeCrawler/1.0 (+https://crawler.example/about)"
		chrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	)
	for _, tt := range []struct {
		ua, target string
		want       string // the one series counted
	}{
		{gptbot, "/", unitDecisionLabels("gptbot", "enforce", "deny")},
		{"gPtBoT/2.0", "/blog/", unitDecisionLabels("gptbot", "enforce", "deny")},
		{google, "/private/report.html", unitDecisionLabels("googlebot", "enforce", "allow")},
		{crawler, "/private/report.html", unitDecisionLabels("_other", "enforce", "deny")},
		{crawler, "/", unitDecisionLabels("_other", "enforce", "allow")},
		{chrome, "/private/report.html", unitDecisionLabels("_other", "enforce", "allow")},
		{"", "/private/report.html", unitDecisionLabels("_other", "enforce", "allow")}, // automated, not a crawler
		{gptbot, "/robots.txt", unitDecisionLabels("_other", "enforce", "allow")},
	} {
		reg := prometheus.NewRegistry()
		dec := decider.Decide(snap, enforce.Query{Target: tt.target, UserAgent: tt.ua}, &enforce.Readings{})
		unitCount(unitNewMetrics(t, reg), &dec, "enforce")
		got := unitSeries(t, reg, unitDecisionsMetric)
		if got[tt.want] != 1 || len(got) != 1 {
			t.Errorf("decision %s on %s for %q: series %v, want only {%s} = 1", dec.Reason, tt.target, tt.ua, got, tt.want)
		}
	}
}

// unitSpelling returns the i-th case spelling of token.
func unitSpelling(token string, i int) string {
	b := []byte(strings.ToLower(token))
	for j := range b {
		if i>>j&1 == 1 {
			b[j] -= 'a' - 'A'
		}
	}
	return string(b)
}

// TestCountingFetcher checks the outcome label of each kind of response,
// and that the wrapped fetcher's answer passes unchanged.
func TestCountingFetcher(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := unitNewMetrics(t, reg)
	errNetwork := errors.New("connection refused")
	statuses := []int{200, 204, 301, 308, 404, 410, 429, 500, 503, -1}
	for _, status := range statuses {
		f := countingFetcher{robotstxt.FetcherFunc(func(ctx context.Context, url string, limit int) (robotstxt.Response, error) {
			if status < 0 {
				return robotstxt.Response{}, fmt.Errorf("fetching %s: %w", url, errNetwork)
			}
			return robotstxt.Response{StatusCode: status, Body: []byte("body")}, nil
		}), m}
		resp, err := f.Fetch(context.Background(), "https://example.com/robots.txt", 10)
		if status < 0 {
			if !errors.Is(err, errNetwork) {
				t.Errorf("Fetch error = %v, want the wrapped fetcher's", err)
			}
			continue
		}
		if err != nil || resp.StatusCode != status || string(resp.Body) != "body" {
			t.Errorf("Fetch = %+v, %v; want status %d, the wrapped fetcher's body and no error", resp, err, status)
		}
	}
	unitCompareSeries(t, unitSeries(t, reg, unitFetchesMetric), map[string]float64{
		"outcome=2xx":   2,
		"outcome=3xx":   2,
		"outcome=4xx":   3,
		"outcome=5xx":   2,
		"outcome=error": 1,
	})
}

// newMetrics returns new collectors registered in reg (nil: none).
func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := newCollectors()
	if reg == nil {
		return m, nil
	}
	return m, m.registerIn(reg)
}
