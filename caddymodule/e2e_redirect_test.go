package caddymodule

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
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

// A redirect to another host on the origin's own network (here, like the
// site, loopback) is followed, and that file is in force; loops, within
// the site or across two hosts, cost a bounded number of requests.
func TestHostileRedirectLoopsAndCrossHost(t *testing.T) {
	t.Parallel()
	o2 := hxNewOrigin(t, map[string]hxReply{
		"/robots.txt": hxText(http.StatusOK, "text/plain", hxTargetRobots),
		// Back to the first host's robots.txt: a loop across two hosts.
		"/loop": hxRedirect(http.StatusFound, "http://127.0.0.32/robots.txt"),
	})
	o1 := hxNewOrigin(t, map[string]hxReply{
		"127.0.0.31 /robots.txt": hxRedirect(http.StatusMovedPermanently, "http://"+o2.hostPort()+"/robots.txt"),
		"127.0.0.32 /robots.txt": hxRedirect(http.StatusFound, "http://"+o2.hostPort()+"/loop"),
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
	const most = 3 * (enforce.MaxRedirects + 1)
	loops := o1.count("127.0.0.32", "/robots.txt") + o2.countPath("/loop")
	self := o1.count("127.0.0.33", "/robots.txt")
	if loops > most || self > most {
		t.Errorf("%d requests each made the origins answer %d requests of a loop across hosts and %d of a loop within the site, want at most %d each", requests, loops, self, most)
	}
}

// hxPrivateTargets are redirect targets a robots.txt on a public origin
// must not lead the handler's fetch to: loopback, link-local (cloud
// metadata), private and unspecified addresses, and Caddy's admin.
var hxPrivateTargets = []string{
	"http://127.0.0.1/robots.txt",
	"http://127.0.0.1:2019/config/",
	"http://localhost:2019/config/",
	"http://[::1]/robots.txt",
	"http://[::ffff:127.0.0.1]/robots.txt",
	"http://0.0.0.0:2019/config/",
	"http://10.1.2.3/robots.txt",
	"http://172.16.0.1/robots.txt",
	"http://192.168.1.1/robots.txt",
	"http://169.254.169.254/latest/meta-data/",
	"http://[fe80::1]/robots.txt",
	"http://[fd00::1]/robots.txt",
}

// The private-range rule cannot be shown on loopback (every origin of the
// end-to-end tests is loopback, where loopback redirects are fine), so it
// is checked on a Store with a Fetcher that stands for the network: the
// site is a public address whose robots.txt redirects to each target. The
// Fetcher must never be asked for a target, and the permissive file the
// target would serve must not come into force. A redirect to another
// public host is followed (the control). This holds where redirects are
// followed, in enforce's access; a rule applied only when a connection is
// dialled would need this test moved next to it.
func TestHostileRedirectIntoPrivateRanges(t *testing.T) {
	t.Parallel()
	const origin = "https://8.8.8.8/robots.txt"
	cases := []hxRedirectCase{{"https://8.8.4.4/robots.txt", true}}
	for _, target := range hxPrivateTargets {
		cases = append(cases, hxRedirectCase{target, false})
	}
	for _, tc := range cases {
		var mu sync.Mutex
		var asked []string
		fetcher := enforce.FetcherFunc(func(ctx context.Context, u string, limit int) (enforce.Response, error) {
			if u == origin {
				return enforce.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {tc.target}}}, nil
			}
			mu.Lock()
			asked = append(asked, u)
			mu.Unlock()
			return enforce.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte(hxPermissive)}, nil
		})
		s, err := enforce.NewStore(enforce.StoreConfig{Fetcher: fetcher})
		if err != nil {
			t.Fatal(err)
		}
		snap := s.Snapshot(context.Background(), "8.8.8.8")
		s.Close()
		followed := len(asked) > 0
		switch {
		case followed != tc.follow:
			t.Errorf("redirect from %s to %s: followed %v (asked %v), want %v", origin, tc.target, followed, asked, tc.follow)
		case !tc.follow && snap.Access == enforce.AccessAvailable:
			t.Errorf("redirect from %s to %s: the target's file is in force", origin, tc.target)
		case tc.follow && snap.Access != enforce.AccessAvailable:
			t.Errorf("redirect from %s to %s: access %v, want the target's file in force", origin, tc.target, snap.Access)
		}
	}
}

// hxRedirectCase is a redirect target, and whether a fetch follows it.
type hxRedirectCase struct {
	target string
	follow bool
}
