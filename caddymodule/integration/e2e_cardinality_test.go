package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The agent label of caddy_robots_enforce_decisions_total comes from a
// bounded set: a robots.txt naming thousands of tokens, and a client
// cycling through them, add no series beyond the built-in crawler
// catalogue and "_other".
func TestHostileMetricsCardinality(t *testing.T) {
	t.Parallel()
	const (
		tokens    = 2000
		maxSeries = 20
	)
	site := hxSiteDir(t)
	var robots strings.Builder
	for i := range tokens {
		fmt.Fprintf(&robots, "User-agent: %s\nDisallow: /\n\n", hxToken(i))
	}
	if err := os.WriteFile(filepath.Join(site, "robots.txt"), []byte(robots.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := hxStart(t, 1, hxFileSite, map[string]string{"<SITE>": site, "<OPTIONS>": ""})
	res := c.flood(tokens, hxFloodWorkers, func(i int) (int, string, string, string) {
		return 0, "site.test", "/pub/page.html", hxToken(i) + "/1.0"
	}, func(r hxResp) bool { return r.status != http.StatusForbidden })
	if res.broke+res.failed > 0 {
		t.Errorf("%d of %d requests by named agents were not denied, e.g. %v", res.broke+res.failed, res.sent, res.examples)
	}
	series := hxSeries(c.metrics(), hxDecisionsMetric)
	t.Logf("%d series of %s after %d agents", len(series), hxDecisionsMetric, tokens)
	if len(series) == 0 {
		t.Errorf("no series of %s in /metrics: the decisions are not counted under that name", hxDecisionsMetric)
	}
	if len(series) > maxSeries {
		t.Errorf("%d series of %s after %d agents named in robots.txt, want at most %d; e.g.\n%s",
			len(series), hxDecisionsMetric, tokens, maxSeries, strings.Join(series[:5], "\n"))
	}
}

// hxToken returns the i-th of a series of product tokens, letters only.
func hxToken(i int) string {
	b := []byte("zzbot")
	for {
		b = append(b, byte('a'+i%26))
		i /= 26
		if i == 0 {
			return string(b)
		}
	}
}
