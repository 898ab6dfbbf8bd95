package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// The soak test that found hot sites refused: a catch-all site with
// max_hosts 30, 10 sites in regular use, and a flood of one-time Hosts
// between their requests that spends the budget of first fetches, before
// and after a restart. Sizes: a flood of a few hundred requests, past the
// budget each time, in a few seconds.
const (
	e2eEvictMaxHosts = 30
	e2eEvictHot      = 10
	e2eEvictBudget   = 200 // new_hosts per hour: a flood past it is refused
	e2eEvictFlood    = 400 // requests of a flood, one in 10 for a site in use
)

// Sites in use stay in force: no request for them is refused, before or
// after a restart, however many one-time Hosts arrive between them, and
// none of them is fetched again for having been forgotten. The one-time
// Hosts past the budget are refused (complete disallow), which shows the
// flood spent it.
func TestE2EEvictionKeepsSitesInUse(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /private/\n"
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText(robots)})
	vars := map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce",
		"<OPTIONS>": fmt.Sprintf("max_hosts %d\n\t\tnew_hosts %d per 1h", e2eEvictMaxHosts, e2eEvictBudget),
	}
	c := e2eStart(t, 1, e2eProxySite, vars)
	hot := func(i int) string { return fmt.Sprintf("hot%d.test", i) }
	askHot := func(step string, i int) {
		t.Helper()
		r := c.get(0, hot(i), "/page", e2eCrawler)
		if r.status != http.StatusOK {
			t.Errorf("%s: GET %s/page by a crawler = %d, want 200: a site in use was refused", step, hot(i), r.status)
		}
	}
	// flood sends n requests for one-time Hosts named after step, and
	// with inUse one in 10 for a site in use instead; it returns how many
	// of the one-time Hosts were refused.
	flood := func(step string, n int, inUse bool) (refused int) {
		t.Helper()
		for j := range n {
			if inUse && j%10 == 0 {
				askHot(step, j/10%e2eEvictHot)
				continue
			}
			r := c.get(0, fmt.Sprintf("%s-%d.test", step, j), "/page", e2eCrawler)
			// robots.txt allows /page: a denial is a refusal of the Host.
			if r.status == http.StatusForbidden {
				refused++
			}
		}
		return refused
	}
	fetches := func() []int {
		n := make([]int, e2eEvictHot)
		for i := range n {
			n[i] = up.count(hot(i), "/robots.txt")
		}
		return n
	}

	// In use: each site asked for in two seconds.
	for i := range e2eEvictHot {
		askHot("first use", i)
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)) + 20*time.Millisecond)
	for i := range e2eEvictHot {
		askHot("second use", i)
	}
	if refused := flood("before", e2eEvictFlood, true); refused == 0 {
		t.Errorf("before the restart: no one-time Host refused; the flood did not spend the budget of %d", e2eEvictBudget)
	}
	before := fetches()
	for i, n := range before {
		if n != 1 {
			t.Errorf("before the restart: %s fetched %d times, want once: it was forgotten and fetched again", hot(i), n)
		}
	}

	if err := caddy.Stop(); err != nil { // saves the state
		t.Fatal(err)
	}
	c.load(e2eProxySite)
	// One-time Hosts first, before any site in use is asked for.
	refused := flood("after", e2eEvictFlood/4, false)
	refused += flood("later", e2eEvictFlood, true)
	if refused == 0 {
		t.Errorf("after the restart: no one-time Host refused; the flood did not spend the budget of %d", e2eEvictBudget)
	}
	for i, n := range fetches() {
		if n-before[i] > 1 {
			t.Errorf("after the restart: %s fetched %d times, want at most once, the refresh of its restored copy", hot(i), n-before[i])
		}
	}
	// The records say the same: no denial of a site in use.
	for _, rec := range c.records(0) {
		if strings.HasPrefix(rec.str("host"), "hot") {
			t.Errorf("a site in use was denied: %s", e2eDump([]e2eRecord{rec}))
		}
	}
}
