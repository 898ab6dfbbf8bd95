package integration

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// An origin's robots.txt may redirect anywhere, and the handler follows
// redirects across hosts, as RFC 9309 §2.3.1.2 has crawlers do. These
// tests check that the handler's fetch is no lever into what only Caddy
// can reach: never Caddy's admin endpoint, never a loopback, link-local or
// private address unless the origin is there too; that a body which is no
// robots.txt (JSON, HTML) counts as unreachable; that redirect loops stay
// bounded; and that a redirect to another host on the origin's own network
// is still followed.

// The hosts of TestHostileRedirectToAdmin and the Location each one's
// robots.txt redirects to. The sites are loopback addresses, like the
// admin endpoint: only the admin rule itself stops these. (Distinct
// addresses, not ports: a Host header's port may not make a site key.)
var hxAdminRedirects = []struct{ host, location string }{
	{"127.0.0.11", "http://<ADMIN>/config/"},
	{"127.0.0.12", "http://localhost:<ADMINPORT>/config/"},
	{"127.0.0.13", "http://0.0.0.0:<ADMINPORT>/config/"},
	{"127.0.0.14", "http://[::ffff:127.0.0.1]:<ADMINPORT>/config/"},
	{"127.0.0.15", "http://<ADMIN>/config/apps/http/servers/"},
	{"admin.test", "http://<ADMIN>/config/"},
}

func TestHostileRedirectToAdmin(t *testing.T) {
	t.Parallel()
	var admin atomic.Pointer[strings.Replacer] // set once Caddy, and its admin port, exist
	routes := map[string]hxReply{
		// A robots.txt that is JSON, served directly.
		"json.test /robots.txt": hxText(http.StatusOK, "application/json", `{"apps":{"http":{"servers":{}}},"admin":{"listen":"127.0.0.1:2019"}}`),
		"html.test /robots.txt": hxText(http.StatusOK, "text/plain", "<!DOCTYPE html><html><body>User-agent: *\nAllow: /\n</body></html>"),
	}
	for _, r := range hxAdminRedirects {
		routes[r.host+" /robots.txt"] = func(w *hxWire, req *http.Request) bool {
			return hxRedirect(http.StatusFound, admin.Load().Replace(r.location))(w, req)
		}
	}
	o := hxNewOrigin(t, routes)
	c := hxStart(t, 1, hxProxySite, map[string]string{"<ORIGIN>": o.hostPort(), "<OPTIONS>": "fetch_timeout 3s"})
	_, adminPort, _ := net.SplitHostPort(c.admin)
	admin.Store(strings.NewReplacer("<ADMIN>", c.admin, "<ADMINPORT>", adminPort))

	served := func(r hxResp) bool { return r.status == http.StatusOK && strings.HasPrefix(r.body, "page /private/") }
	hosts := []string{"json.test", "html.test"}
	for _, r := range hxAdminRedirects {
		hosts = append(hosts, r.host)
	}
	for _, host := range hosts {
		if r, err := c.get(0, host, "/private/secret.html", e2eGPTBot); err != nil || served(r) {
			t.Errorf("GET %s/private/secret.html by GPTBot = %d %.40q, %v; want a denial", host, r.status, r.body, err)
		}
		// No robots.txt could be had: RFC 9309 §2.3.1.4, complete disallow.
		hxExpect(t, c, host, "/pub/page.html", e2eGPTBot, http.StatusForbidden)
		hxExpect(t, c, host, "/private/secret.html", e2eBrowser, http.StatusOK)
	}
	// Caddy's admin endpoint logs each request it receives; none may be
	// the handler's (the test itself asks only for /metrics and pprof).
	for line := range strings.Lines(c.output()) {
		if strings.Contains(line, `"logger":"admin.api"`) && strings.Contains(line, `"msg":"received request"`) && strings.Contains(line, `"uri":"/config/`) {
			var rec e2eRecord
			json.Unmarshal([]byte(line), &rec)
			t.Errorf("the admin endpoint received a request from the handler's robots.txt fetch: GET %s with Host %q", rec.str("uri"), rec.str("host"))
		}
	}
}

// A redirect to another host of the origin (here, like the site, on
// loopback) is followed, and that file is in force; loops, within the
// site or across two hosts, cost a bounded number of requests. (On this
// machine, a redirect may lead only to the ports the site is on: the
// listener's, and the origin's; see TestHostileRedirectToAdmin.)
func TestHostileRedirectLoopsAndCrossHost(t *testing.T) {
	t.Parallel()
	// The origin's other host names: "localhost" and "127.0.0.1" reach
	// it as the sites' names do not (it listens on 127.0.0.1 alone).
	var o1 *hxOrigin
	at := func(host, path string) hxReply {
		return func(w *hxWire, r *http.Request) bool {
			_, port, _ := net.SplitHostPort(o1.hostPort())
			return hxRedirect(http.StatusFound, "http://"+host+":"+port+path)(w, r)
		}
	}
	o1 = hxNewOrigin(t, map[string]hxReply{
		"127.0.0.31 /robots.txt": at("localhost", "/robots-cdn.txt"),
		"/robots-cdn.txt":        hxText(http.StatusOK, "text/plain", hxTargetRobots),
		// A loop across two hosts.
		"127.0.0.32 /robots.txt": at("localhost", "/loop"),
		"/loop":                  at("127.0.0.1", "/loop2"),
		"/loop2":                 at("localhost", "/loop"),
		"127.0.0.33 /robots.txt": hxRedirect(http.StatusFound, "/robots.txt"),
	})
	c := hxStart(t, 1, hxProxySite, map[string]string{"<ORIGIN>": o1.hostPort(), "<OPTIONS>": "fetch_timeout 3s"})

	hxExpect(t, c, "127.0.0.31", "/private/secret.html", e2eGPTBot, http.StatusForbidden)
	hxExpect(t, c, "127.0.0.31", "/pub/page.html", e2eGPTBot, http.StatusOK) // the file, not "unreachable"
	const requests = 20
	for range requests {
		for _, host := range []string{"127.0.0.32", "127.0.0.33"} {
			if _, err := c.get(0, host, "/pub/page.html", e2eGPTBot); err != nil {
				t.Errorf("GET %s/pub/page.html by GPTBot: %v", host, err)
			}
		}
	}
	c.requireAlive(0, "redirect loops")
	// Each access follows at most 5 redirects (RFC 9309 §2.3.1.2): 6
	// requests; a refresh or two may follow.
	const most = 3 * (robotstxt.MaxRedirects + 1)
	loops := o1.count("127.0.0.32", "/robots.txt") + o1.countPath("/loop") + o1.countPath("/loop2")
	self := o1.count("127.0.0.33", "/robots.txt")
	if loops > most || self > most {
		t.Errorf("%d requests each made the origins answer %d requests of a loop across hosts and %d of a loop within the site, want at most %d each", requests, loops, self, most)
	}
}
