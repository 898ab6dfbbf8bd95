package integration

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A platform serves its tenants' domains from one catch-all site, and a
// tenant controls its own robots.txt. Tried as such a tenant: 300 Hosts
// whose origin answers each with a 400 KB robots.txt (the first 400 KB of
// the synthetic file of testdata/robots, which holds 1.4 MB once parsed
// and indexed: 300 of them would hold 420 MB), with max_memory 256MiB.
// What the process keeps live must stay within the budget and what Caddy
// holds without it (hxTenantBase), its resident memory under hxTenantRSS,
// and ten sites asked for between the others must never be fetched again.
//
// Go's collector lets the heap grow to twice what it keeps live before it
// collects (GOGC=100), so that with 256 MiB of robots.txt held Caddy's
// resident memory peaks at about 610 MB. A platform that bounds its
// process's memory tells the collector with GOMEMLIMIT (Caddy sets it
// from a container's limit), as this test does: the budget is what lets
// the collector keep to it. Without max_memory, the same tenants keep
// 440 MB live, past that limit, and the collector runs without end.
const (
	hxTenants      = 300
	hxTenantHot    = 10
	hxTenantBody   = 400 << 10
	hxTenantBudget = "256MiB"
	hxTenantHeld   = 256 << 20
	hxTenantBase   = 64 << 20 // Caddy's own live heap is about 35 MB
	hxTenantRSS    = 512e6
	hxTenantLimit  = "400MiB" // GOMEMLIMIT
	// hxTenantEvery is how many tenants arrive between two rounds of
	// the ten sites in use.
	hxTenantEvery = 10
	hxTenantUA    = "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"
)

// hxTenantSite is a catch-all site in front of <ORIGIN>, with room for the
// tenants' first fetches (a platform raises new_hosts to its pace of new
// domains).
const hxTenantSite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		body denied
		max_memory <BUDGET>
		new_hosts 1000 per 1s
	}
	reverse_proxy <ORIGIN>
}
`

// tenantOrigin answers every Host's /robots.txt with one body and counts
// the fetches of each Host's; other paths get a small page.
type tenantOrigin struct {
	body    []byte
	mu      sync.Mutex
	fetches map[string]int
}

func (o *tenantOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/robots.txt" {
		w.Write([]byte("page " + r.URL.Path))
		return
	}
	o.mu.Lock()
	o.fetches[r.Host]++
	o.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	w.Write(o.body)
}

func (o *tenantOrigin) count(host string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.fetches[host]
}

// vmRSS returns the resident memory of process pid, from /proc.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

func TestE2ETenantMemoryBudget(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("resident memory is read from /proc")
	}
	if testing.Short() {
		t.Skip("a tenant's flood of large robots.txt files, about 15 s: run without -short, as CI does")
	}
	synthetic, err := os.ReadFile("../../testdata/robots/synthetic-500k.txt")
	if err != nil {
		t.Fatal(err)
	}
	origin := &tenantOrigin{body: synthetic[:hxTenantBody], fetches: make(map[string]int)}
	srv := httptest.NewServer(origin)
	defer srv.Close()
	t.Setenv("GOMEMLIMIT", hxTenantLimit) // for the Caddy process, which reads it as it starts
	c := hxStart(t, 1, hxTenantSite, map[string]string{"<ORIGIN>": srv.Listener.Addr().String(), "<BUDGET>": hxTenantBudget})
	pid := c.cmd.Process.Pid
	start, err := vmRSS(pid)
	if err != nil {
		t.Fatal(err)
	}

	// The resident memory, read every 50 ms while the tenants arrive.
	var (
		mu   sync.Mutex
		most int64
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			if rss, err := vmRSS(pid); err == nil {
				mu.Lock()
				most = max(most, rss)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	hot := func(i int) string { return fmt.Sprintf("hot%d.tenant.test", i) }
	began := time.Now()
	var failed []string
	ask := func(host string) {
		r, err := c.get(0, host, "/articles/1", hxTenantUA)
		if err != nil || r.status != http.StatusOK {
			failed = append(failed, fmt.Sprintf("GET %s/articles/1: %d %v", host, r.status, err))
		}
	}
	for i := range hxTenants {
		if i%hxTenantEvery == 0 {
			for h := range hxTenantHot {
				ask(hot(h))
			}
		}
		ask(fmt.Sprintf("t%d.tenant.test", i))
	}
	for h := range hxTenantHot {
		ask(hot(h))
	}
	elapsed := time.Since(began)
	close(stop)
	<-done
	end, _ := vmRSS(pid)
	live := c.heapInUse()
	metrics := c.metrics()
	held, _ := hxMetric(metrics, "caddy_robots_enforce_robots_txt_bytes", "")
	forgotten, _ := hxMetric(metrics, "caddy_robots_enforce_sites_forgotten_total", `reason="max_memory"`)
	refetched, _ := hxMetric(metrics, "caddy_robots_enforce_sites_refetched_total", "")
	t.Logf("%d tenants with %d KiB robots.txt in %v: resident memory %.0f MB at start, at most %.0f MB, %.0f MB at the end (heap in use after a collection %.0f MB); %.0f MiB of robots.txt held, %.0f sites forgotten for max_memory, %.0f fetched again",
		hxTenants, hxTenantBody>>10, elapsed.Round(time.Millisecond), float64(start)/1e6, float64(most)/1e6, float64(end)/1e6, live/1e6,
		held/(1<<20), forgotten, refetched)

	if len(failed) > 0 {
		t.Errorf("%d requests failed, e.g. %v", len(failed), failed[:min(3, len(failed))])
	}
	if most >= hxTenantRSS {
		t.Errorf("Caddy's resident memory reached %.0f MB, want under %.0f MB with max_memory %s and GOMEMLIMIT %s",
			float64(most)/1e6, hxTenantRSS/1e6, hxTenantBudget, hxTenantLimit)
	}
	if live > hxTenantHeld+hxTenantBase {
		t.Errorf("Caddy keeps %.0f MB live after a collection, want at most max_memory %s and %d MiB", live/1e6, hxTenantBudget, hxTenantBase>>20)
	}
	if held > hxTenantHeld || forgotten == 0 {
		t.Errorf("%.0f octets of robots.txt held and %.0f sites forgotten for max_memory: want at most %d held, and the budget to have been reached",
			held, forgotten, hxTenantHeld)
	}
	for h := range hxTenantHot {
		if n := origin.count(hot(h)); n != 1 {
			t.Errorf("%s, asked for between every %d tenants, was fetched %d times, want once", hot(h), hxTenantEvery, n)
		}
	}
}
