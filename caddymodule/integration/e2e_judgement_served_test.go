package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
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

	"github.com/caddyserver/caddy/v2"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// End-to-end tests of the robots.txt versions the handler notes as served
// to a client (defects 2 and 3 of the judgement; see e2e_judgement_test.go).

func init() { caddy.RegisterModule(jdSendBuffer{}) }

// jdSendBuffer is a listener wrapper for these tests: it caps the kernel's
// send buffer of each connection Caddy accepts. On loopback the kernel
// takes megabytes that a client never reads (about 3 MB measured on the
// development machine), so a server's writes of a 280 KB body all succeed
// at once, where on a network they would wait for the client and fail
// when it goes.
type jdSendBuffer struct {
	Bytes int `json:"bytes"`
}

// CaddyModule returns the Caddy module information.
func (jdSendBuffer) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.listeners.robots_enforce_test_sndbuf", New: func() caddy.Module { return new(jdSendBuffer) }}
}

// WrapListener implements caddy.ListenerWrapper.
func (w *jdSendBuffer) WrapListener(ln net.Listener) net.Listener {
	return jdSendBufferListener{Listener: ln, bytes: w.Bytes}
}

type jdSendBufferListener struct {
	net.Listener
	bytes int
}

// Accept caps the send buffer of the connection it accepts. It returns no
// error of its own, which would stop Caddy's server: a connection it
// could not cap shows in the test, as a body Caddy wrote whole (see
// jdServedSize).
func (l jdSendBufferListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if tc, ok := conn.(interface{ SetWriteBuffer(int) error }); ok && err == nil {
		tc.SetWriteBuffer(l.bytes)
	}
	return conn, err
}

// jdStartServers is e2eStart with options set on every HTTP server
// (protocols, listener_wrappers): the Caddyfile sets them in the global
// options, which e2eGlobal holds.
func jdStartServers(t *testing.T, n int, sites string, vars map[string]string, opts map[string]any) *e2eCaddy {
	t.Helper()
	c := e2eStart(t, n, "", vars)
	var doc map[string]any
	if err := json.Unmarshal(c.adapt(sites), &doc); err != nil {
		t.Fatal(err)
	}
	apps, _ := doc["apps"].(map[string]any)
	httpApp, _ := apps["http"].(map[string]any)
	servers, _ := httpApp["servers"].(map[string]any)
	if len(servers) == 0 {
		t.Fatalf("no HTTP servers in the configuration of:\n%s", c.caddyfile(sites))
	}
	for _, s := range servers {
		for k, v := range opts {
			s.(map[string]any)[k] = v
		}
	}
	cfg, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("loading the configuration: %v\n%s", err, cfg)
	}
	return c
}

// jdBigRobots is a robots.txt of about 280 KB, within the 500 KiB a
// crawler reads (RFC 9309 §2.5), that disallows /private/ to everyone.
func jdBigRobots() string {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /private/\n")
	for i := 0; b.Len() < 280<<10; i++ {
		fmt.Fprintf(&b, "# %06d: comments, as a generated file has them, to make the file large\n", i)
	}
	return b.String()
}

// jdH2CCancel sends GET path over cleartext HTTP/2 with prior knowledge to
// addr, with :authority addr, reads the response until at least n octets
// of its body arrived, cancels the stream (RST_STREAM, CANCEL), waits
// until the server has read the cancel (a PING sent after it is
// answered), and closes the connection. It returns the status and how
// many octets of the body arrived. The client's flow-control window is
// HTTP/2's initial 65,535 octets, and it never opens it further: the
// server cannot send more before the cancel.
func jdH2CCancel(addr, path, ua string, n int) (status, got int, err error) {
	conn, err := net.DialTimeout("tcp", addr, e2eTimeout)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(e2eTimeout)); err != nil {
		return 0, 0, err
	}
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		return 0, 0, err
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		return 0, 0, err
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", addr}, {":path", path}, {"user-agent", ua}} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return 0, 0, err
		}
	}
	const stream = 1
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		return 0, 0, err
	}
	ping := [8]byte{'c', 'a', 'n', 'c', 'e', 'l', 'e', 'd'}
	cancelled := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return status, got, fmt.Errorf("h2c GET %s: %w", path, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := fr.WriteSettingsAck(); err != nil {
					return status, got, err
				}
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == stream && status == 0 {
				status, _ = strconv.Atoi(f.PseudoValue("status")) // 0 when unreadable: the caller checks it
			}
		case *http2.DataFrame:
			if f.StreamID != stream || cancelled {
				continue
			}
			got += len(f.Data())
			if f.StreamEnded() {
				return status, got, fmt.Errorf("h2c GET %s: the whole body (%d octets) arrived before %d were read", path, got, n)
			}
			if got >= n {
				cancelled = true
				if err := fr.WriteRSTStream(stream, http2.ErrCodeCancel); err != nil {
					return status, got, err
				}
				if err := fr.WritePing(false, ping); err != nil {
					return status, got, err
				}
			}
		case *http2.PingFrame:
			if f.IsAck() && f.Data == ping {
				return status, got, nil
			}
			if !f.IsAck() {
				if err := fr.WritePing(true, f.Data); err != nil {
					return status, got, err
				}
			}
		case *http2.GoAwayFrame:
			return status, got, fmt.Errorf("h2c GET %s: goaway: %v", path, f.ErrCode)
		}
	}
}

// jdH1Partial sends GET path over HTTP/1.1 to addr, with Host addr, on a
// connection whose receive buffer is small, reads the response's header
// and n octets of its body, and closes the connection with the rest
// unread. It returns the status and the Content-Length.
func jdH1Partial(addr, path, ua string, n int) (status int, length int64, err error) {
	conn, err := net.DialTimeout("tcp", addr, e2eTimeout)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		return 0, 0, err
	}
	if err := conn.SetDeadline(time.Now().Add(e2eTimeout)); err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n\r\n", path, addr, ua); err != nil {
		return 0, 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodGet})
	if err != nil {
		return 0, 0, fmt.Errorf("GET %s: %w", path, err)
	}
	if _, err := io.CopyN(io.Discard, resp.Body, int64(n)); err != nil {
		return resp.StatusCode, resp.ContentLength, fmt.Errorf("GET %s: reading %d octets of the body: %w", path, n, err)
	}
	return resp.StatusCode, resp.ContentLength, nil
}

// jdServedSize waits for the access log entry of ua's GET /robots.txt and
// returns the octets of its body Caddy wrote: Caddy logs the request once
// its handlers returned, so the handler has noted what it will.
func jdServedSize(c *e2eCaddy, ua string) int {
	c.t.Helper()
	entries := c.linesWhere("access.log", "http.log.access", 1, func(e e2eRecord) bool {
		req, _ := e["request"].(map[string]any)
		headers, _ := req["headers"].(map[string]any)
		agents, _ := headers["User-Agent"].([]any)
		return req["uri"] == "/robots.txt" && len(agents) == 1 && agents[0] == ua
	})
	size, _ := entries[0]["size"].(float64)
	return int(size)
}

// Defect 2: a robots.txt version was noted as served from what was hashed,
// not what was delivered. A client that reads 16 KB of a 280 KB robots.txt
// and goes (cancelling its HTTP/2 stream, or closing its HTTP/1.1
// connection) was noted as served the version of those octets, which the
// handler does not know and so reads as allowing: its violations, and
// those of every client at its address, became grace. A version counts as
// served only when its whole body was written: after the cancelled read,
// the client's request for a path the file disallows is a violation by a
// client served no robots.txt. The file comes from the site (source
// upstream) by file_server, which goes on when a write fails (the cases
// that fail today), and by an origin behind reverse_proxy, which aborts
// the response on a failed write before anything is noted (the cases that
// keep it so).
func TestE2EJudgementServedWholeBodyOnly(t *testing.T) {
	robots := jdBigRobots()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "robots.txt"), []byte(robots), 0o644); err != nil {
		t.Fatal(err)
	}
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": e2eText(robots)})
	const site = `
http://:<PORT0> {
	bind 127.0.0.1
	log {
		output file <DIR>/access.log
		format json
	}
	robots_enforce {
		body denied
	}
	<ORIGIN>
}
`
	origins := map[string]string{
		"file_server":   "root * " + filepath.ToSlash(root) + "\n\tfile_server",
		"reverse_proxy": "reverse_proxy " + up.hostPort(),
	}
	const read = 16 << 10
	clients := map[string]func(c *e2eCaddy, ua string) error{
		"h2c stream cancelled": func(c *e2eCaddy, ua string) error {
			status, got, err := jdH2CCancel(c.addr(0), "/robots.txt", ua, read)
			if err == nil && (status != http.StatusOK || got >= len(robots)) {
				err = fmt.Errorf("status %d, %d octets of %d read before the cancel", status, got, len(robots))
			}
			return err
		},
		"http1 connection closed": func(c *e2eCaddy, ua string) error {
			status, length, err := jdH1Partial(c.addr(0), "/robots.txt", ua, read)
			if err == nil && (status != http.StatusOK || length != -1 && length != int64(len(robots))) {
				err = fmt.Errorf("status %d, Content-Length %d, want 200 and %d (or none)", status, length, len(robots))
			}
			return err
		},
	}
	for _, origin := range []string{"file_server", "reverse_proxy"} {
		for _, client := range []string{"h2c stream cancelled", "http1 connection closed"} {
			t.Run(origin+"/"+client, func(t *testing.T) {
				c := jdStartServers(t, 1, site, map[string]string{"<ORIGIN>": origins[origin]}, map[string]any{
					"protocols":         []string{"h1", "h2c"},
					"listener_wrappers": []map[string]any{{"wrapper": "robots_enforce_test_sndbuf", "bytes": 4096}},
				})
				jdMark(c, 0, "", "/private/") // the file is in force
				if err := clients[client](c, jdCrawler); err != nil {
					t.Fatalf("GET /robots.txt, read in part: %v", err)
				}
				if size := jdServedSize(c, jdCrawler); size >= len(robots) {
					t.Fatalf("Caddy wrote %d octets of the %d of robots.txt: the client's going did not stop it", size, len(robots))
				}
				if r := c.get(0, "", "/private/x", jdCrawler); r.status != http.StatusForbidden {
					t.Errorf("GET /private/x = %d, want 403", r.status)
				}
				recs := jdMark(c, 0, "", "/private/")
				if len(recs) != 1 {
					t.Fatalf("%d records of GET /private/x, want 1:\n%s", len(recs), e2eDump(recs))
				}
				jdCheck(t, "GET /private/x after reading robots.txt in part", recs[0], e2eRecord{
					"uri": "/private/x", "verdict": "deny", "compliance": "violation", "served_robots": false,
				})
			})
		}
	}
}

// Defect 3: served versions were kept by product token whatever the
// identity, so a forger's fetch of robots.txt under Googlebot's name
// became the real Googlebot's. The site's robots.txt changed within the
// day from v1 (which allows /x to Googlebot) to v2 (which does not); a
// verified Googlebot that never fetched robots.txt through this Caddy
// asks for /x: grace, since v1 is still in force. A forger then fetches
// robots.txt with Googlebot's User-Agent from an address outside
// Googlebot's list; the verified Googlebot's next request for /x is still
// grace, and the audit counts no violation of the verified Googlebot.
func TestE2EJudgementServedByIdentity(t *testing.T) {
	const v1 = "User-agent: Googlebot\nDisallow: /private/\n\nUser-agent: *\nDisallow: /private/\n"
	const v2 = "User-agent: Googlebot\nDisallow: /private/\nDisallow: /x\n\nUser-agent: *\nDisallow: /private/\n"
	var mu sync.Mutex
	robots := v1
	up := e2eNewUpstream(t, map[string]e2eRoute{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := robots
		mu.Unlock()
		e2eText(body)(w, r)
	}})
	list := filepath.Join(t.TempDir(), "googlebot.json")
	if err := os.WriteFile(list, []byte(`{"creationTime": "2026-11-20T00:00:00Z", "prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eStart(t, 1, e2eProxySite, map[string]string{
		"<UPSTREAM>": up.hostPort(), "<MODE>": "log",
		"<OPTIONS>": "verify {\n\t\t\tbuiltin off\n\t\t\tip_ranges Googlebot " + filepath.ToSlash(list) + "\n\t\t}",
	})
	const verified, forger = "192.0.2.7", "198.51.100.9"
	get := func(path, ip string) e2eResponse { return c.getWith(0, "site.test", path, e2eGooglebot, jdFrom(ip)) }
	// The list is read in the background after the first request: then
	// the forger is judged by "*".
	if !e2eEventually(func() bool { return strings.Contains(get("/public", forger).header.Get("X-Robots"), "wildcard_group") }) {
		t.Fatal("a Googlebot claim from outside its list was never judged by \"*\"")
	}
	mu.Lock()
	robots = v2
	mu.Unlock()
	e2eAfterOfferInterval()
	c.getWith(0, "site.test", "/robots.txt", e2eBrowser, jdFrom("203.0.113.200")) // makes the handler fetch v2; an address no list proves
	jdMark(c, 0, "site.test", "/private/")
	// The first request v2 denies is the verified Googlebot's first record.
	if !e2eEventually(func() bool { return strings.HasPrefix(get("/x", verified).header.Get("X-Robots"), "deny|") }) {
		t.Fatal("v2 never came into force")
	}
	want := e2eRecord{"uri": "/x", "agent": "Googlebot", "identity": "verified", "verdict": "deny", "mode": "log",
		"compliance": "grace", "served_robots": false}
	recs := jdMark(c, 0, "site.test", "/private/")
	if len(recs) != 1 {
		t.Fatalf("%d records of the verified Googlebot's GET /x, want 1:\n%s", len(recs), e2eDump(recs))
	}
	jdCheck(t, "verified Googlebot's GET /x, before the forger's fetch", recs[0], want)

	if r := get("/robots.txt", forger); r.status != http.StatusOK || r.body != v2 {
		t.Fatalf("GET /robots.txt by the forger = %d %q, want 200 and v2", r.status, r.body)
	}
	get("/x", verified)
	recs = jdMark(c, 0, "site.test", "/private/")
	if len(recs) != 1 {
		t.Fatalf("%d records of the verified Googlebot's second GET /x, want 1:\n%s", len(recs), e2eDump(recs))
	}
	jdCheck(t, "verified Googlebot's GET /x, after the forger's fetch", recs[0], want)

	found := false
	for _, row := range e2eAudit(t, c).Crawlers {
		if row.Agent == "Googlebot" && row.Identity == "verified" {
			found = true
			if row.Violations != 0 || row.Grace != 2 {
				t.Errorf("audit: verified Googlebot has %d violations and %d grace, want 0 and 2", row.Violations, row.Grace)
			}
		}
	}
	if !found {
		t.Error("audit: no row for the verified Googlebot")
	}
}
