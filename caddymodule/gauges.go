package caddymodule

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// stateGauges are the gauges read, when scraped, from the robots.txt
// stores and the verifiers in use: how many hosts have which robots.txt
// access, how many octets they hold, how old the oldest copy in force is,
// and how old each published range list is. Stores and verifiers join and leave with the states that
// hold them, so the gauges follow config reloads.
type stateGauges struct {
	hosts, bytes, oldest, listAge *prometheus.Desc

	mu        sync.Mutex
	stores    map[*robotstxt.Store]int // the handlers using each
	verifiers map[*verify.Verifier]int
}

func newStateGauges() *stateGauges {
	return &stateGauges{
		hosts: prometheus.NewDesc("caddy_robots_enforce_robots_txt_hosts",
			"Hosts whose robots.txt the handlers hold, by access of the copy in force (available, unavailable, unreachable).",
			[]string{"access"}, nil),
		bytes: prometheus.NewDesc("caddy_robots_enforce_robots_txt_bytes",
			"Octets the hosts' robots.txt hold (parsed files, indexes, earlier versions), as counted against max_memory.", nil, nil),
		oldest: prometheus.NewDesc("caddy_robots_enforce_robots_txt_oldest_age_seconds",
			"Age of the oldest robots.txt copy in force, in seconds (refreshed within a day unless unreachable).", nil, nil),
		listAge: prometheus.NewDesc("caddy_robots_enforce_ip_ranges_age_seconds",
			"Age of each published IP range list in use for crawler verification, in seconds.", []string{"list"}, nil),
		stores:    make(map[*robotstxt.Store]int),
		verifiers: make(map[*verify.Verifier]int),
	}
}

// Describe implements prometheus.Collector.
func (g *stateGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.hosts
	ch <- g.bytes
	ch <- g.oldest
	ch <- g.listAge
}

// Collect implements prometheus.Collector.
func (g *stateGauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	byAccess := map[string]int{"available": 0, "unavailable": 0, "unreachable": 0}
	var oldest time.Duration
	var bytes int64
	for s := range g.stores {
		bytes += s.Bytes()
		counts, age := s.Stats(now)
		for a, n := range counts {
			byAccess[a.String()] += n
		}
		oldest = max(oldest, age)
	}
	for access, n := range byAccess {
		ch <- prometheus.MustNewConstMetric(g.hosts, prometheus.GaugeValue, float64(n), access)
	}
	ch <- prometheus.MustNewConstMetric(g.bytes, prometheus.GaugeValue, float64(bytes))
	ch <- prometheus.MustNewConstMetric(g.oldest, prometheus.GaugeValue, oldest.Seconds())
	ages := make(map[string]time.Duration)
	for v := range g.verifiers {
		v.EachListAge(now, func(name string, age time.Duration) {
			ages[name] = max(ages[name], age)
		})
	}
	for name, age := range ages {
		ch <- prometheus.MustNewConstMetric(g.listAge, prometheus.GaugeValue, age.Seconds(), name)
	}
}

func (g *stateGauges) addStore(s *robotstxt.Store) {
	g.mu.Lock()
	g.stores[s]++
	g.mu.Unlock()
}

func (g *stateGauges) removeStore(s *robotstxt.Store) {
	g.mu.Lock()
	if g.stores[s]--; g.stores[s] <= 0 {
		delete(g.stores, s)
	}
	g.mu.Unlock()
}

func (m *metrics) addVerifier(v *verify.Verifier) {
	m.gauges.mu.Lock()
	m.gauges.verifiers[v]++
	m.gauges.mu.Unlock()
}

func (m *metrics) removeVerifier(v *verify.Verifier) {
	m.gauges.mu.Lock()
	if m.gauges.verifiers[v]--; m.gauges.verifiers[v] <= 0 {
		delete(m.gauges.verifiers, v)
	}
	m.gauges.mu.Unlock()
}
