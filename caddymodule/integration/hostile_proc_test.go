package integration

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// hxCaddy is a caddy process of ../../cmd/caddy and the client that talks
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
