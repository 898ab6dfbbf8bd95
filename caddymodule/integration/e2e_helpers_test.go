package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"

	// The handlers the test configurations put around robots_enforce.
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	// The module under test, registered as a build of Caddy with it
	// (xcaddy) registers it: the handler, robots_buffered, the commands.
	_ "github.com/robotsenforce/caddy-robots-enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// The end-to-end tests run a real Caddy in this process, loaded with
// caddy.Load from a Caddyfile adapted like the caddy command adapts one, on
// loopback ports picked for the test, in front of httptest servers or
// files. Caddy's configuration is process-wide: these tests never run in
// parallel. Every request, dial and wait is bounded by e2eTimeout.

// e2eTimeout bounds each request a test sends and each wait for a log line.
const e2eTimeout = 5 * time.Second

// User-Agent headers as the clients send them.
const (
	// e2eGPTBot names GPTBot in a comment, as OpenAI's crawler does.
	e2eGPTBot  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	e2eBrowser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	e2eCurl    = "curl/8.5.0"
	// e2eCrawler is a crawler no group names: the "*" group binds it.
	e2eCrawler  = "ExampleCrawler/1.0 (+https://crawler.example/about)"
	e2eInternal = robotstxt.FetchUserAgent
)

// e2eGlobal is the global options block of every test configuration: no
// admin endpoint, nothing saved outside the test's directory, and logs as
// JSON lines in files the test reads. <DIR> is the test's directory. The
// test client is a trusted proxy, so that a test can speak for clients of
// other addresses with X-Forwarded-For. <GLOBAL> holds a test's own
// global options.
const e2eGlobal = `{
	admin off
	persist_config off
	auto_https off
	storage file_system <DIR>/storage
	grace_period 3s
	<GLOBAL>
	servers {
		trusted_proxies static 127.0.0.1/32
	}
	log default {
		output file <DIR>/caddy.log
		format json
	}
	log robots {
		output file <DIR>/robots.log
		format json
		include http.handlers.robots_enforce
	}
}
`

// e2eCaddy is a running Caddy and the client that talks to it.
type e2eCaddy struct {
	t      testing.TB
	dir    string
	ports  []int
	client *http.Client
	vars   *strings.Replacer
}

// e2eStart loads sites, the site blocks of a Caddyfile, with e2eGlobal
// before them, and stops Caddy when the test ends. In sites, <PORT0> …
// <PORTn-1> stand for n free loopback ports, <DIR> for the test's
// directory, and each key of vars for its value ("<GLOBAL>" for global
// options); in the values of vars, <DIR> stands for the directory too.
func e2eStart(t testing.TB, n int, sites string, vars map[string]string) *e2eCaddy {
	t.Helper()
	c := &e2eCaddy{t: t, dir: t.TempDir(), ports: e2ePorts(t, n)}
	dir := filepath.ToSlash(c.dir)
	pairs := []string{"<DIR>", dir}
	for i, p := range c.ports {
		pairs = append(pairs, fmt.Sprintf("<PORT%d>", i), strconv.Itoa(p))
	}
	if _, ok := vars["<GLOBAL>"]; !ok {
		pairs = append(pairs, "<GLOBAL>", "")
	}
	for k, v := range vars {
		pairs = append(pairs, k, strings.ReplaceAll(v, "<DIR>", dir))
	}
	c.vars = strings.NewReplacer(pairs...)
	c.client = &http.Client{
		Timeout:   e2eTimeout,
		Transport: &http.Transport{DisableCompression: true},
		// Redirects are the test's to see, not the client's to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(func() {
		c.client.CloseIdleConnections()
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
		if t.Failed() {
			c.dumpLog("caddy.log")
		}
	})
	c.load(sites)
	return c
}

// load loads sites in place of the running configuration.
func (c *e2eCaddy) load(sites string) {
	c.t.Helper()
	if err := caddy.Load(c.adapt(sites), true); err != nil {
		c.t.Fatalf("loading the configuration: %v\n%s", err, c.caddyfile(sites))
	}
}

// caddyfile returns the whole Caddyfile for sites.
func (c *e2eCaddy) caddyfile(sites string) string {
	return c.vars.Replace(e2eGlobal + sites)
}

// adapt returns the JSON configuration of sites.
func (c *e2eCaddy) adapt(sites string) []byte {
	c.t.Helper()
	text := c.caddyfile(sites)
	cfg, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		c.t.Fatalf("adapting the Caddyfile: %v\n%s", err, text)
	}
	for _, w := range warnings {
		c.t.Logf("Caddyfile warning: %s", w.String())
	}
	return e2eVerifyOff(c.t, cfg)
}

// e2eVerifyOff turns crawler verification off in every robots_enforce
// handler of cfg that does not configure it: its built-in sources are
// fetched from the crawler operators' sites, and the tests reach nothing
// but loopback. Tests of verification configure it themselves.
func e2eVerifyOff(t testing.TB, cfg []byte) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(cfg, &doc); err != nil {
		t.Fatalf("reading the adapted configuration: %v", err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["handler"] == "robots_enforce" {
				if _, ok := v["verify"]; !ok {
					v["verify"] = map[string]any{"off": true}
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// e2ePorts returns n loopback ports that were free a moment ago, in the
// order of their decimal spelling: the order of sites that differ only by
// port, in reports that sort them by name, is then the order of the
// examples' :8080 and :8081 that tests write them as.
func e2ePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	var lns []net.Listener
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		lns = append(lns, ln)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		ln.Close()
	}
	slices.SortFunc(ports, func(a, b int) int { return strings.Compare(strconv.Itoa(a), strconv.Itoa(b)) })
	return ports
}

// addr returns the address of the i-th port.
func (c *e2eCaddy) addr(i int) string {
	return "127.0.0.1:" + strconv.Itoa(c.ports[i])
}

// e2eResponse is what a test reads of a response.
type e2eResponse struct {
	status int
	header http.Header
	body   string
}

// get sends GET path to the i-th port, with Host host when not empty and
// User-Agent ua (none when empty), and fails the test on a transport error.
// A request a reload dropped with its new connection (see
// e2eRequestError.dropped) is sent again once, as a client would: Caddy
// drops some after any reload, with or without robots_enforce.
func (c *e2eCaddy) get(i int, host, path, ua string) e2eResponse {
	c.t.Helper()
	return c.getWith(i, host, path, ua, nil)
}

// getAcrossReload is get, named for the requests that meet a reload.
func (c *e2eCaddy) getAcrossReload(i int, host, path, ua string) e2eResponse {
	c.t.Helper()
	return c.getWith(i, host, path, ua, nil)
}

// try is get without failing the test.
func (c *e2eCaddy) try(i int, host, path, ua string) (e2eResponse, error) {
	return c.tryWithin(e2eTimeout, i, host, path, ua)
}

// tryWithin is try with a time limit d for the whole request. Its
// errors are *e2eRequestError.
func (c *e2eCaddy) tryWithin(d time.Duration, i int, host, path, ua string) (e2eResponse, error) {
	return c.send(d, i, host, path, ua, nil)
}

// getWith is get with extra request headers.
func (c *e2eCaddy) getWith(i int, host, path, ua string, header http.Header) e2eResponse {
	c.t.Helper()
	resp, err := c.send(e2eTimeout, i, host, path, ua, header)
	if rerr := (*e2eRequestError)(nil); errors.As(err, &rerr) && rerr.dropped() {
		// A reload dropped it with its new connection (see
		// e2eRequestError.dropped): sent again once, as a client would.
		c.t.Logf("GET %s (Host %q): %v; sending it again", path, host, err)
		resp, err = c.send(e2eTimeout, i, host, path, ua, header)
	}
	if err != nil {
		c.t.Fatalf("GET %s (Host %q, %v): %v", path, host, header, err)
	}
	return resp
}

// send is tryWithin with extra request headers (none when nil).
func (c *e2eCaddy) send(d time.Duration, i int, host, path, ua string, header http.Header) (e2eResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	rerr := &e2eRequestError{}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(info httptrace.GotConnInfo) { rerr.reused = info.Reused },
		GotFirstResponseByte: func() { rerr.answered = true },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addr(i)+path, nil)
	if err != nil {
		return e2eResponse{}, err
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", ua) // an empty value sends no header
	resp, err := c.client.Do(req)
	if err != nil {
		rerr.err = err
		return e2eResponse{}, rerr
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		rerr.err = fmt.Errorf("reading the body: %w", err)
		return e2eResponse{}, rerr
	}
	return e2eResponse{status: resp.StatusCode, header: resp.Header, body: string(body)}, nil
}

// e2eRequestError is a request that got no whole response.
type e2eRequestError struct {
	err      error
	reused   bool // sent on a connection that had carried a request before
	answered bool // a response had begun
}

func (e *e2eRequestError) Error() string {
	return fmt.Sprintf("%v (connection reused: %v, response begun: %v)", e.err, e.reused, e.answered)
}

func (e *e2eRequestError) Unwrap() error { return e.err }

// dropped reports whether the request was lost with a new connection that
// the server closed or reset before answering, without the time limit
// expiring. A reload can do that to requests whatever the handlers: Go's
// server drops the first request of a connection it reads once shutting
// down (net/http conn.serve), and Caddy's new socket for each
// configuration (SO_REUSEPORT) leaves the connections queued on the old
// one to be reset when it closes. Clients' transports retry requests
// lost on a reused connection by themselves, not these.
func (e *e2eRequestError) dropped() bool {
	return !e.reused && !e.answered && !errors.Is(e.err, context.DeadlineExceeded)
}

// raw sends "method target HTTP/1.1" with User-Agent ua and the extra
// header lines, written as is on
// a new connection to the i-th port, so that no client normalises the
// target, and reads the response.
func (c *e2eCaddy) raw(i int, method, target, ua string, extra ...string) e2eResponse {
	c.t.Helper()
	request := method + " " + target + " HTTP/1.1\r\nHost: example.test\r\nUser-Agent: " + ua + "\r\n"
	for _, line := range extra { // more header lines, "Name: value"
		request += line + "\r\n"
	}
	request += "Connection: close\r\n\r\n"
	conn, err := net.DialTimeout("tcp", c.addr(i), e2eTimeout)
	if err != nil {
		c.t.Fatalf("dialing %s: %v", c.addr(i), err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(e2eTimeout)); err != nil {
		c.t.Fatal(err)
	}
	if _, err := io.WriteString(conn, request); err != nil {
		c.t.Fatalf("writing %q: %v", request, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("reading the response to %q: %v", request, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading the response body to %q: %v", request, err)
	}
	return e2eResponse{status: resp.StatusCode, header: resp.Header, body: string(body)}
}
