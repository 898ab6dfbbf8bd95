//go:build bench

// Command tenants is the origin and the load of tenants.sh: it stands in
// for a platform's tenants behind one catch-all Caddy site, each Host its
// own site with its own robots.txt. It is built with -tags bench, by
// tenants.sh, and by nothing else: go test never builds it.
//
//	tenants origin -listen ADDR -corpus DIR
//
// serves, for Host "<name><n>" (any name, then a number), GET /robots.txt
// with file n of the robots.txt files of DIR, in the order of their names,
// and any other path with a short page.
//
//	tenants load -target ADDR -pid PID -prefix P -from N -count K [-repeat R | -duration D] [-workers W]
//
// sends GET /articles/1 as a crawler to ADDR, with Host P<N> … P<N+K-1>, each
// R times in turn, or in turn for D, from W connections, and prints on one
// line what they cost the process PID (the Caddy serving ADDR): the
// requests and their answers, the seconds, its CPU per request (user and
// system time from /proc/PID/stat), the latencies' median, 90th and 99th
// percentiles, and its resident memory (VmRSS) before and after.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ua is a crawler no robots.txt names, whom the "*" group binds.
const ua = "Mozilla/5.0 (compatible; ExampleCrawler/1.0; +https://example.com/crawler)"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tenants origin|load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "origin":
		err = origin(os.Args[2:])
	case "load":
		err = load(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want origin or load", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenants:", err)
		os.Exit(1)
	}
}

func origin(args []string) error {
	fs := flag.NewFlagSet("origin", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:18201", "address to serve on")
	corpus := fs.String("corpus", "testdata/robots", "directory of robots.txt files")
	fs.Parse(args)
	names, err := filepath.Glob(filepath.Join(*corpus, "*.txt"))
	if err != nil || len(names) == 0 {
		return fmt.Errorf("no robots.txt files in %s: %v", *corpus, err)
	}
	slices.Sort(names)
	files := make([][]byte, len(names))
	for i, n := range names {
		if files[i], err = os.ReadFile(n); err != nil {
			return err
		}
	}
	return http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			io.WriteString(w, "page\n")
			return
		}
		host, _, _ := strings.Cut(r.Host, ":")
		digits := strings.TrimLeft(host, "abcdefghijklmnopqrstuvwxyz-.")
		digits, _, _ = strings.Cut(digits, ".")
		n, _ := strconv.Atoi(digits)
		w.Header().Set("Content-Type", "text/plain")
		w.Write(files[n%len(files)])
	}))
}

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	target := fs.String("target", "", "the Caddy site's address")
	pid := fs.Int("pid", 0, "the Caddy process")
	prefix := fs.String("prefix", "t", "Host names: prefix, then a number")
	from := fs.Int("from", 0, "the first number")
	count := fs.Int("count", 1, "how many Hosts")
	repeat := fs.Int("repeat", 1, "requests per Host, in turn")
	duration := fs.Duration("duration", 0, "send in turn for this long instead of repeat times")
	workers := fs.Int("workers", 8, "connections")
	fs.Parse(args)
	if *target == "" || *pid == 0 {
		return fmt.Errorf("load needs -target and -pid")
	}
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: *workers, DisableCompression: true},
	}
	total := int64(*count) * int64(*repeat)
	var (
		next     atomic.Int64
		mu       sync.Mutex
		lats     []time.Duration
		statuses = map[int]int{}
		errs     int
		wg       sync.WaitGroup
	)
	rssBefore, _ := rss(*pid)
	cpuBefore, err := cpuTicks(*pid)
	if err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(*duration)
	for range *workers {
		wg.Go(func() {
			var mine []time.Duration
			for {
				i := next.Add(1) - 1
				if *duration > 0 && time.Now().After(deadline) || *duration == 0 && i >= total {
					break
				}
				host := *prefix + strconv.Itoa(*from+int(i%int64(*count)))
				req, _ := http.NewRequest(http.MethodGet, "http://"+*target+"/articles/1", nil)
				req.Host, req.Header["User-Agent"] = host, []string{ua}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				mine = append(mine, time.Since(t0))
				mu.Lock()
				if err != nil {
					errs++
				} else {
					statuses[resp.StatusCode]++
				}
				mu.Unlock()
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuAfter, _ := cpuTicks(*pid)
	rssAfter, _ := rss(*pid)
	slices.Sort(lats)
	pct := func(p float64) float64 {
		if len(lats) == 0 {
			return 0
		}
		return float64(lats[min(len(lats)-1, int(p*float64(len(lats))))]) / 1e6
	}
	n := len(lats)
	var codes []string
	for code, k := range statuses {
		codes = append(codes, fmt.Sprintf("%d:%d", code, k))
	}
	slices.Sort(codes)
	// Clock ticks are 10 ms (USER_HZ 100 on Linux).
	fmt.Printf("requests=%d errors=%d statuses=%s seconds=%.1f rate=%.0f cpu_us_per_req=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f rss_before_mb=%.0f rss_after_mb=%.0f\n",
		n, errs, strings.Join(codes, ","), elapsed.Seconds(), float64(n)/elapsed.Seconds(),
		float64(cpuAfter-cpuBefore)*1e4/float64(max(n, 1)), pct(0.5), pct(0.9), pct(0.99),
		float64(rssBefore)/1e6, float64(rssAfter)/1e6)
	return nil
}

// cpuTicks returns the user and system time of process pid, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	user, _ := strconv.ParseInt(fields[11], 10, 64)
	sys, _ := strconv.ParseInt(fields[12], 10, 64)
	return user + sys, nil
}

// rss returns the resident memory of process pid, in octets.
func rss(pid int) (int64, error) {
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
	return 0, fmt.Errorf("no VmRSS for process %d", pid)
}
