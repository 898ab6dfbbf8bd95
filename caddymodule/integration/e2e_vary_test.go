package integration

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// hxGooglebot is Googlebot's User-Agent header.
const hxGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// hxOfferWait is longer than robotstxt.OfferInterval (1s), the shortest
// time after a fetch at which the handler considered a client's answer.
const hxOfferWait = 1200 * time.Millisecond

// A site may serve robots.txt by client (here, a permissive file to
// Googlebot and the real one to everyone else). One client's GET
// /robots.txt is then no evidence of what the file is: at most a hint
// that it changed, for the handler to check with a request of its own.
// After Googlebot has read the permissive variant, GPTBot is still held to
// the file the handler's own request gets.
func TestHostileClientRobotsAnswer(t *testing.T) {
	t.Parallel()
	o := hxNewOrigin(t, map[string]hxReply{"/robots.txt": hxVary(func(ua string) string {
		if strings.Contains(ua, "Googlebot") {
			return hxPermissive
		}
		return hxTargetRobots
	})})
	c := hxStart(t, 1, hxProxySite, map[string]string{"<ORIGIN>": o.hostPort(), "<OPTIONS>": ""})
	hxExpect(t, c, "site.test", "/private/secret.html", e2eGPTBot, http.StatusForbidden)
	time.Sleep(hxOfferWait)
	// Googlebot gets its variant, untouched.
	if r, err := c.get(0, "site.test", "/robots.txt", hxGooglebot); err != nil || r.status != http.StatusOK || r.body != hxPermissive {
		t.Fatalf("GET /robots.txt by Googlebot = %d %q, %v; want 200 %q", r.status, r.body, err, hxPermissive)
	}
	for range 15 {
		r, err := c.get(0, "site.test", "/private/secret.html", e2eGPTBot)
		if err == nil && r.status == http.StatusOK {
			t.Fatalf("after Googlebot read its robots.txt: GET /private/secret.html by GPTBot = 200 %.40q, want 403: one client's answer replaced the file in force", r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	own := 0
	for _, ua := range o.agentsOf("site.test", "/robots.txt") {
		if !strings.Contains(ua, "Googlebot") {
			own++
		}
	}
	t.Logf("the origin answered %d robots.txt requests of the handler's own", own)
}
