package caddymodule

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Limits of the subprocess harness, each with its reason.
const (
	// hxTimeout bounds each request a hostile test sends, each dial and
	// each read: longer than any fetch_timeout the tests configure, so
	// that a request waiting for a first fetch is answered.
	hxTimeout = 5 * time.Second
	// hxStartTimeout bounds Caddy's start, up to its admin endpoint and
	// every site port answering.
	hxStartTimeout = 20 * time.Second
	// hxStopTimeout is how long Caddy has to stop once interrupted (its
	// grace_period is 1s) before it is killed.
	hxStopTimeout = 5 * time.Second
	// hxLogTail is how much of Caddy's output a failing test shows.
	hxLogTail = 12000
	// hxErrorLines is how many warnings and errors of Caddy a failing
	// test shows.
	hxErrorLines = 20
	// hxPanicLines is how much of a panic a failing test shows: the
	// message and the frames that say where it came from.
	hxPanicLines = 24
	// hxMaxBody bounds what a test reads of one response body: the pages
	// the tests ask for are small, and an attack's answer must not fill
	// the test's memory.
	hxMaxBody = 1 << 20
)

// hxGlobal is the global options block of every hostile configuration: an
// admin endpoint on a loopback port of the test's (reloads, /metrics,
// pprof), nothing saved outside the test's directory, and logs as JSON on
// standard error, which the harness keeps in a file. <GLOBAL> holds a
// test's own global options.
const hxGlobal = `{
	admin <ADMIN>
	persist_config off
	auto_https off
	storage file_system <DIR>/storage
	grace_period 1s
	<GLOBAL>
	log {
		output stderr
		format json
		level INFO
	}
}
`

// hxCaddy is a caddy process of ../cmd/caddy and the client that talks
// to it.
type hxCaddy struct {
	t      testing.TB
	dir    string
	admin  string // host:port of the admin endpoint
	ports  []int
	vars   *strings.Replacer
	client *http.Client
	cmd    *exec.Cmd
	logs   string        // the file holding Caddy's standard output and error
	exited chan struct{} // closed once the process has ended
	state  *os.ProcessState
	shown  bool // the test has shown Caddy's output already
}

// hxStart runs caddy with the site blocks sites after hxGlobal, and stops
// it when the test ends. In sites, <PORT0> … <PORTn-1> stand for n free
// loopback ports, <DIR> for the test's directory, <ADMIN> for the admin
// address, and each key of vars for its value ("<GLOBAL>" for global
// options). The process runs in an empty directory of its own: a handler
// that loses its site's root reads from there, and finds nothing.
func hxStart(t testing.TB, n int, sites string, vars map[string]string) *hxCaddy {
	t.Helper()
	bin := hxBinary(t)
	ports := e2ePorts(t, n+1)
	c := &hxCaddy{t: t, dir: t.TempDir(), admin: "127.0.0.1:" + strconv.Itoa(ports[n]), ports: ports[:n], exited: make(chan struct{})}
	pairs := []string{"<DIR>", filepath.ToSlash(c.dir), "<ADMIN>", c.admin}
	for i, p := range c.ports {
		pairs = append(pairs, fmt.Sprintf("<PORT%d>", i), strconv.Itoa(p))
	}
	if _, ok := vars["<GLOBAL>"]; !ok {
		pairs = append(pairs, "<GLOBAL>", "")
	}
	for k, v := range vars {
		pairs = append(pairs, k, v)
	}
	c.vars = strings.NewReplacer(pairs...)
	c.client = &http.Client{
		Timeout:       hxTimeout,
		Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	config := filepath.Join(c.dir, "Caddyfile")
	if err := os.WriteFile(config, []byte(c.caddyfile(sites)), 0o644); err != nil {
		t.Fatal(err)
	}
	workdir := filepath.Join(c.dir, "cwd")
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.logs = filepath.Join(c.dir, "caddy.out")
	out, err := os.Create(c.logs)
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, "run", "--config", config, "--adapter", "caddyfile")
	c.cmd.Dir = workdir
	c.cmd.Stdout, c.cmd.Stderr = out, out
	c.cmd.Env = append(os.Environ(), "HOME="+c.dir, "XDG_DATA_HOME="+c.dir, "XDG_CONFIG_HOME="+c.dir)
	if err := c.cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("starting caddy: %v", err)
	}
	go func() {
		c.cmd.Wait()
		out.Close()
		c.state = c.cmd.ProcessState
		close(c.exited)
	}()
	t.Cleanup(c.stop)
	c.waitReady()
	return c
}

// caddyfile returns the whole Caddyfile for sites.
func (c *hxCaddy) caddyfile(sites string) string {
	return c.vars.Replace(hxGlobal + sites)
}

// waitReady waits until the admin endpoint and every site port answer.
func (c *hxCaddy) waitReady() {
	c.t.Helper()
	deadline := time.Now().Add(hxStartTimeout)
	addrs := []string{c.admin}
	for i := range c.ports {
		addrs = append(addrs, c.addr(i))
	}
	for _, a := range addrs {
		for {
			if !c.alive() {
				c.shown = true
				c.t.Fatalf("caddy ended while starting (%v):\n%s", c.state, c.errorLines())
			}
			conn, err := net.DialTimeout("tcp", a, time.Second)
			if err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				c.shown = true
				c.t.Fatalf("caddy did not listen on %s within %v:\n%s", a, hxStartTimeout, c.logTail())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// stop interrupts Caddy, kills it if it does not end in time, and shows
// its output when the test failed.
func (c *hxCaddy) stop() {
	c.client.CloseIdleConnections()
	if c.alive() {
		c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.exited:
		case <-time.After(hxStopTimeout):
			c.cmd.Process.Kill()
			<-c.exited
		}
	}
	if c.t.Failed() && !c.shown {
		c.t.Logf("caddy (%s) at level warn and above:\n%s", c.state, c.errorLines())
	}
}

// alive reports whether the process is still running.
func (c *hxCaddy) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// requireAlive fails the test now when the process has ended, after
// giving a crash that is under way up to d to happen: what must survive
// an attack is checked once the attack had time to end it.
func (c *hxCaddy) requireAlive(d time.Duration, after string) {
	c.t.Helper()
	select {
	case <-c.exited:
	case <-time.After(d):
		return
	}
	c.shown = true
	c.t.Fatalf("caddy ended after %s (%v); its output from the panic on:\n%s", after, c.state, c.crashExcerpt())
}

// logTail returns the end of Caddy's output.
func (c *hxCaddy) logTail() string {
	data, err := os.ReadFile(c.logs)
	if err != nil {
		return err.Error()
	}
	if len(data) > hxLogTail {
		data = data[len(data)-hxLogTail:]
	}
	return string(data)
}

// output returns Caddy's output so far.
func (c *hxCaddy) output() string {
	data, err := os.ReadFile(c.logs)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// errorLines returns the last hxErrorLines lines of Caddy's output at
// level warn or above (the compliance records and the other info lines
// say nothing of what went wrong), or its tail when there are none.
func (c *hxCaddy) errorLines() string {
	data, err := os.ReadFile(c.logs)
	if err != nil {
		return err.Error()
	}
	var errs []string
	for line := range strings.Lines(string(data)) {
		if hxRoutineWarning(line) {
			continue
		}
		for _, level := range []string{`"level":"warn"`, `"level":"error"`, `"level":"fatal"`, `"level":"panic"`} {
			if strings.Contains(line, level) {
				errs = append(errs, strings.TrimSpace(line))
				break
			}
		}
	}
	if len(errs) == 0 {
		return "(nothing at level warn or above)"
	}
	return strings.Join(errs[max(len(errs)-hxErrorLines, 0):], "\n")
}

// hxRoutineWarnings are warnings every hostile configuration gets, which
// say nothing of a failure.
var hxRoutineWarnings = []string{
	"Caddyfile input is not formatted",
	"HTTP/2 skipped because it requires TLS",
	"HTTP/3 skipped because it requires TLS",
	`"signal":"SIGINT"`,
}

func hxRoutineWarning(line string) bool {
	for _, w := range hxRoutineWarnings {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}

// crashExcerpt returns Caddy's output from its first "panic:" line on, a
// few lines of it, or its tail when there is none.
func (c *hxCaddy) crashExcerpt() string {
	data, err := os.ReadFile(c.logs)
	if err != nil {
		return err.Error()
	}
	i := strings.Index(string(data), "\npanic: ")
	if i < 0 {
		return c.logTail()
	}
	lines := strings.SplitN(string(data[i+1:]), "\n", hxPanicLines+1)
	return strings.Join(lines[:len(lines)-1], "\n")
}

// addr returns the address of the i-th site port.
func (c *hxCaddy) addr(i int) string {
	return "127.0.0.1:" + strconv.Itoa(c.ports[i])
}

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

// hxIsTimeout reports whether err is a request's time limit expiring.
func hxIsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
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
	case e2eCurl:
		return "curl"
	case e2eBrowser:
		return "a browser"
	case "":
		return "no User-Agent"
	}
	return fmt.Sprintf("%.30q", ua)
}
