package caddymodule

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// fixedFetcher answers every robots.txt with one small file.
type fixedFetcher struct{}

func (fixedFetcher) Fetch(context.Context, string, int) (robotstxt.Response, error) {
	return robotstxt.Response{StatusCode: 200, Body: []byte("User-agent: *\nDisallow: /private/\n")}, nil
}

// What a store's bounds do to sites is counted in the metrics the README
// names, and the octets its sites hold are the robots_txt_bytes gauge.
func TestMetricsSiteBounds(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := unitNewMetrics(t, reg)
	s, err := robotstxt.NewStore(robotstxt.StoreConfig{
		Fetcher: fixedFetcher{}, MaxHosts: 4, NewHosts: 10, NewHostsPer: time.Hour, OnSite: m.countSite,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m.gauges.addStore(s)
	defer m.gauges.removeStore(s)
	// 10 first fetches, 2 refused; 6 of the 10 forgotten. A first fetch
	// settles in the table before its waiters go on.
	for i := range 12 {
		s.Snapshot(t.Context(), fmt.Sprintf("site%d.example", i))
	}
	forgotten := unitSeries(t, reg, "caddy_robots_enforce_sites_forgotten_total")
	refused := unitSeries(t, reg, "caddy_robots_enforce_sites_refused_total")
	if forgotten["reason=max_hosts"] != 6 || refused["reason=new_hosts"] != 2 {
		t.Errorf("sites forgotten %v, refused %v; want 6 for max_hosts, and 2 for new_hosts", forgotten, refused)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range families {
		if mf.GetName() == "caddy_robots_enforce_robots_txt_bytes" {
			found = true
			if got := mf.GetMetric()[0].GetGauge().GetValue(); got != float64(s.Bytes()) || got == 0 {
				t.Errorf("caddy_robots_enforce_robots_txt_bytes = %v, want the store's %d", got, s.Bytes())
			}
		}
	}
	if !found {
		t.Error("no caddy_robots_enforce_robots_txt_bytes gauge")
	}
}
