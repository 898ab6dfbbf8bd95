package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Every Host header a client invents is a key of the handler's state: a
// fetch of robots.txt, an entry among max_hosts. These tests flood the
// handler with new keys and check that it never lets a crawler through
// for it: a forgotten host is never judged by a file fetched without its
// site's variables, a named site is one key however its Host is spelt,
// and first fetches for unseen hosts have a budget, past which a host is
// judged as unreachable.

// Sizes of the floods: enough new hosts to cycle max_hosts many times
// over, few enough for CI.
const (
	hxFloodHosts   = 3000
	hxFloodWorkers = 16
	hxFloodMax     = 64 // max_hosts
)

// hxFileSite is a site on <PORT0> that serves <SITE> with file_server,
// behind robots_enforce with <OPTIONS>: the handler's own fetch needs the
// root the site sets.
const hxFileSite = `
http://:<PORT0> {
	bind 127.0.0.1
	root * <SITE>
	robots_enforce {
		verify off
		body denied
		<OPTIONS>
	}
	file_server
}
`

// hxSecretServed reports whether an answer carries a disallowed file.
func hxSecretServed(r hxResp) bool {
	return r.status == http.StatusOK && strings.Contains(r.body, hxSecret)
}

// Past max_hosts, forgetting a host whose first fetch is still pending
// must not make that fetch run without the site's root (file_server then
// answers 404, which reads as "no robots.txt": everything allowed).
func TestHostileHostFloodEviction(t *testing.T) {
	t.Parallel()
	c := hxStart(t, 1, hxFileSite, map[string]string{
		"<SITE>": hxSiteDir(t), "<OPTIONS>": fmt.Sprintf("max_hosts %d", hxFloodMax),
	})
	hxExpect(t, c, "real.test", "/private/secret.html", e2eGPTBot, http.StatusForbidden)
	res := c.flood(hxFloodHosts, hxFloodWorkers, func(i int) (int, string, string, string) {
		return 0, fmt.Sprintf("f%d.flood.test", i), "/private/secret.html", e2eGPTBot
	}, hxSecretServed)
	t.Logf("%d GPTBot requests for new hosts: %d got the disallowed file, %d no answer", res.sent, res.broke, res.failed)
	if res.broke > 0 {
		t.Errorf("%d of %d GPTBot requests for new hosts got the disallowed file, e.g.:\n%s", res.broke, res.sent, strings.Join(res.examples, "\n"))
	}
	// The site's robots.txt exists: no fetch of it may have failed.
	metrics := c.metrics()
	if _, ok := hxMetric(metrics, hxFetchesMetric, ""); !ok {
		t.Errorf("no series of %s in /metrics: the fetches are not counted under that name", hxFetchesMetric)
	}
	if n, _ := hxMetric(metrics, hxFetchesMetric, `outcome="4xx"`); n > 0 {
		t.Errorf("%v robots.txt fetches answered 4xx: the handler fetched without the site's root", n)
	}
	hxExpect(t, c, "real.test", "/private/secret.html", e2eGPTBot, http.StatusForbidden)
	hxExpect(t, c, "real.test", "/private/secret.html", e2eCrawler, http.StatusForbidden)
	hxExpect(t, c, "real.test", "/private/secret.html", e2eBrowser, http.StatusOK)
}

// hxNamedSites are two sites named victim.test, one with the default
// unreachable policy and one with "unreachable allow", before an origin.
const hxNamedSites = `
http://victim.test:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		body denied
	}
	reverse_proxy <ORIGIN>
}
http://victim.test:<PORT1> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		body denied
		unreachable allow
	}
	reverse_proxy <ORIGIN>
}
`

// A named site matches its name in any case, with a trailing dot, and with
// any port in the Host header: each spelling must be the same site to the
// handler, one robots.txt fetch, not one per spelling; and a port that is
// no port must not make the site's robots.txt undefined, which "unreachable
// allow" would read as "allow".
func TestHostileNamedSiteHostKeys(t *testing.T) {
	t.Parallel()
	o := hxNewOrigin(t, map[string]hxReply{"/robots.txt": hxText(http.StatusOK, "text/plain", hxTargetRobots)})
	c := hxStart(t, 2, hxNamedSites, map[string]string{"<ORIGIN>": o.hostPort()})
	port := c.ports[0]
	spellings := []string{
		"victim.test", "VICTIM.TEST", "Victim.Test.", "victim.test.",
		fmt.Sprintf("victim.test:%d", port), fmt.Sprintf("victim.test:000%d", port), fmt.Sprintf("VICTIM.test.:%d", port),
	}
	served := func(r hxResp) bool { return r.status == http.StatusOK && r.body == "page /private/secret.html" }
	res := c.flood(hxFloodHosts/2, hxFloodWorkers, func(i int) (int, string, string, string) {
		if i < len(spellings) {
			return 0, spellings[i], "/private/secret.html", e2eGPTBot
		}
		return 0, fmt.Sprintf("victim.test:%d", i), "/private/secret.html", e2eGPTBot
	}, served)
	if res.broke > 0 {
		t.Errorf("%d of %d GPTBot requests for victim.test got /private/secret.html, e.g.:\n%s", res.broke, res.sent, strings.Join(res.examples, "\n"))
	}
	// One site, one file: its first fetch, and a refresh or two at most.
	const maxFetches = 3
	if n := o.countPath("/robots.txt"); n > maxFetches {
		t.Errorf("%d Host spellings of victim.test made the origin answer %d robots.txt requests, want at most %d", res.sent, n, maxFetches)
	}
	for _, host := range []string{"victim.test:abc", "victim.test:", "victim.test:-1", "victim.test:99999999999", "victim.test:1:2"} {
		r, err := c.get(1, host, "/private/secret.html", e2eGPTBot)
		if err == nil && served(r) {
			t.Errorf("unreachable allow: GET /private/secret.html with Host %q by GPTBot = 200 with the file", host)
		}
	}
	hxExpectOn(t, c, 1, "victim.test", "/private/secret.html", e2eGPTBot, http.StatusForbidden)
	hxExpectOn(t, c, 1, "victim.test", "/pub/page.html", e2eGPTBot, http.StatusOK)
}

// hxBudgetNewHosts is the first fetches TestHostileNewHostsBudget allows.
const hxBudgetNewHosts = 20

// First fetches for hosts never seen have a budget (new_hosts): a flood of
// new hosts costs the origin that many fetches, and a host past the budget
// is judged as unreachable (crawlers denied, people pass), never allowed.
func TestHostileNewHostsBudget(t *testing.T) {
	t.Parallel()
	const hosts = 300
	o := hxNewOrigin(t, map[string]hxReply{"/robots.txt": hxText(http.StatusOK, "text/plain", hxTargetRobots)})
	c := hxStart(t, 1, hxProxySite, map[string]string{
		"<ORIGIN>": o.hostPort(), "<OPTIONS>": fmt.Sprintf("new_hosts %d per 1m", hxBudgetNewHosts),
	})
	served := func(r hxResp) bool { return r.status == http.StatusOK && r.body == "page /private/secret.html" }
	res := c.flood(hosts, hxFloodWorkers, func(i int) (int, string, string, string) {
		return 0, fmt.Sprintf("n%d.budget.test", i), "/private/secret.html", e2eGPTBot
	}, served)
	if res.broke > 0 {
		t.Errorf("%d of %d GPTBot requests for new hosts got /private/secret.html, e.g.:\n%s", res.broke, res.sent, strings.Join(res.examples, "\n"))
	}
	// The budget, and a little room for the hosts in flight when it ran out.
	if n := o.countPath("/robots.txt"); n > hxBudgetNewHosts+hxFloodWorkers {
		t.Errorf("%d new hosts made the origin answer %d robots.txt requests, want at most %d (new_hosts %d)", hosts, n, hxBudgetNewHosts+hxFloodWorkers, hxBudgetNewHosts)
	}
	last := fmt.Sprintf("n%d.budget.test", hosts-1)
	hxExpect(t, c, last, "/pub/page.html", e2eGPTBot, http.StatusForbidden)
	hxExpect(t, c, last, "/pub/page.html", e2eBrowser, http.StatusOK)
}

// hxExpectOn is hxExpect on the port-th port.
func hxExpectOn(t testing.TB, c *hxCaddy, port int, host, path, ua string, want int) {
	t.Helper()
	r, err := c.get(port, host, path, ua)
	switch {
	case err != nil:
		t.Errorf("port %d: GET %s%s by %s: %v", port, host, path, hxUAName(ua), err)
	case r.status != want:
		t.Errorf("port %d: GET %s%s by %s = %d %.80q, want %d", port, host, path, hxUAName(ua), r.status, r.body, want)
	}
}
