package integration

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sizes of TestHostileReloadsFailClosed. The hosts stay under max_hosts:
// what happens past it is TestHostileHostFloodEviction's.
const (
	hxReloads        = 5
	hxReloadInterval = 200 * time.Millisecond
	hxReloadMaxHosts = 4096
	hxReloadKnown    = 40   // hosts seen before the reloads, on each site
	hxFileWorkers    = 6    // clients of the file_server site
	hxFileNew        = 1000 // its hosts first seen during the reloads, at most
	hxSlowWorkers    = 16   // clients of the site whose robots.txt is slow
	hxSlowNew        = 64   // its hosts first seen during the reloads, at most
	hxRecheckWorkers = 64
	// hxSlowRobots is how long the slow site's robots.txt takes: longer
	// than the grace period (1s), so that requests waiting for a first
	// fetch outlive the configuration they came in under.
	hxSlowRobots = 1500 * time.Millisecond
)

// hxReloadSites are a site behind file_server (<PORT0>) and one whose
// origin answers robots.txt slowly (<PORT1>).
const hxReloadSites = hxFileSite + `
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		body denied
		fetch_timeout 5s
		<OPTIONS>
	}
	reverse_proxy <ORIGIN>
}
`

// A configuration reload must not open a window in which crawlers pass:
// neither for hosts first seen while the old configuration stops and the
// new one starts, nor for requests waiting for a first fetch when the old
// configuration goes, nor later, for hosts whose robots.txt was fetched
// (or failed to be) in that window. Reloads with the same and with a
// slightly different configuration come under GPTBot load over many
// hosts; no request for the disallowed file may get it, during the
// reloads or after.
func TestHostileReloadsFailClosed(t *testing.T) {
	t.Parallel()
	o := hxNewOrigin(t, map[string]hxReply{"/robots.txt": func(w *hxWire, r *http.Request) bool {
		time.Sleep(hxSlowRobots)
		return hxText(http.StatusOK, "text/plain", hxTargetRobots)(w, r)
	}})
	// The same configuration twice, then a slightly different one twice.
	config := func(gen int) string {
		return strings.ReplaceAll(hxReloadSites, "<OPTIONS>", fmt.Sprintf("max_hosts %d", hxReloadMaxHosts+gen/2%2))
	}
	c := hxStart(t, 2, config(0), map[string]string{"<SITE>": hxSiteDir(t), "<ORIGIN>": o.hostPort()})

	var (
		mu   sync.Mutex
		seen [2][]string // per port
		sent atomic.Int64
		got  atomic.Int64
		bad  []string
	)
	served := func(port int, r hxResp) bool {
		if port == 0 {
			return hxSecretServed(r)
		}
		return r.status == http.StatusOK && r.body == "page /private/secret.html"
	}
	check := func(port int, host string) {
		sent.Add(1)
		r, err := c.get(port, host, "/private/secret.html", e2eGPTBot)
		if err == nil && served(port, r) {
			got.Add(1)
			mu.Lock()
			if len(bad) < hxFloodExamples {
				bad = append(bad, fmt.Sprintf("port %d: %s", port, host))
			}
			mu.Unlock()
		}
	}
	newHost := func(port int, prefix string, n int64) string {
		host := fmt.Sprintf("%s%d.reload.test", prefix, n)
		mu.Lock()
		seen[port] = append(seen[port], host)
		mu.Unlock()
		return host
	}
	hxEach(hxRecheckWorkers, 2*hxReloadKnown, func(i int) { check(i%2, newHost(i%2, "k", int64(i/2))) })

	var wg sync.WaitGroup
	var fileNew, slowNew atomic.Int64
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for w := range hxFileWorkers {
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				check(0, fmt.Sprintf("k%d.reload.test", (w+i)%hxReloadKnown))
				if n := fileNew.Add(1); n <= hxFileNew {
					check(0, newHost(0, "n", n))
				}
			}
		})
	}
	for range hxSlowWorkers {
		wg.Go(func() {
			for !stopped() {
				n := slowNew.Add(1)
				if n > hxSlowNew {
					return
				}
				check(1, newHost(1, "s", n))
			}
		})
	}
	for gen := 1; gen <= hxReloads; gen++ {
		time.Sleep(hxReloadInterval)
		if err := c.load(config(gen)); err != nil {
			t.Errorf("reload %d: %v", gen, err)
		}
	}
	time.Sleep(hxReloadInterval)
	close(stop)
	wg.Wait()
	during := got.Load()
	// After the reloads, every host met on the way again.
	for port := range seen {
		hosts := seen[port]
		hxEach(hxRecheckWorkers, len(hosts), func(i int) { check(port, hosts[i]) })
	}
	t.Logf("%d GPTBot requests for the disallowed file over %d+%d hosts and %d reloads: %d got it (%d during the reloads)",
		sent.Load(), len(seen[0]), len(seen[1]), hxReloads, got.Load(), during)
	if got.Load() > 0 {
		t.Errorf("%d GPTBot requests got /private/secret.html across reloads (%d during them, %d after), e.g. %v",
			got.Load(), during, got.Load()-during, bad)
	}
	c.requireAlive(0, "the reloads")
	hxExpect(t, c, "k0.reload.test", "/private/secret.html", e2eBrowser, http.StatusOK)
}

// hxEach calls f(0) … f(n-1) from workers goroutines at once.
func hxEach(workers, n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}
