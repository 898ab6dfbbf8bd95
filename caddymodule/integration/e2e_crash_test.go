package integration

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The handler's own robots.txt fetch (source upstream) runs the rest of
// the route on a goroutine of its own. reverse_proxy aborts a response
// whose body it cannot copy whole by panicking with http.ErrAbortHandler,
// which Go's server recovers on the goroutines it runs, and nothing
// recovers on the handler's. These tests have an origin break the body of
// robots.txt in each way it can and check that Caddy stays up, that the
// fetch counts as unreachable (RFC 9309 §2.3.1.4: crawlers are denied,
// people pass), and that the handler reads no more than it parses.

// hxReplyBound is the most octets one robots.txt reply may cost the
// origin: the handler reads max_size (500 KiB) plus one octet, and the
// loopback socket buffers between the two processes hold a few MB more.
const hxReplyBound = 8 << 20

// Robots.txt bodies of the crash tests. hxPermissive allows everything:
// a handler that parsed a body cut short would let crawlers through.
const (
	hxPermissive = "User-agent: *\nAllow: /\n"
	hxStrict     = "User-agent: *\nDisallow: /private/\n"
)

// hxProxySite is a site on <PORT0> whose robots_enforce, with the options
// <OPTIONS>, guards reverse_proxy to <ORIGIN>.
const hxProxySite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		body denied
		<OPTIONS>
	}
	reverse_proxy <ORIGIN>
}
`

func TestHostileRobotsBodyCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		reply   hxReply
		timeout time.Duration // fetch_timeout
		// unreachable: the fetch yields no file, so crawlers are denied
		// everything; otherwise only /private/ (the body's first lines
		// may be parsed).
		unreachable bool
	}{
		{"content-length-cut", hxCutLength(hxPermissive), 2 * time.Second, true},
		{"chunked-cut", hxCutChunked(hxPermissive), 2 * time.Second, true},
		{"drip-past-fetch-timeout", hxDrip(hxPermissive+strings.Repeat("#", 16), 250*time.Millisecond), time.Second, true},
		{"endless", hxEndless(hxStrict), 2 * time.Second, false},
		{"gzip-bomb", hxGzipBomb(), 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := hxNewOrigin(t, map[string]hxReply{"/robots.txt": tc.reply})
			c := hxStart(t, 1, hxProxySite, map[string]string{
				"<ORIGIN>": o.hostPort(), "<OPTIONS>": fmt.Sprintf("fetch_timeout %v", tc.timeout),
			})
			cpu0, _ := hxMetric(c.metrics(), "process_cpu_seconds_total", "")
			// The first request waits for the first fetch, as long as
			// fetch_timeout; the process may end then, or later.
			first, err := c.get(0, "site.test", "/private/secret.html", e2eGPTBot)
			c.requireAlive(tc.timeout+time.Second, "an origin's robots.txt reply: "+tc.name)
			if err != nil {
				t.Errorf("GET /private/secret.html by GPTBot, the first request: %v", err)
			} else if first.status != http.StatusForbidden {
				t.Errorf("GET /private/secret.html by GPTBot, the first request = %d %q, want 403", first.status, first.body)
			}
			hxExpect(t, c, "site.test", "/private/secret.html", e2eGPTBot, http.StatusForbidden)
			hxExpect(t, c, "site.test", "/private/secret.html", e2eBrowser, http.StatusOK)
			if tc.unreachable {
				hxExpect(t, c, "site.test", "/pub/page.html", e2eGPTBot, http.StatusForbidden)
			}
			if most, _ := o.accepted(); most > hxReplyBound {
				t.Errorf("one robots.txt reply cost the origin %d octets, want at most %d", most, hxReplyBound)
			}
			// Inflating what the origin sent must cost Caddy little too:
			// the handler stops at max_size, not at fetch_timeout.
			if cpu1, ok := hxMetric(c.metrics(), "process_cpu_seconds_total", ""); ok && cpu1-cpu0 > hxFetchCPU {
				t.Errorf("the fetch cost Caddy %.2fs of CPU, want at most %.1fs", cpu1-cpu0, hxFetchCPU)
			}
			c.requireAlive(0, "the checks")
		})
	}
}

// hxFetchCPU bounds the CPU seconds one broken robots.txt fetch, and the
// few requests around it, may cost Caddy: reading and inflating 500 KiB
// takes milliseconds; inflating a gzip bomb until fetch_timeout takes
// seconds.
const hxFetchCPU = 0.5

// hxExpect sends GET path with Host host and User-Agent ua to the first
// port, and fails the test unless the answer has status want.
func hxExpect(t testing.TB, c *hxCaddy, host, path, ua string, want int) {
	t.Helper()
	r, err := c.get(0, host, path, ua)
	switch {
	case err != nil:
		t.Errorf("GET %s%s by %s: %v", host, path, hxUAName(ua), err)
	case r.status != want:
		t.Errorf("GET %s%s by %s = %d %.80q, want %d", host, path, hxUAName(ua), r.status, r.body, want)
	}
}

// A 50 MB robots.txt, asked for under 300 Host headers, costs the origin
// at most what the handler parses per fetch, and Caddy stays up. The
// requests go in rounds; the test stops at the first round that breaks a
// bound, so that it ends soon against a handler that reads every octet.
func TestHostileHugeRobotsManyHosts(t *testing.T) {
	t.Parallel()
	const (
		size   = 50 << 20
		hosts  = 300
		rounds = 15
	)
	o := hxNewOrigin(t, map[string]hxReply{"/robots.txt": hxHuge(size, hxStrict)})
	c := hxStart(t, 1, hxProxySite, map[string]string{"<ORIGIN>": o.hostPort(), "<OPTIONS>": ""})
	start := time.Now()
	sent := 0
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for i := range hosts / rounds {
			host := fmt.Sprintf("h%d.huge.test", round*(hosts/rounds)+i)
			wg.Go(func() {
				r, err := c.get(0, host, "/private/secret.html", e2eGPTBot)
				if err == nil && r.status == http.StatusOK {
					mu.Lock()
					bad = append(bad, host)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		sent += hosts / rounds
		for _, h := range bad {
			t.Errorf("GET %s/private/secret.html by GPTBot = 200", h)
		}
		c.requireAlive(0, fmt.Sprintf("%d requests for hosts whose robots.txt is 50 MB", sent))
		if most, _ := o.accepted(); most > hxReplyBound {
			t.Errorf("after %d hosts: one robots.txt reply cost the origin %d octets, want at most %d", sent, most, hxReplyBound)
			break
		}
	}
	most, total := o.accepted()
	t.Logf("%d hosts in %v: %d robots.txt requests at the origin, %d octets in all, %d at most in one reply",
		sent, time.Since(start).Round(time.Millisecond), o.countPath("/robots.txt"), total, most)
	c.requireAlive(time.Second, "the hosts whose robots.txt is 50 MB")
	hxExpect(t, c, "h0.huge.test", "/pub/page.html", e2eBrowser, http.StatusOK)
}

// A configuration reload while a robots.txt body is being read ends the
// old configuration's fetch; Caddy stays up and serves with the new one.
func TestHostileReloadDuringRobotsBody(t *testing.T) {
	t.Parallel()
	// 60 octets at one every 300 ms: the body is still arriving when the
	// reload comes, and fetch_timeout does not end it first.
	o := hxNewOrigin(t, map[string]hxReply{
		"drip.test /robots.txt": hxDrip(hxPermissive+strings.Repeat("#", 60-len(hxPermissive)), 300*time.Millisecond),
		"/robots.txt":           hxText(http.StatusOK, "text/plain", hxStrict),
	})
	vars := map[string]string{"<ORIGIN>": o.hostPort(), "<OPTIONS>": "fetch_timeout 30s"}
	c := hxStart(t, 1, hxProxySite, vars)
	// A request that waits for the first fetch; its answer does not matter.
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		c.get(0, "drip.test", "/private/secret.html", e2eGPTBot)
	}()
	t.Cleanup(func() { <-waiting }) // before Caddy stops: within hxTimeout
	for deadline := time.Now().Add(hxTimeout); o.count("drip.test", "/robots.txt") == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the handler never asked the origin for robots.txt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a few octets of the body are in
	if err := c.load(hxProxySite); err != nil {
		c.requireAlive(time.Second, "a reload during a robots.txt body")
		t.Fatalf("reloading: %v", err)
	}
	c.requireAlive(2*time.Second, "a reload during a robots.txt body")
	hxExpect(t, c, "other.test", "/private/secret.html", e2eGPTBot, http.StatusForbidden)
	hxExpect(t, c, "other.test", "/private/secret.html", e2eBrowser, http.StatusOK)
}
