package integration

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A request target is read by Go's server, by Caddy's handlers and by the
// origin behind reverse_proxy; the handler must judge the path they act
// on, whatever the spelling. These tests send the spellings that Go
// accepts and that read as another path than the handler's (an
// absolute-form target without "//", a raw "#", an escaped one that
// reverse_proxy forwards) over HTTP/1.1 and cleartext HTTP/2, to
// file_server, to reverse_proxy before Go's http.FileServer, and to
// reverse_proxy before Python's http.server, and check that no crawler
// gets the disallowed file.

// hxSecret marks the content of the disallowed files.
const hxSecret = "SECRET-d41d8cd98f00"

// hxTargetRobots is the site's robots.txt: a directory and a file type
// are disallowed to every crawler (GPTBot and curl fall to "*").
const hxTargetRobots = "User-agent: *\nDisallow: /private/\nDisallow: /*.secret$\n"

// hxSecretTargetsFile lists request targets that name a disallowed file,
// each a spelling some server behind the handler reads as that file. The
// fuzz target FuzzTargetReadings of package caddymodule seeds its corpus
// with the same list; see the README beside it.
const hxSecretTargetsFile = "../testdata/targets/secret.txt"

// hxSecretTargets returns the targets of hxSecretTargetsFile.
func hxSecretTargets(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(hxSecretTargetsFile)
	if err != nil {
		t.Fatalf("reading the targets: %v", err)
	}
	var targets []string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimRight(line, "\r\n"); line != "" && !strings.HasPrefix(line, "#") {
			targets = append(targets, line)
		}
	}
	if len(targets) == 0 {
		t.Fatalf("%s: no targets", hxSecretTargetsFile)
	}
	return targets
}

// hxTargetSites serves a site directory three ways, over HTTP/1.1 and h2c.
const hxTargetSites = `
http://:<PORT0> {
	bind 127.0.0.1
	root * <SITE>
	robots_enforce {
		verify off
		body denied
	}
	file_server
}
http://:<PORT1> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		body denied
	}
	reverse_proxy <GO>
}
http://:<PORT2> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		body denied
	}
	reverse_proxy <PYTHON>
}
`

func TestHostileRequestTargets(t *testing.T) {
	t.Parallel()
	site := hxSiteDir(t)
	goOrigin := httptest.NewServer(http.FileServer(http.Dir(site)))
	t.Cleanup(goOrigin.Close)
	python := hxPythonOrigin(t, site)
	targets := hxSecretTargets(t)
	c := hxStart(t, 3, hxTargetSites, map[string]string{
		"<GLOBAL>": "servers {\n\t\tprotocols h1 h2c\n\t}",
		"<SITE>":   site,
		"<GO>":     strings.TrimPrefix(goOrigin.URL, "http://"),
		"<PYTHON>": python,
	})
	send := map[string]func(port int, target, ua string) (hxResp, error){
		"h1": func(port int, target, ua string) (hxResp, error) {
			return c.raw(port, "GET", target, "example.test", ua)
		},
		"h2c": func(port int, target, ua string) (hxResp, error) {
			return hxH2C(c.addr(port), "example.test", target, ua)
		},
	}
	for port, name := range []string{"file_server", "go-origin", "python-origin"} {
		t.Run(name, func(t *testing.T) {
			// The setup serves the file, and robots.txt, to whoever asks
			// plainly.
			if r, err := c.raw(port, "GET", "/private/secret.html", "example.test", e2eBrowser); err != nil || r.status != http.StatusOK || !strings.Contains(r.body, hxSecret) {
				t.Fatalf("GET /private/secret.html by a browser = %d %.60q, %v; want 200 with the file", r.status, r.body, err)
			}
			for _, proto := range []string{"h1", "h2c"} {
				r, err := send[proto](port, "/robots.txt", e2eGPTBot)
				if err != nil || r.status != http.StatusOK || r.body != hxTargetRobots {
					t.Errorf("%s: GET /robots.txt by GPTBot = %d %.60q, %v; want 200 with the file", proto, r.status, r.body, err)
				}
				for _, target := range targets {
					for _, ua := range [...]struct{ name, header string }{{"GPTBot", e2eGPTBot}, {"a crawler", e2eCrawler}} {
						r, err := send[proto](port, target, ua.header)
						if err == nil && r.status == http.StatusOK && strings.Contains(r.body, hxSecret) {
							t.Errorf("%s: GET %s by %s = 200 with the disallowed file", proto, target, ua.name)
						}
					}
				}
			}
		})
	}
	c.requireAlive(0, "the request targets")
}

// hxSiteDir writes the site the target tests serve, and returns its
// directory.
func hxSiteDir(t testing.TB) string {
	t.Helper()
	site := filepath.Join(t.TempDir(), "site")
	for name, body := range map[string]string{
		"robots.txt":          hxTargetRobots,
		"private/secret.html": "<p>" + hxSecret + "</p>\n",
		"top.secret":          hxSecret + "\n",
		"pub/page.html":       "<p>public</p>\n",
		"pub/x":               "public x\n",
		"x":                   "x\n",
	} {
		p := filepath.Join(site, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return site
}

// hxPythonOrigin runs Python's http.server on dir, on a loopback port,
// until the test ends, and returns its address. It skips the test when
// python3 is missing.
func hxPythonOrigin(t testing.TB, dir string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python origin cannot run")
	}
	addr := "127.0.0.1:" + strconv.Itoa(e2ePorts(t, 1)[0])
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(py, "-m", "http.server", port, "--bind", "127.0.0.1", "--directory", dir)
	if err := cmd.Start(); err != nil {
		t.Skipf("python3 -m http.server does not start: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	for deadline := time.Now().Add(hxStartTimeout); ; {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return addr
		}
		select {
		case <-done:
			t.Fatalf("python3 -m http.server ended: %v", cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("python3 -m http.server did not listen on %s within %v", addr, hxStartTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
