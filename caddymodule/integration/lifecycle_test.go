package integration

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// e2eReloadSite is e2eProxySite, enforcing, whose denials say which of the
// configurations loaded one after the other answered.
func e2eReloadSite(generation int) string {
	return strings.ReplaceAll(e2eProxySite, "<OPTIONS>", fmt.Sprintf("body \"denied %d\"\n\t\tfetch_timeout 1s", generation))
}

// e2eLeakSites are the sites of the leak test: e2eReloadSite, whose
// robots.txt comes through reverse_proxy, and a site whose robots.txt
// comes from a URL, over the handler's own HTTP client. The proxy keeps no
// idle connection: Caddy's reverse_proxy leaves those open after Stop (its
// own, not the handler's), and the test would otherwise have to ignore
// every idle HTTP connection, the handler's among them.
func e2eLeakSites(generation int) string {
	return strings.ReplaceAll(e2eReloadSite(generation), "reverse_proxy <UPSTREAM>", `reverse_proxy <UPSTREAM> {
		transport http {
			keepalive off
		}
	}`) + `
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce {
		source url <UPSTREAM_URL>/robots.txt
	}
	respond "page {path}"
}
`
}

// e2eIgnoreCaddy ignores the goroutines Caddy itself leaves running after
// Stop, whatever the modules; none of them is the handler's.
var e2eIgnoreCaddy = []goleak.Option{
	// The rotation goroutine of each log file writer (Caddy's file output
	// uses timberjack), which Stop leaves running.
	goleak.IgnoreTopFunction("github.com/DeRuina/timberjack.(*Logger).millRun"),
	// The lock of the TLS storage cleaning that every configuration
	// starts, refreshed until the cleaning ends.
	goleak.IgnoreAnyFunction("github.com/caddyserver/certmagic.keepLockfileFresh"),
}

// Reloading a configuration several times, with the robots.txt fetches of
// its handler in flight, and then stopping Caddy leaves no goroutine of
// the handler behind: each reload's Cleanup stops its Store, whose fetches
// end with it, and closes the handler's idle connections.
func TestLifecycleReloadsLeakNothing(t *testing.T) {
	// slow hosts' robots.txt takes longer than the test: fetch_timeout
	// ends their fetches, and the Store's Close any still in flight.
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Host, "slow") {
			e2eSlow(time.Minute, e2eText(e2eRobots))(w, r)
			return
		}
		e2eText(e2eRobots)(w, r)
	}})
	// The goroutines running now, the upstream's among them, are not the
	// handler's. Cleanups run last first: Caddy and its client stop, the
	// goroutines are checked, and then the upstream closes (it waits for
	// its requests, which a leaked fetch would still be sending).
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, append(e2eIgnoreCaddy, ignore)...) })
	vars := map[string]string{"<UPSTREAM>": up.hostPort(), "<UPSTREAM_URL>": up.URL, "<MODE>": "enforce"}
	c := e2eStart(t, 2, e2eLeakSites(0), vars)

	for gen := 1; gen <= 5; gen++ {
		denied := fmt.Sprintf("denied %d\n", gen-1)
		// A fetch that completes.
		host := fmt.Sprintf("fast%d.test", gen)
		if r := c.getAcrossReload(0, host, "/private/x", e2eGPTBot); r.status != http.StatusForbidden || r.body != denied {
			t.Errorf("generation %d: GET %s/private/x by GPTBot = %d %q, want 403 %q", gen-1, host, r.status, r.body, denied)
		}
		if r := c.getAcrossReload(1, "", "/private/x", e2eGPTBot); r.status != http.StatusForbidden {
			t.Errorf("generation %d: GET /private/x by GPTBot from the url site = %d, want 403", gen-1, r.status)
		}
		// A fetch in flight whose request gave up waiting for it.
		host = fmt.Sprintf("slow%d.test", gen)
		if _, err := c.tryWithin(100*time.Millisecond, 0, host, "/private/x", e2eGPTBot); err == nil {
			t.Errorf("generation %d: GET %s/private/x answered before its robots.txt was fetched", gen-1, host)
		}
		// A fetch in flight with a request waiting for it when the
		// configuration goes: the robots.txt state outlives the reload,
		// so the fetch goes on, and the request is answered when it ends
		// (here, when it times out): never let through because the
		// configuration was being replaced.
		host = fmt.Sprintf("slow%d-waiting.test", gen)
		answer := make(chan error, 1)
		go func() {
			r, err := c.try(0, host, "/private/x", e2eGPTBot)
			if err == nil && (r.status != http.StatusForbidden || !strings.HasPrefix(r.body, "denied")) {
				err = fmt.Errorf("%d %q, want 403 denied", r.status, r.body)
			}
			answer <- err
		}()
		for deadline := time.Now().Add(e2eTimeout); up.count(host, "/robots.txt") == 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		c.load(e2eLeakSites(gen))
		if err := <-answer; err != nil {
			t.Errorf("generation %d: GET %s/private/x by GPTBot, waiting during the reload: %v", gen-1, host, err)
		}
	}
	if r := c.getAcrossReload(0, "fast.test", "/private/x", e2eGPTBot); r.status != http.StatusForbidden || r.body != "denied 5\n" {
		t.Errorf("last generation: GET /private/x by GPTBot = %d %q, want 403 %q", r.status, r.body, "denied 5\n")
	}
	for gen := 1; gen <= 5; gen++ {
		for _, host := range []string{fmt.Sprintf("slow%d.test", gen), fmt.Sprintf("slow%d-waiting.test", gen)} {
			if n := up.count(host, "/robots.txt"); n != 1 {
				t.Errorf("upstream: %d fetches of %s/robots.txt, want 1", n, host)
			}
		}
	}
}

// A configuration reloaded while clients keep sending requests answers
// every request as the configuration in force says: 200 or 403, never an
// error status, and no handler panics. A request the reload itself drops
// with its new connection (see e2eRequestError.dropped; as many are
// dropped without robots_enforce in the route) is counted, and sent again
// once, as a client would; every other transport error is a failure. Run
// it with -race.
func TestLifecycleReloadUnderLoad(t *testing.T) {
	const (
		workers  = 8
		duration = 2 * time.Second
		reloads  = 5
		maxEach  = 2000 // requests per worker, at most
	)
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText(e2eRobots)})
	vars := map[string]string{"<UPSTREAM>": up.hostPort(), "<MODE>": "enforce"}
	c := e2eStart(t, 1, e2eReloadSite(0), vars)

	var (
		sent, failed, dropped atomic.Int64
		mu                    sync.Mutex
		failures              []string
		wg                    sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		failed.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 10 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	deadline := time.Now().Add(duration)
	for w := range workers {
		wg.Go(func() {
			for i := 0; i < maxEach && time.Now().Before(deadline); i++ {
				host := fmt.Sprintf("h%d.test", (w+i)%4)
				ua, path, status := e2eBrowser, "/private/x", http.StatusOK
				switch i % 3 {
				case 0:
					ua, status = e2eGPTBot, http.StatusForbidden
				case 1:
					ua, path = e2eCrawler, "/public"
				}
				sent.Add(1)
				r, err := c.try(0, host, path, ua)
				var rerr *e2eRequestError
				if errors.As(err, &rerr) && rerr.dropped() {
					dropped.Add(1)
					r, err = c.try(0, host, path, ua)
				}
				switch {
				case err != nil:
					fail("GET %s%s by %q: %v", host, path, ua, err)
				case r.status != status:
					fail("GET %s%s by %q = %d %q, want %d", host, path, ua, r.status, r.body, status)
				case status == http.StatusForbidden && !strings.HasPrefix(r.body, "denied "):
					fail("GET %s%s by %q: body %q, want a denial", host, path, ua, r.body)
				}
			}
		})
	}
	for gen := 1; gen <= reloads; gen++ {
		time.Sleep(duration / (reloads + 1))
		c.load(e2eReloadSite(gen))
	}
	wg.Wait()

	t.Logf("%d requests during %d reloads: %d dropped with their connection and sent again, %d failed",
		sent.Load(), reloads, dropped.Load(), failed.Load())
	for _, f := range failures {
		t.Error(f)
	}
	if sent.Load() < workers*10 {
		t.Errorf("only %d requests were sent: the reloads were not under load", sent.Load())
	}
	// Each reload drops at most the connection each worker was opening.
	if dropped.Load() > workers*reloads {
		t.Errorf("%d requests dropped with their connection, want at most %d", dropped.Load(), workers*reloads)
	}
	for _, rec := range c.readLog("caddy.log", "http") {
		if rec.str("level") == "error" {
			t.Errorf("caddy logged an error: %s", e2eDump([]e2eRecord{rec}))
		}
	}
	if r := c.getAcrossReload(0, "h0.test", "/private/x", e2eGPTBot); r.body != fmt.Sprintf("denied %d\n", reloads) {
		t.Errorf("after the reloads: GET /private/x by GPTBot = %d %q, want 403 from the last configuration", r.status, r.body)
	}
}
