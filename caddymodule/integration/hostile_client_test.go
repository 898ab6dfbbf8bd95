package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The client side of the hostile tests: requests to a caddy process, as
// a client library sends them and as written on the wire, its admin
// endpoint, its metrics, and floods of requests.

// hxResp is what a test reads of a response.
type hxResp struct {
	status int
	header http.Header
	body   string
}

// get sends GET path to the i-th port with Host host (the port's address
// when empty) and User-Agent ua (none when empty).
func (c *hxCaddy) get(i int, host, path, ua string) (hxResp, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hxTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addr(i)+path, nil)
	if err != nil {
		return hxResp{}, err
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("User-Agent", ua)
	return hxDo(c.client, req)
}

// hxDo sends req with client and reads the response, its body up to
// hxMaxBody.
func hxDo(client *http.Client, req *http.Request) (hxResp, error) {
	resp, err := client.Do(req)
	if err != nil {
		return hxResp{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, hxMaxBody))
	if err != nil {
		return hxResp{}, fmt.Errorf("reading the body: %w", err)
	}
	return hxResp{status: resp.StatusCode, header: resp.Header, body: string(body)}, nil
}

// raw writes "method target HTTP/1.1" with Host host and User-Agent ua
// (none when empty), as is, on a new connection to the i-th port, so that
// no client normalises the target, and reads the response.
func (c *hxCaddy) raw(i int, method, target, host, ua string) (hxResp, error) {
	return hxRaw(c.addr(i), method, target, host, ua)
}

// hxRaw is hxCaddy.raw for any address.
func hxRaw(addr, method, target, host, ua string) (hxResp, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, host)
	if ua != "" {
		fmt.Fprintf(&b, "User-Agent: %s\r\n", ua)
	}
	b.WriteString("Connection: close\r\n\r\n")
	conn, err := net.DialTimeout("tcp", addr, hxTimeout)
	if err != nil {
		return hxResp{}, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(hxTimeout)); err != nil {
		return hxResp{}, err
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return hxResp{}, fmt.Errorf("writing %q: %w", b.String(), err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		return hxResp{}, fmt.Errorf("reading the response to %q: %w", b.String(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, hxMaxBody))
	if err != nil {
		return hxResp{}, fmt.Errorf("reading the response body to %q: %w", b.String(), err)
	}
	return hxResp{status: resp.StatusCode, header: resp.Header, body: string(body)}, nil
}

// load replaces the running configuration with sites, through the admin
// endpoint, as "caddy reload --force" does: Caddy skips a reload to the
// configuration in force unless told to revalidate.
func (c *hxCaddy) load(sites string) error {
	ctx, cancel := context.WithTimeout(context.Background(), hxTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.admin+"/load", strings.NewReader(c.caddyfile(sites)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/caddyfile")
	req.Header.Set("Cache-Control", "must-revalidate")
	resp, err := hxDo(c.client, req)
	if err != nil {
		return fmt.Errorf("POST /load: %w", err)
	}
	if resp.status != http.StatusOK {
		return fmt.Errorf("POST /load: %d %s", resp.status, resp.body)
	}
	return nil
}

// adminGet returns the body of GET path on the admin endpoint.
func (c *hxCaddy) adminGet(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hxTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.admin+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := hxDo(c.client, req)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.status != http.StatusOK {
		return "", fmt.Errorf("GET %s: %d %.200s", path, resp.status, resp.body)
	}
	return resp.body, nil
}

// metrics returns the admin endpoint's /metrics, failing the test when it
// cannot.
func (c *hxCaddy) metrics() string {
	c.t.Helper()
	text, err := c.adminGet("/metrics")
	if err != nil {
		c.t.Fatalf("reading metrics: %v", err)
	}
	return text
}

// heapInUse forces a garbage collection in the process (pprof's heap
// profile with gc=1 runs one) and returns go_memstats_heap_inuse_bytes.
func (c *hxCaddy) heapInUse() float64 {
	c.t.Helper()
	for range 2 { // the second collection frees what the first's finalizers let go
		if _, err := c.adminGet("/debug/pprof/heap?gc=1"); err != nil {
			c.t.Fatalf("forcing a collection: %v", err)
		}
	}
	v, ok := hxMetric(c.metrics(), "go_memstats_heap_inuse_bytes", "")
	if !ok {
		c.t.Fatal("no go_memstats_heap_inuse_bytes in /metrics")
	}
	return v
}

// The handler's metrics as /metrics names them, the names README.md
// documents and the Grafana dashboard reads.
const (
	hxDecisionsMetric = "caddy_robots_enforce_decisions_total"
	hxFetchesMetric   = "caddy_robots_enforce_robots_fetches_total"
)

// hxSeries returns the series of metric name in a /metrics text, each as
// its line without the value.
func hxSeries(text, name string) []string {
	var series []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			series = append(series, line[:strings.LastIndexByte(line, ' ')])
		}
	}
	return series
}

// hxMetric returns the value of the series of metric name whose labels
// include labels (`outcome="4xx"`, or "" for any), summed over the series
// that match.
func hxMetric(text, name, labels string) (float64, bool) {
	var sum float64
	found := false
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if labels != "" && !strings.Contains(line[:sp], labels) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[sp+1:]), 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

// hxFloodResult is what a flood of requests got.
type hxFloodResult struct {
	sent, broke, failed int
	examples            []string // of the requests that broke the rule, a few
}

// hxFloodExamples is how many of the requests that broke a rule a flood
// reports.
const hxFloodExamples = 5

// flood sends n requests from workers goroutines at once: the i-th is GET
// path with Host host and User-Agent ua to the port req(i) returns. It
// counts the answers that broke says break the rule, and the requests
// that got no answer.
func (c *hxCaddy) flood(n, workers int, req func(i int) (port int, host, path, ua string), broke func(hxResp) bool) hxFloodResult {
	var (
		mu   sync.Mutex
		res  hxFloodResult
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				port, host, path, ua := req(i)
				r, err := c.get(port, host, path, ua)
				mu.Lock()
				res.sent++
				switch {
				case err != nil:
					res.failed++
				case broke(r):
					res.broke++
					if len(res.examples) < hxFloodExamples {
						res.examples = append(res.examples, fmt.Sprintf("GET %s%s by %s = %d %.40q", host, path, hxUAName(ua), r.status, r.body))
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return res
}

// hxUAName names a User-Agent of the tests in a message.
func hxUAName(ua string) string {
	switch ua {
	case e2eGPTBot:
		return "GPTBot"
	case e2eCrawler:
		return "a crawler"
	case e2eBrowser:
		return "a browser"
	case "":
		return "no User-Agent"
	}
	return fmt.Sprintf("%.30q", ua)
}
