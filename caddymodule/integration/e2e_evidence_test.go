package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// The tests of this file try, as an attacker or a careless crawler would,
// to turn the consequences of the judgement (a record's evidence, an
// escalation) against an honest crawler, to escape them, or to lose them.

// evOrigin is an origin whose robots.txt the test changes, and which
// answers 400 to a request whose Cookie is over 4 KiB, as nginx does by
// default.
type evOrigin struct {
	mu     sync.Mutex
	robots string
	up     *e2eUpstream
}

func newEvOrigin(t *testing.T, robots string) *evOrigin {
	o := &evOrigin{robots: robots}
	o.up = e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Get("Cookie")) > 4<<10 {
			http.Error(w, "400 Request Header Or Cookie Too Large", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		body := o.robots
		o.mu.Unlock()
		e2eText(body)(w, r)
	}})
	return o
}

// set makes body the origin's robots.txt.
func (o *evOrigin) set(body string) {
	o.mu.Lock()
	o.robots = body
	o.mu.Unlock()
}

// evList writes a range list of prefix and returns its path.
func evList(t *testing.T, name, prefix string) string {
	p := filepath.Join(t.TempDir(), name+".json")
	key := "ipv4Prefix"
	if strings.Contains(prefix, ":") {
		key = "ipv6Prefix"
	}
	if err := os.WriteFile(p, []byte(`{"prefixes": [{"`+key+`": "`+prefix+`"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(p)
}

// evStart starts a Caddy guarding o in mode with options.
func evStart(t *testing.T, o *evOrigin, mode, options string) *e2eCaddy {
	return e2eStart(t, 1, e2eProxySite, map[string]string{"<UPSTREAM>": o.up.hostPort(), "<MODE>": mode, "<OPTIONS>": options})
}

// evGet sends ua's request for path from ip, with header lines extra
// (name, value), and returns the response.
func evGet(c *e2eCaddy, ua, ip, path string, extra ...string) e2eResponse {
	h := jdFrom(ip)
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return c.getWith(0, "site.test", path, ua, h)
}

// evServed returns the served lines written so far, waiting for n.
func evServed(c *e2eCaddy, n int) []e2eRecord {
	return c.linesWhere("robots.log", "http.handlers.robots_enforce", n, func(r e2eRecord) bool {
		return r.str("msg") == record.MsgServed
	})
}

const evExampleBot = "ExampleBot/1.0 (+https://example.net/bot)"

// Point 1: a 4xx the client provoked is no serve. A crawler that sends an
// oversized Cookie with its GET /robots.txt gets the origin's 400; before,
// that was credited as serving the "unavailable" version (everything
// allowed), and each of its violations for a day was grace. Whatever
// the client, verified or not, the site's answer to the store's own fetch
// is the file: the violation stays a violation, and escalates.
func TestE2EEvidenceProvoked4xx(t *testing.T) {
	o := newEvOrigin(t, "User-agent: *\nDisallow: /private/\n")
	gptbot := evList(t, "gptbot", "192.0.2.0/24")
	c := evStart(t, o, "log", "verify {\n\t\t\tbuiltin off\n\t\t\tip_ranges GPTBot "+gptbot+"\n\t\t}\n\t\tviolators block")
	cookie := "session=" + strings.Repeat("x", 5<<10)
	for _, tc := range []struct{ ua, ip string }{{evExampleBot, "198.51.100.1"}, {e2eGPTBot, "192.0.2.7"}} {
		jdMark(c, 0, "site.test", "/private/")
		if r := evGet(c, tc.ua, tc.ip, "/robots.txt", "Cookie", cookie); r.status != http.StatusBadRequest {
			t.Fatalf("GET /robots.txt with an oversized Cookie = %d, want the origin's 400", r.status)
		}
		evGet(c, tc.ua, tc.ip, "/private/a")
		recs := jdMark(c, 0, "site.test", "/private/")
		if len(recs) != 1 {
			t.Fatalf("%d records of %s's GET /private/a, want 1:\n%s", len(recs), tc.ua, e2eDump(recs))
		}
		jdCheck(t, tc.ua+" after a 400 it provoked", recs[0], e2eRecord{
			"compliance": "violation", "served_robots": false, "escalation": "block", "escalation_began": true,
		})
		if r := evGet(c, tc.ua, tc.ip, "/public"); r.status != http.StatusForbidden {
			t.Errorf("%s after its violation: GET /public = %d, want 403 (escalated)", tc.ua, r.status)
		}
	}
}

// Point 2: a stranger's fetch does not frame a crawler no method can
// verify. ExampleBot, which no method proves, holds v1 (it may, for a
// day); the site moves to v2, which disallows /new. A stranger fetches v2
// under ExampleBot's name from another address; before, that fetch was
// credited to the token, and ExampleBot's next request for /new was a
// violation, and escalated. It stays grace, and ExampleBot is not blocked.
func TestE2EEvidenceStrangerCannotFrame(t *testing.T) {
	const v1 = "User-agent: *\nDisallow: /private/\n"
	const v2 = "User-agent: *\nDisallow: /private/\nDisallow: /new\n"
	o := newEvOrigin(t, v1)
	c := evStart(t, o, "log", "violators block")
	const honest, stranger = "198.51.100.10", "203.0.113.66"
	evGet(c, e2eBrowser, "198.51.100.99", "/") // the site's first fetch: v1 in force
	o.set(v2)
	e2eAfterOfferInterval()
	evGet(c, e2eBrowser, "198.51.100.99", "/robots.txt") // a hint: the store fetches v2
	if !e2eEventually(func() bool {
		return evGet(c, e2eCrawler, "198.51.100.98", "/new").header.Get("X-Robots") != "allow|wildcard_group|ExampleCrawler||"
	}) {
		t.Fatal("v2 never came into force")
	}
	jdMark(c, 0, "site.test", "/private/")
	evGet(c, evExampleBot, honest, "/new")
	if r := evGet(c, evExampleBot, stranger, "/robots.txt"); r.body != v2 {
		t.Fatalf("the stranger's GET /robots.txt = %d %q, want v2", r.status, r.body)
	}
	evGet(c, evExampleBot, honest, "/new")
	recs := jdMark(c, 0, "site.test", "/private/")
	if len(recs) != 2 {
		t.Fatalf("%d records of the honest crawler, want 2:\n%s", len(recs), e2eDump(recs))
	}
	for i, when := range []string{"before the stranger's fetch", "after the stranger's fetch"} {
		jdCheck(t, "ExampleBot's GET /new "+when, recs[i], e2eRecord{"compliance": "grace", "served_robots": false, "escalation": jdNoField{}})
	}
	if r := evGet(c, evExampleBot, honest, "/public"); r.status != http.StatusOK {
		t.Errorf("the honest crawler's GET /public = %d, want 200: not escalated", r.status)
	}
}

// Point 3: undeclared bind never judges a crawler that declares itself as
// another token of its list. One list proves Googlebot and
// Google-CloudVertexBot; a site names only the latter. A Googlebot from
// the list is Googlebot (held to "*", which allows); a browser's header
// from it is bound as the list's crawlers. Likewise a Claude-User fetch
// from a list proving ClaudeBot and Claude-User is Claude-User's, and
// never gets ClaudeBot escalated.
func TestE2EEvidenceUndeclaredKeepsDeclared(t *testing.T) {
	o := newEvOrigin(t, "User-agent: Google-CloudVertexBot\nDisallow: /\n\nUser-agent: ClaudeBot\nDisallow: /private/\n")
	google := filepath.Join(t.TempDir(), "google.json")
	if err := os.WriteFile(google, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/25"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	anthropic := evList(t, "anthropic", "192.0.2.128/25")
	opts := "verify {\n\t\t\tbuiltin off\n\t\t\tip_ranges Googlebot " + filepath.ToSlash(google) +
		"\n\t\t\tip_ranges Google-CloudVertexBot " + filepath.ToSlash(google) +
		"\n\t\t\tip_ranges ClaudeBot " + anthropic + "\n\t\t\tip_ranges Claude-User " + anthropic +
		"\n\t\t\tundeclared bind\n\t\t}\n\t\tviolators block"
	c := evStart(t, o, "enforce", opts)
	const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	const claudeUser = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)"
	const claudeBot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	if !e2eEventually(func() bool { return evGet(c, e2eChrome, "192.0.2.9", "/page").status == http.StatusForbidden }) {
		t.Fatal("a browser's header from Google's list was never bound as Google-CloudVertexBot")
	}
	if r := evGet(c, googlebot, "192.0.2.9", "/page"); r.status != http.StatusOK {
		t.Errorf("Googlebot from its list: GET /page = %d (%s), want 200: judged as Google-CloudVertexBot", r.status, r.header.Get("X-Robots"))
	}
	if r := evGet(c, claudeUser, "192.0.2.200", "/private/x"); r.status != http.StatusOK {
		t.Errorf("Claude-User from its list: GET /private/x = %d (%s), want 200: judged as ClaudeBot", r.status, r.header.Get("X-Robots"))
	}
	if r := evGet(c, claudeBot, "192.0.2.201", "/public"); r.status != http.StatusOK {
		t.Errorf("ClaudeBot after Claude-User's fetch: GET /public = %d (%s), want 200: ClaudeBot escalated", r.status, r.header.Get("X-Robots"))
	}
}

// Point 4: an escalated crawler does not escape by changing its name. A
// verified GPTBot violates and is blocked; from its proven addresses,
// whatever User-Agent it sends (another crawler's, a forged
// user-triggered fetcher's, a browser's), it is GPTBot, blocked, and
// recorded as GPTBot; /robots.txt still passes; a client elsewhere is not
// affected.
func TestE2EEvidenceEscalationFollowsProof(t *testing.T) {
	o := newEvOrigin(t, "User-agent: GPTBot\nDisallow: /private/\n")
	list := evList(t, "gptbot", "192.0.2.0/24")
	c := evStart(t, o, "log", "verify {\n\t\t\tbuiltin off\n\t\t\tip_ranges GPTBot "+list+"\n\t\t}\n\t\tviolators block")
	if !e2eEventually(func() bool {
		evGet(c, e2eGPTBot, "192.0.2.7", "/private/a")
		return strings.HasPrefix(evGet(c, e2eGPTBot, "192.0.2.7", "/public").header.Get("X-Robots"), "deny|escalated|GPTBot")
	}) {
		t.Fatal("the verified GPTBot's violation never escalated it")
	}
	for _, tc := range []struct{ ua, ip string }{
		{evExampleBot, "192.0.2.7"},
		{"ChatGPT-User/1.0 (+https://openai.com/bot)", "192.0.2.7"},
		{e2eChrome, "192.0.2.7"},
		{e2eChrome, "192.0.2.200"}, // another address of its list
	} {
		r := evGet(c, tc.ua, tc.ip, "/public")
		if r.status != http.StatusForbidden || !strings.Contains(r.header.Get("X-Robots"), "|GPTBot|") {
			t.Errorf("escalated GPTBot as %.30q from %s: GET /public = %d (%s), want 403 as GPTBot", tc.ua, tc.ip, r.status, r.header.Get("X-Robots"))
		}
	}
	if r := evGet(c, e2eChrome, "192.0.2.7", "/robots.txt"); r.status != http.StatusOK {
		t.Errorf("GET /robots.txt from the escalated crawler's address = %d, want 200", r.status)
	}
	if r := evGet(c, evExampleBot, "198.51.100.7", "/public"); r.status != http.StatusOK {
		t.Errorf("another crawler elsewhere: GET /public = %d, want 200", r.status)
	}
}

// Point 5: one person does not escalate a user-triggered fetcher for
// everyone. ChatGPT-User fetches a page the site disallows to it, for one
// person: the denial is recorded, as a user-triggered fetcher's, and
// nothing escalates, from its address or any other.
func TestE2EEvidenceUserTriggeredNeverEscalates(t *testing.T) {
	o := newEvOrigin(t, "User-agent: ChatGPT-User\nDisallow: /private/\n\nUser-agent: *\nDisallow: /private/\n")
	list := evList(t, "chatgpt-user", "192.0.2.0/24")
	c := evStart(t, o, "log", "verify {\n\t\t\tbuiltin off\n\t\t\tip_ranges ChatGPT-User "+list+"\n\t\t}\n\t\tviolators block")
	const ua = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
	if !e2eEventually(func() bool {
		return strings.Contains(evGet(c, ua, "192.0.2.7", "/private/a").header.Get("X-Robots"), "deny|named_group")
	}) {
		t.Fatal("ChatGPT-User's request for /private/a never judged by its group")
	}
	recs := jdMark(c, 0, "site.test", "/private/")
	last := recs[len(recs)-1]
	jdCheck(t, "ChatGPT-User's violation", last, e2eRecord{"agent": "ChatGPT-User", "compliance": "violation", "escalation": jdNoField{}})
	for _, ip := range []string{"192.0.2.7", "192.0.2.8"} {
		if r := evGet(c, ua, ip, "/public"); r.status != http.StatusOK {
			t.Errorf("ChatGPT-User from %s after one person's request: GET /public = %d, want 200", ip, r.status)
		}
	}
}

// Point 7: a flood does not release a violator. RogueBot is blocked; one
// address then violates under 10,050 made-up names, as fast as it can;
// RogueBot is still blocked, and the flooding address is blocked whatever
// name it sends.
func TestE2EEvidenceFloodKeepsViolators(t *testing.T) {
	if testing.Short() {
		t.Skip("10,050 requests")
	}
	o := newEvOrigin(t, "User-agent: *\nDisallow: /private/\n")
	c := evStart(t, o, "log", "violators block")
	const rogue = "RogueBot/1.0 (+https://rogue.example)"
	evGet(c, rogue, "198.51.100.1", "/private/a")
	if r := evGet(c, rogue, "198.51.100.1", "/public"); r.status != http.StatusForbidden {
		t.Fatalf("RogueBot after its violation: %d, want 403", r.status)
	}
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				evGet(c, fmt.Sprintf("Made%dBot/1.0", i), "203.0.113.9", "/private/x")
			}
		}()
	}
	for i := range 10_050 {
		work <- i
	}
	close(work)
	wg.Wait()
	if r := evGet(c, rogue, "198.51.100.1", "/public"); r.status != http.StatusForbidden {
		t.Errorf("RogueBot after the flood: GET /public = %d, want 403: released", r.status)
	}
	if r := evGet(c, "YetAnotherBot/1.0", "203.0.113.9", "/public"); r.status != http.StatusForbidden {
		t.Errorf("the flooding address under a new name: GET /public = %d, want 403", r.status)
	}
}

// Point 8: an escalation is not escaped by spelling. On a catch-all site,
// another spelling of the same host (the loopback by another name or
// address, no port), another address of the same IPv6 /64, or the IPv4
// address written IPv4-mapped in X-Forwarded-For, is the same violator on
// the same site.
func TestE2EEvidenceEscalationSpellings(t *testing.T) {
	o := newEvOrigin(t, "User-agent: *\nDisallow: /private/\n")
	c := evStart(t, o, "log", "violators block")
	const rogue = "RogueBot/1.0 (+https://rogue.example)"
	port := strings.TrimPrefix(c.addr(0), "127.0.0.1:")
	get := func(host, ip, path string) int { return c.getWith(0, host, path, rogue, jdFrom(ip)).status }
	get("localhost:"+port, "198.51.100.1", "/private/a")
	for _, host := range []string{"localhost:" + port, "localhost", "127.0.0.1:" + port, "127.1", "[::1]:" + port, "LOCALHOST."} {
		if s := get(host, "198.51.100.1", "/public"); s != http.StatusForbidden {
			t.Errorf("Host %q: GET /public = %d, want 403", host, s)
		}
	}
	get("localhost", "2001:db8:1:2::10", "/private/a")
	if s := get("localhost", "2001:db8:1:2::ffff", "/public"); s != http.StatusForbidden {
		t.Errorf("another address of the violator's IPv6 /64: GET /public = %d, want 403", s)
	}
	if s := get("localhost", "2001:db8:1:3::10", "/public"); s != http.StatusOK {
		t.Errorf("another IPv6 /64: GET /public = %d, want 200", s)
	}
	get("localhost", "::ffff:198.51.100.5", "/private/a")
	if s := get("localhost", "198.51.100.5", "/public"); s != http.StatusForbidden {
		t.Errorf("the IPv4 address a proxy wrote IPv4-mapped: GET /public = %d, want 403", s)
	}
}

// Point 9: a forged claim that does not look like a crawler is a crawler.
// ExampleSigner has a method of proof (here its range list); a client
// outside it sends the bare product "ExampleSigner/1.0", which reads as a
// tool's header. It claimed a token the site names: it is judged by "*"
// as a crawler, denied, and recorded.
func TestE2EEvidenceForgedBareClaim(t *testing.T) {
	o := newEvOrigin(t, "User-agent: ExampleSigner\nAllow: /\n\nUser-agent: *\nDisallow: /\n")
	list := evList(t, "signer", "192.0.2.0/24")
	c := evStart(t, o, "enforce", "verify {\n\t\t\tbuiltin off\n\t\t\tip_ranges ExampleSigner "+list+"\n\t\t}")
	if !e2eEventually(func() bool { return evGet(c, "ExampleSigner/1.0", "192.0.2.7", "/page").status == http.StatusOK }) {
		t.Fatal("the real ExampleSigner was never allowed by its group")
	}
	r := evGet(c, "ExampleSigner/1.0", "198.51.100.7", "/page")
	if r.status != http.StatusForbidden {
		t.Fatalf("a forged ExampleSigner/1.0: GET /page = %d (%s), want 403", r.status, r.header.Get("X-Robots"))
	}
	recs := jdMark(c, 0, "site.test", "/private/")
	found := false
	for _, rec := range recs {
		if rec.str("uri") == "/page" && rec.str("client_ip") == "198.51.100.7" {
			found = true
			jdCheck(t, "the forged claim's record", rec, e2eRecord{"identity": "forged", "reason": "wildcard_group", "bot_class": "crawler", "automation": "claim"})
		}
	}
	if !found {
		t.Errorf("no record of the forged claim:\n%s", e2eDump(recs))
	}
}

// Point 10: a fetch written whole is a serve, whether or not the client
// stays to hear the end of the exchange. Each of 40 clients reads the
// whole robots.txt and closes at once, half or whole; each fetch is
// recorded as served.
func TestE2EEvidenceFetchWholeOnHangUp(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /private/\n"
	o := newEvOrigin(t, robots)
	c := evStart(t, o, "log", "")
	evGet(c, e2eBrowser, "198.51.100.99", "/")
	const n = 40
	for i := range n {
		conn, err := net.DialTimeout("tcp", c.addr(0), e2eTimeout)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(e2eTimeout))
		fmt.Fprintf(conn, "GET /robots.txt HTTP/1.1\r\nHost: site.test\r\nUser-Agent: %s\r\nX-Forwarded-For: 198.51.100.%d\r\n\r\n", evExampleBot, i+1)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, resp.ContentLength))
		if err != nil || string(body) != robots {
			t.Fatalf("fetch %d: %q, %v", i, body, err)
		}
		if tcp, ok := conn.(*net.TCPConn); ok && i%2 == 0 {
			tcp.CloseWrite() // a half-close first
		}
		conn.Close()
	}
	if got := len(evServed(c, n)); got != n {
		t.Errorf("%d of %d whole fetches recorded as served", got, n)
	}
}

// Point 11: names with digits or dots are linked. Each crawler fetches
// robots.txt, then asks for a disallowed path from the same address: its
// record says it was served the file, as the same client, and the served
// line names it whole.
func TestE2EEvidenceDigitNamesLinked(t *testing.T) {
	o := newEvOrigin(t, "User-agent: *\nDisallow: /private/\n")
	c := evStart(t, o, "log", "")
	for i, tc := range []struct{ ua, name string }{
		{"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "MJ12bot"},
		{"Mozilla/5.0 (compatible; 360Spider; +http://webscan.360.cn)", "360Spider"},
		{"Mozilla/5.0 (compatible) AI2Bot (+https://www.allenai.org/crawler)", "AI2Bot"},
		{"Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)", "archive.org_bot"},
		{"Mozilla/5.0 (compatible; Linux x86_64; Mail.RU_Bot/2.0; +https://help.mail.ru/webmaster/indexing/robots)", "Mail.RU_Bot"},
		{"Http10Bot/1.0", "Http10Bot"},
	} {
		ip := fmt.Sprintf("198.51.100.%d", 50+i)
		evGet(c, tc.ua, ip, "/robots.txt")
		served := evServed(c, i+1)
		if agents := fmt.Sprint(served[i]["agents"]); !strings.Contains(agents, tc.name) {
			t.Errorf("%s's fetch names %s, want it among them", tc.name, agents)
		}
		evGet(c, tc.ua, ip, "/private/x")
		recs := jdMark(c, 0, "site.test", "/private/")
		if len(recs) != 1 {
			t.Fatalf("%d records of %s, want 1:\n%s", len(recs), tc.name, e2eDump(recs))
		}
		jdCheck(t, tc.name+" after its fetch", recs[0], e2eRecord{"served_robots": true, "served_link": "client"})
	}
}

// Point 4, by signature: an agent that signs its requests is escalated by
// its token, and the escalation covers every request it signs, whatever
// its User-Agent says and wherever it comes from. Its signature is what
// proves it; another client's unsigned request under another name is not
// affected.
func TestE2EEvidenceEscalationFollowsSignature(t *testing.T) {
	key, kid, jwks := e2eGoKey(t)
	keys := filepath.Join(t.TempDir(), "agent-jwks.json")
	if err := os.WriteFile(keys, jwks, 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eStart(t, 1, e2eWBAReplaySite, map[string]string{"<KEYS>": filepath.ToSlash(keys)})
	send := func(ua, ip, path, nonce string, signed bool) e2eResponse {
		h := http.Header{}
		if signed {
			h = e2eGoSignNonce(key, c.addr(0), kid, nonce, time.Now().Unix())
		}
		h.Set("X-Forwarded-For", ip)
		return c.getWith(0, "", path, ua, h)
	}
	if r := send(e2eWBAUserAgent, "203.0.113.5", "/private/x", "bm9uY2UtYQ==", true); r.status != http.StatusForbidden {
		t.Fatalf("the verified agent's violation = %d, want 403", r.status)
	}
	for i, tc := range []struct{ ua, ip string }{
		{"OtherBot/1.0 (+https://other.example)", "203.0.113.5"},
		{e2eChrome, "198.51.100.77"},
	} {
		r := send(tc.ua, tc.ip, "/public/"+strconv.Itoa(i), "bm9uY2UtYi"+strconv.Itoa(i)+"==", true)
		if r.status != http.StatusForbidden {
			t.Errorf("the escalated agent's signed request as %.20q from %s = %d, want 403", tc.ua, tc.ip, r.status)
		}
	}
	if r := send("OtherBot/1.0 (+https://other.example)", "198.51.100.78", "/public/unsigned", "", false); r.status != http.StatusOK {
		t.Errorf("another client's unsigned request = %d, want 200", r.status)
	}
}
