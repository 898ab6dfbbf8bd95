package caddymodule

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// FuzzTargetReadings checks that the handler judges the path the servers
// behind it act on. A generated request target is read as Go's server
// reads a request line (a target it refuses gets 400: nothing to check),
// prepared as Caddy's server prepares a request, and judged by the handler
// for GPTBot under fuzzTargetRobots. Whenever the handler lets it through,
// each reading of it by a server behind the handler must be allowed by the
// same robots.txt:
//
//   - file_server: the file it opens, caddyhttp.SanitizedPathJoin of the
//     request's path, as modules/caddyhttp/fileserver/staticfiles.go does;
//   - reverse_proxy to Go's http.FileServer: reverse_proxy forwards
//     r.URL.RequestURI() of the request with its scheme and host cleared
//     and set to the upstream's (reverseproxy.go cloneRequest and
//     directRequest, httptransport.go SetScheme; net/http writes
//     RequestURI), which the origin reads with http.ReadRequest and cleans
//     with path.Clean;
//   - reverse_proxy to Python's http.server: the same forwarded target,
//     read by SimpleHTTPRequestHandler.translate_path (split at "?" then
//     "#", percent-decoded, normalised, "." and ".." dropped).
//
// Each reading keeps the query the server saw, so that a "$" rule is
// matched as RFC 9309 matches it. Disagreement with any of them is a way
// past the handler.
func FuzzTargetReadings(f *testing.F) {
	for _, s := range fuzzTargetSeeds(f) {
		f.Add(s)
	}
	h := fuzzTargetHandler(f)
	robots := rules.Parse([]byte(fuzzTargetRobots))
	f.Fuzz(func(t *testing.T, target string) {
		reached, ok := fuzzServe(t, h, target)
		if !ok {
			return
		}
		for _, rd := range fuzzServerReadings(reached) {
			if !robots.Allowed("GPTBot", rd.target) {
				t.Errorf("GET %q by GPTBot passed the handler; %s reads it as %q, which robots.txt disallows", target, rd.server, rd.target)
			}
		}
	})
}

// fuzzTargetRobots is the robots.txt of the fuzz target: a directory and,
// with an end anchor, a file type, disallowed to every crawler.
const fuzzTargetRobots = "User-agent: *\nDisallow: /private/\nDisallow: /*.secret$\n"

// fuzzSecretTargets holds the targets that TestHostileRequestTargets
// (caddymodule/integration) sends through a real Caddy; see its README.
const fuzzSecretTargets = "testdata/targets/secret.txt"

// fuzzTargetSeeds are every spelling of the bypass and request target
// tests of the integration package, and more.
func fuzzTargetSeeds(f *testing.F) []string {
	f.Helper()
	data, err := os.ReadFile(fuzzSecretTargets)
	if err != nil {
		f.Fatalf("reading the seeds: %v", err)
	}
	var seeds []string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimRight(line, "\r\n"); line != "" && !strings.HasPrefix(line, "#") {
			seeds = append(seeds, line)
		}
	}
	if len(seeds) == 0 {
		f.Fatalf("%s: no targets", fuzzSecretTargets)
	}
	return append(seeds,
		// TestE2EBypassSpellings
		"/private/x", "/%70rivate/x", "//private/x", "/./private/x", "/pub/../private/x",
		"/pub/..%2Fprivate/x", "/pub/%2e%2e/private/x", "/private%2Fx", "/private;a=b/x",
		`/pub\..\private/x`, "http://example.test/private/x", "*", "/public/x",
		// Absolute-form without "//", opaque, and raw "#".
		"x:/private/x", "http:/private/x", "x:/pub/../private/x", "x:private/x", "x:./private/x",
		"/x#/../private/x", "/robots.txt#/../private/x", "/robots.txt%23/../private/x",
		"/robots.txt?#/../private/x", "/?#/../private/x", "/#/private/x",
		// The end anchor.
		"/a.secret", "/a.secret/", "/a.secret;x", "/a.secret%3Bx", "/a%2esecret", "/a.secre%74",
		"/a.secret?", "/a.secret?x", "/a.secret#x", "/a.secret%23x", "/x/..%2Fa.secret",
		"/robots.txt#/../a.secret",
		// Plain targets.
		"/", "/robots.txt", "/robots.txt?x=1", "/pub/page.html",
	)
}

// fuzzTargetHandler provisions the handler the fuzz target judges with:
// robots.txt inline, enforcing, silent.
func fuzzTargetHandler(f *testing.F) *Handler {
	f.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	f.Cleanup(cancel)
	h := &Handler{Source: &Source{Kind: "inline", Text: fuzzTargetRobots}, Body: "denied", Verify: &Verify{Off: true}}
	if err := h.Provision(ctx); err != nil {
		f.Fatalf("provisioning the handler: %v", err)
	}
	h.logger = zap.NewNop() // a record per denial would drown the fuzzer's output
	f.Cleanup(func() { h.Cleanup() })
	return h
}

// fuzzGPTBot is the User-Agent of the fuzz target's requests: GPTBot
// named in a comment, as OpenAI's crawler sends it.
const fuzzGPTBot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"

// fuzzServe sends target, as the request line of a GET by GPTBot, through
// Go's request parsing, Caddy's request preparation and the handler, and
// returns the request the next handler got, if it got one.
func fuzzServe(t *testing.T, h *Handler, target string) (*http.Request, bool) {
	raw := "GET " + target + " HTTP/1.1\r\nHost: example.test\r\nUser-Agent: " + fuzzGPTBot + "\r\n\r\n"
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		return nil, false // Go's server answers 400
	}
	req.RemoteAddr = "192.0.2.1:4711"
	w := httptest.NewRecorder()
	// As Caddy's Server.ServeHTTP does before its routes run.
	req = caddyhttp.PrepareRequest(req, caddy.NewReplacer(), w, nil)
	var reached *http.Request
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		reached = r
		return nil
	})
	if err := h.ServeHTTP(w, req, next); err != nil && reached != nil {
		t.Fatalf("GET %q: the handler called the next one and returned %v", target, err)
	}
	return reached, reached != nil
}

// fuzzReading is a server's reading of a request: which server, and the
// path it acts on with the query it saw, as a robots.txt target.
type fuzzReading struct {
	server, target string
}

// fuzzServerReadings returns how the servers behind the handler read r.
func fuzzServerReadings(r *http.Request) []fuzzReading {
	readings := []fuzzReading{{"file_server", fuzzFileServer(r.URL)}}
	forwarded, ok := fuzzForwarded(r.URL)
	if !ok {
		return readings
	}
	if p, ok := fuzzGoOrigin(forwarded); ok {
		readings = append(readings, fuzzReading{"reverse_proxy to http.FileServer (forwarded " + forwarded + ")", p})
	}
	if p, ok := fuzzPythonOrigin(forwarded); ok {
		readings = append(readings, fuzzReading{"reverse_proxy to Python's http.server (forwarded " + forwarded + ")", p})
	}
	return readings
}

// fuzzRoot stands for a site's root directory.
const fuzzRoot = "/srv"

// fuzzFileServer returns the file file_server opens for u, with u's
// query. A trailing slash is kept: file_server then opens a directory's
// index, and redirects a request for a file.
func fuzzFileServer(u *url.URL) string {
	joined := filepath.ToSlash(caddyhttp.SanitizedPathJoin(fuzzRoot, u.Path))
	p := strings.TrimPrefix(joined, fuzzRoot)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return fuzzRobotsTarget(p, u.RawQuery, u.ForceQuery)
}

// fuzzForwarded returns the request target reverse_proxy sends upstream
// for a request with URL u, and false when net/http would refuse to send
// it.
func fuzzForwarded(u *url.URL) (string, bool) {
	out := *u
	out.Scheme, out.Host = "http", "upstream.test"
	ruri := out.RequestURI()
	for i := 0; i < len(ruri); i++ {
		if ruri[i] < ' ' || ruri[i] == 0x7f {
			return "", false // "net/http: can't write control character in Request.URL"
		}
	}
	return ruri, true
}

// fuzzGoOrigin returns the file Go's http.FileServer serves for the
// request target forwarded, with its query; false when Go refuses it.
func fuzzGoOrigin(forwarded string) (string, bool) {
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + forwarded + " HTTP/1.1\r\nHost: upstream.test\r\n\r\n")))
	if err != nil {
		return "", false
	}
	upath := req.URL.Path
	if !strings.HasPrefix(upath, "/") {
		upath = "/" + upath
	}
	p := path.Clean(upath)
	if strings.HasSuffix(upath, "/") && p != "/" {
		p += "/" // a directory's index; a file is redirected
	}
	return fuzzRobotsTarget(p, req.URL.RawQuery, req.URL.ForceQuery), true
}

// fuzzPythonSpace are the octets Python's str.split() splits a request
// line at, read as ISO-8859-1 as http.server reads it.
const fuzzPythonSpace = " \t\n\r\v\f\x1c\x1d\x1e\x1f\x85\xa0"

// fuzzPythonOrigin returns the file Python's http.server serves for the
// request target forwarded, with its query: BaseHTTPRequestHandler reduces
// a leading "//" to "/", SimpleHTTPRequestHandler.translate_path cuts the
// query at "?" and then a fragment at "#", percent-decodes, normalises,
// and drops empty, "." and ".." segments. False when Python refuses the
// request line.
func fuzzPythonOrigin(forwarded string) (string, bool) {
	if strings.ContainsAny(forwarded, fuzzPythonSpace) {
		return "", false // the request line has more than three words: 400
	}
	p := forwarded
	if strings.HasPrefix(p, "//") {
		p = "/" + strings.TrimLeft(p, "/")
	}
	var query string
	hasQuery := false
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p, query, hasQuery = p[:i], p[i+1:], true
	}
	if i := strings.IndexByte(p, '#'); i >= 0 {
		p = p[:i]
	}
	trailing := strings.HasSuffix(p, "/")
	var words []string
	for _, w := range strings.Split(path.Clean("/"+fuzzPercentDecode(p)), "/") {
		if w != "" && w != "." && w != ".." {
			words = append(words, w)
		}
	}
	resolved := "/" + strings.Join(words, "/")
	if trailing && resolved != "/" {
		resolved += "/"
	}
	return fuzzRobotsTarget(resolved, query, hasQuery), true
}

// fuzzPercentDecode decodes every valid %XX of s and keeps the rest, as
// Python's urllib.parse.unquote does.
func fuzzPercentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && fuzzIsHex(s[i+1]) && fuzzIsHex(s[i+2]) {
			b.WriteByte(fuzzUnhex(s[i+1])<<4 | fuzzUnhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func fuzzIsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func fuzzUnhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// fuzzRobotsTarget returns the robots.txt target of a decoded path p and
// a query: p escaped as a URL path (so that a "?" or "#" in a file name
// stays in the path), then the query.
func fuzzRobotsTarget(p, query string, forceQuery bool) string {
	t := (&url.URL{Path: p}).EscapedPath()
	if query != "" || forceQuery {
		t += "?" + query
	}
	return t
}
