package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fleet tests run several caddy processes of ../../cmd/caddy (see
// hxBinary) that share one storage directory, each with its own admin
// endpoint and site port, in front of one origin, as a fleet behind a
// round-robin balancer runs; the test is the balancer, and speaks for
// crawlers of several addresses with X-Forwarded-For.

// fleetInterval is the read and write interval of the fleet tests' distributed
// option: short, so that the tests end soon.
const fleetInterval = 200 * time.Millisecond

// fleetConfig is a fleet process's configuration. <STORAGE> is the shared
// storage directory; <OPTIONS> the handler's options.
const fleetConfig = `{
	admin <ADMIN>
	persist_config off
	auto_https off
	storage file_system <STORAGE>
	grace_period 1s
	servers {
		trusted_proxies static 127.0.0.1/32
	}
	log {
		output stderr
		format json
		level INFO
	}
}
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

// fleetDistributed is the distributed option of the fleet tests.
var fleetDistributed = fmt.Sprintf("distributed {\n\t\t\tread_interval %v\n\t\t\twrite_interval %v\n\t\t}", fleetInterval, fleetInterval)

// A fleetSetup says how a fleet process runs.
type fleetSetup struct {
	storage string // the shared storage directory
	data    string // the data directory (XDG_DATA_HOME), "" for one of its own
	origin  string // host:port of the origin
	options string // the handler's options
}

// fleetStart starts a caddy process of the fleet, named name in the
// test's messages, and stops it when the test ends.
func fleetStart(t *testing.T, name string, s fleetSetup) *hxCaddy {
	t.Helper()
	bin := hxBinary(t)
	ports := e2ePorts(t, 2)
	c := &hxCaddy{t: t, dir: t.TempDir(), admin: "127.0.0.1:" + strconv.Itoa(ports[1]), ports: ports[:1]}
	c.vars = strings.NewReplacer("<ADMIN>", c.admin, "<PORT0>", strconv.Itoa(ports[0]), "<STORAGE>", filepath.ToSlash(s.storage),
		"<ORIGIN>", s.origin, "<OPTIONS>", s.options)
	c.client = &http.Client{
		Timeout:       hxTimeout,
		Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	config := filepath.Join(c.dir, "Caddyfile")
	if err := os.WriteFile(config, []byte(c.vars.Replace(fleetConfig)), 0o644); err != nil {
		t.Fatal(err)
	}
	data := s.data
	if data == "" {
		data = c.dir
	}
	workdir := filepath.Join(c.dir, "cwd")
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.logs = filepath.Join(c.dir, "caddy.out")
	c.cmd = exec.Command(bin, "run", "--config", config, "--adapter", "caddyfile")
	c.cmd.Dir = workdir
	c.cmd.Env = append(os.Environ(), "HOME="+c.dir, "XDG_DATA_HOME="+data, "XDG_CONFIG_HOME="+c.dir)
	fleetLaunch(c)
	t.Cleanup(func() {
		if c.t.Failed() {
			c.t.Logf("caddy %s:", name)
		}
		c.stop()
	})
	c.waitReady()
	return c
}

// fleetLaunch runs c.cmd, its output appended to c.logs.
func fleetLaunch(c *hxCaddy) {
	c.t.Helper()
	out, err := os.OpenFile(c.logs, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	c.cmd.Stdout, c.cmd.Stderr = out, out
	c.exited, c.state = make(chan struct{}), nil
	if err := c.cmd.Start(); err != nil {
		out.Close()
		c.t.Fatalf("starting caddy: %v", err)
	}
	cmd, exited := c.cmd, c.exited
	go func() {
		cmd.Wait()
		out.Close()
		c.state = cmd.ProcessState
		close(exited)
	}()
}

// fleetRestart ends c, with SIGKILL (a crash) when kill is set and else
// as a stop, and starts it again with the same configuration and data.
func fleetRestart(c *hxCaddy, kill bool) {
	c.t.Helper()
	c.client.CloseIdleConnections()
	if kill {
		c.cmd.Process.Signal(syscall.SIGKILL)
	} else {
		c.cmd.Process.Signal(os.Interrupt)
	}
	select {
	case <-c.exited:
	case <-time.After(hxStopTimeout):
		c.t.Fatal("caddy did not end to be restarted")
	}
	old := c.cmd
	c.cmd = exec.Command(old.Path, old.Args[1:]...)
	c.cmd.Dir, c.cmd.Env = old.Dir, old.Env
	fleetLaunch(c)
	c.waitReady()
}

// fleetGet sends GET path for site.test with User-Agent ua from address
// ip (X-Forwarded-For; none when empty) to c, and returns the status, 0
// when the request failed.
func fleetGet(c *hxCaddy, path, ua, ip string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+c.addr(0)+path, nil)
	if err != nil {
		return 0, err
	}
	req.Host = "site.test"
	req.Header.Set("User-Agent", ua)
	if ip != "" {
		req.Header.Set("X-Forwarded-For", ip)
	}
	resp, err := hxDo(c.client, req)
	return resp.status, err
}

// fleetExpect sends the request of fleetGet and fails the test unless the
// status is want.
func fleetExpect(t *testing.T, c *hxCaddy, name, path, ua, ip string, want int) {
	t.Helper()
	got, err := fleetGet(c, path, ua, ip)
	if err != nil || got != want {
		t.Errorf("%s: GET %s by %s from %s = %d (%v), want %d", name, path, hxUAName(ua), ip, got, err, want)
	}
}

// fleetLines returns the JSON lines of c's output whose msg is msg.
func fleetLines(c *hxCaddy, msg string) []e2eRecord {
	var out []e2eRecord
	for line := range strings.Lines(c.output()) {
		var rec e2eRecord
		if json.Unmarshal([]byte(line), &rec) == nil && rec.str("msg") == msg {
			out = append(out, rec)
		}
	}
	return out
}

// fleetRecord waits for c's last compliance record of path, and returns it.
func fleetRecord(t *testing.T, c *hxCaddy, path string) e2eRecord {
	t.Helper()
	for deadline := time.Now().Add(hxTimeout); ; time.Sleep(10 * time.Millisecond) {
		recs := fleetLines(c, "robots.txt decision")
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].str("uri") == path {
				return recs[i]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of %s:\n%s", path, c.logTail())
		}
	}
}

// fleetMetric reads a series of c's metrics; false when it has none.
func fleetMetric(c *hxCaddy, name, labels string) (float64, bool) {
	text, err := c.adminGet("/metrics")
	if err != nil {
		return 0, false
	}
	return hxMetric(text, name, labels)
}

// fleetWaitView waits until c's view holds parts parts and was read
// lately.
func fleetWaitView(t *testing.T, c *hxCaddy, name string, parts int) {
	t.Helper()
	ok := e2eEventually(func() bool {
		n, _ := fleetMetric(c, "caddy_robots_enforce_fleet_parts", "")
		age, found := fleetMetric(c, "caddy_robots_enforce_fleet_view_age_seconds", "")
		return int(n) >= parts && found && age < 3*fleetInterval.Seconds()
	})
	if !ok {
		t.Fatalf("%s: the fleet's view never held %d parts:\n%s", name, parts, c.errorLines())
	}
}

// fleetRobots is a robots.txt the origin answers with, which a test may
// change.
type fleetRobots struct {
	origin *e2eUpstream
	body   chan string // holds the body; a channel of one as a lock
}

// fleetOrigin starts an origin whose robots.txt is body until set, and
// whose every other path is a page.
func fleetOrigin(t *testing.T, body string) *fleetRobots {
	r := &fleetRobots{body: make(chan string, 1)}
	r.body <- body
	r.origin = e2eNewUpstream(t, map[string]e2eRoute{
		"/robots.txt": func(w http.ResponseWriter, req *http.Request) {
			b := <-r.body
			r.body <- b
			e2eText(b)(w, req)
		},
	})
	return r
}

// set changes the robots.txt.
func (r *fleetRobots) set(body string) {
	<-r.body
	r.body <- body
}
