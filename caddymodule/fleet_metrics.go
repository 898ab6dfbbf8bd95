package caddymodule

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// fleetCollector reports, when scraped, how current what the states keep
// in Caddy's storage is: the age of the fleet's view (distributed) and of
// the instance's own part, the parts the view holds, and the storage's
// failures. The states join and leave with the handlers that use them,
// so the series follow config reloads; failures counted by a state gone
// stay counted.
type fleetCollector struct {
	viewAge, partAge, parts, errors *prometheus.Desc

	mu    sync.Mutex
	syncs map[*fleetSync]int // the handlers using each
	// retired are the failures counted by states gone: read, write.
	retired [2]uint64
}

func newFleetCollector() *fleetCollector {
	return &fleetCollector{
		viewAge: prometheus.NewDesc("caddy_robots_enforce_fleet_view_age_seconds",
			"Seconds since the other instances' parts were last read whole (distributed); past a few read intervals, the fleet's view is stale.", nil, nil),
		partAge: prometheus.NewDesc("caddy_robots_enforce_fleet_part_age_seconds",
			"Seconds since this instance's part of the state was last written to Caddy's storage (written every write interval with distributed, every minute without).", nil, nil),
		parts: prometheus.NewDesc("caddy_robots_enforce_fleet_parts",
			"Other instances' parts the fleet's view holds (distributed).", nil, nil),
		errors: prometheus.NewDesc("caddy_robots_enforce_storage_errors_total",
			"Failed reads and writes of the state in Caddy's storage, by op (read, write).", []string{"op"}, nil),
		syncs: make(map[*fleetSync]int),
	}
}

// Describe implements prometheus.Collector.
func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.viewAge
	ch <- c.partAge
	ch <- c.parts
	ch <- c.errors
}

// Collect implements prometheus.Collector: the oldest view and part of
// the states in use, and their failures.
func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	var viewAge, partAge time.Duration
	var parts int64
	distributed, any := false, false
	reads, writes := c.retired[0], c.retired[1]
	for f := range c.syncs {
		any = true
		partAge = max(partAge, f.age(&f.partAt, now))
		reads += f.readErrors.Load()
		writes += f.writeErrors.Load()
		if f.settings.Load().distributed {
			distributed = true
			viewAge = max(viewAge, f.age(&f.viewAt, now))
			parts += f.parts.Load()
		}
	}
	if distributed {
		ch <- prometheus.MustNewConstMetric(c.viewAge, prometheus.GaugeValue, viewAge.Seconds())
		ch <- prometheus.MustNewConstMetric(c.parts, prometheus.GaugeValue, float64(parts))
	}
	if any {
		ch <- prometheus.MustNewConstMetric(c.partAge, prometheus.GaugeValue, partAge.Seconds())
	}
	ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(reads), "read")
	ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(writes), "write")
}

func (c *fleetCollector) add(f *fleetSync) {
	c.mu.Lock()
	c.syncs[f]++
	c.mu.Unlock()
}

func (c *fleetCollector) remove(f *fleetSync) {
	c.mu.Lock()
	if c.syncs[f]--; c.syncs[f] <= 0 {
		delete(c.syncs, f)
		c.retired[0] += f.readErrors.Load()
		c.retired[1] += f.writeErrors.Load()
	}
	c.mu.Unlock()
}
