package caddymodule

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sizes of TestHostileReloadsFailClosed.
const (
	hxReloads        = 10
	hxReloadInterval = 150 * time.Millisecond
	hxReloadWorkers  = 6
	hxReloadHosts    = 40 // hosts seen before the reloads; every request during them also brings a new one
)

// A configuration reload must not open a window in which crawlers pass:
// neither for hosts first seen while the old configuration stops and the
// new one starts, nor later, for hosts whose robots.txt was fetched (or
// failed to be) in that window. Reloads with the same and with a slightly
// different configuration come under GPTBot load over many hosts; no
// request for the disallowed file may get it, during the reloads or after.
func TestHostileReloadsFailClosed(t *testing.T) {
	t.Parallel()
	site := hxSiteDir(t)
	config := func(gen int) string {
		return strings.ReplaceAll(hxFileSite, "<OPTIONS>", fmt.Sprintf("max_hosts %d", 256+gen%2))
	}
	c := hxStart(t, 1, config(0), map[string]string{"<SITE>": site})

	var (
		mu    sync.Mutex
		seen  []string
		sent  atomic.Int64
		got   atomic.Int64
		fresh atomic.Int64
		bad   []string
		wg    sync.WaitGroup
	)
	check := func(host string) {
		sent.Add(1)
		r, err := c.get(0, host, "/private/secret.html", e2eGPTBot)
		if err == nil && hxSecretServed(r) {
			got.Add(1)
			mu.Lock()
			if len(bad) < hxFloodExamples {
				bad = append(bad, host)
			}
			mu.Unlock()
		}
	}
	for i := range hxReloadHosts {
		host := fmt.Sprintf("k%d.reload.test", i)
		seen = append(seen, host)
		check(host)
	}
	stop := make(chan struct{})
	for w := range hxReloadWorkers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				check(fmt.Sprintf("k%d.reload.test", (w+i)%hxReloadHosts))
				host := fmt.Sprintf("n%d.reload.test", fresh.Add(1))
				mu.Lock()
				seen = append(seen, host)
				mu.Unlock()
				check(host)
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
	for _, host := range seen {
		check(host)
	}
	t.Logf("%d GPTBot requests for the disallowed file over %d hosts and %d reloads: %d got it (%d during the reloads)",
		sent.Load(), len(seen), hxReloads, got.Load(), during)
	if got.Load() > 0 {
		t.Errorf("%d GPTBot requests got /private/secret.html across reloads (%d during them, %d after), e.g. hosts %v",
			got.Load(), during, got.Load()-during, bad)
	}
	c.requireAlive(0, "the reloads")
	hxExpect(t, c, "k0.reload.test", "/private/secret.html", e2eBrowser, http.StatusOK)
}
