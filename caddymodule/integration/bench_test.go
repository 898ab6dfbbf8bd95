//go:build unix

package integration

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// The module's cost per request is measured on servers that Caddy itself
// loads: a Caddyfile is adapted and loaded with caddy.Load, so that routes
// are provisioned and compiled as in production. Each site is loaded three
// times, on three loopback ports: without robots_enforce (off), with it
// (on), and with a handler in its place that only calls the next one
// (noop). on − off is what the module costs a site; noop − off is what
// Caddy charges for any handler in that place (it builds a route's handler
// chain on each request); on − noop is the module's own work. Requests are
// handed over in two ways (benchVia): to the server's ServeHTTP, as
// net/http would, and to the server's routes, prepared with
// caddyhttp.PrepareRequest. Only the network is left out.
//
// The file builds on Unix only: cpu-ns/op comes from getrusage.

// benchRobots is the robots.txt of the benchmarks: a named group for the
// crawler, with an Allow carve-out, and a "*" group.
const benchRobots = `User-agent: GPTBot
Disallow: /private/
Allow: /private/press/

User-agent: *
Disallow: /private/
Disallow: /search
`

const (
	benchCrawlerUA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	benchBrowserUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)

// benchRequests are the requests measured. status is the answer with
// robots_enforce; without it, every request gets 200.
var benchRequests = []struct {
	name   string
	ua     string
	target string
	status int
}{
	// No rule of the crawler's group matches: the most common case.
	{"crawler-allowed", benchCrawlerUA, "/blog/2026/11/robots-enforce.html?ref=home", http.StatusOK},
	// An Allow line decides: the rule and its line are set too.
	{"crawler-allow-rule", benchCrawlerUA, "/private/press/2026-11.html", http.StatusOK},
	// A Disallow line decides: the 403 and the compliance record, written
	// to a file.
	{"crawler-denied", benchCrawlerUA, "/private/drafts/plan.html", http.StatusForbidden},
	{"browser", benchBrowserUA, "/blog/2026/11/robots-enforce.html?ref=home", http.StatusOK},
}

func init() {
	caddy.RegisterModule(benchNoop{})
	httpcaddyfile.RegisterHandlerDirective("bench_noop", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		h.Next()
		return benchNoop{}, nil
	})
	// Right before robots_enforce (which comes right before redir): its
	// place in a site, and robots_enforce keeps redir as its neighbour.
	httpcaddyfile.RegisterDirectiveOrder("bench_noop", httpcaddyfile.After, "timeouts")
}

// benchNoop is a handler that does nothing but call the next one: the
// benchmarks put it where robots_enforce would be, to tell what Caddy
// charges for a handler from what robots_enforce does.
type benchNoop struct{}

func (benchNoop) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.bench_noop", New: func() caddy.Module { return benchNoop{} }}
}

func (benchNoop) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return next.ServeHTTP(w, r)
}

// benchVariants are the ways each site is loaded: without robots_enforce,
// with benchNoop in its place, with robots_enforce.
var benchVariants = []string{"off", "noop", "on"}

// benchSources are the robots.txt sources measured, each with the site
// block directives that follow robots_enforce (or stand alone, without it).
var benchSources = []struct {
	name    string
	enforce string // the robots_enforce directive
	rest    string // the rest of the site
}{
	{"inline", "robots_enforce {\n\t\tsource inline <<ROBOTS\n" + benchIndent(benchRobots, "\t\t") + "\t\tROBOTS\n\t}\n", "\trespond \"ok\"\n"},
	{"upstream", "robots_enforce\n", "\trespond /robots.txt <<ROBOTS\n" + benchIndent(benchRobots, "\t\t") + "\t\tROBOTS 200\n\trespond \"ok\"\n"},
	// GPTBot verified, as a real one is: by a range list holding the
	// requests' address (httptest's 192.0.2.1).
	{"inline-verified", "robots_enforce {\n\t\tsource inline <<ROBOTS\n" + benchIndent(benchRobots, "\t\t") + "\t\tROBOTS\n" +
		"\t\tverify {\n\t\t\tbuiltin off\n\t\t\tip_ranges GPTBot <RANGES>\n\t\t}\n\t}\n", "\trespond \"ok\"\n"},
}

// BenchmarkServeHTTP measures a request for each way in (benchVia),
// source, request and variant (benchVariants). The upstream source's
// robots.txt is fetched before timing starts. Besides ns/op it reports
// cpu-ns/op, the CPU time the process spent per request (see benchCPU).
// Target: on − off at most 1 µs and no allocation for an allowed request.
func BenchmarkServeHTTP(b *testing.B) {
	servers := benchLoad(b)
	for _, via := range benchVia {
		for _, src := range benchSources {
			for _, rq := range benchRequests {
				for _, variant := range benchVariants {
					name := fmt.Sprintf("via=%s/source=%s/req=%s/robots_enforce=%s", via.name, src.name, rq.name, variant)
					b.Run(name, func(b *testing.B) {
						serve := via.serve(servers[benchKey{src.name, variant}])
						// Origin-form, as clients send it; the host is example.com.
						base := httptest.NewRequest(http.MethodGet, rq.target, nil)
						base.Header.Set("User-Agent", rq.ua)
						want := http.StatusOK
						if variant == "on" {
							want = rq.status
						}
						// Fills the caches a decision keeps (the header's
						// reading, the metric series) and, for the upstream
						// source, fetches robots.txt.
						for range 3 {
							if status := serve(base); status != want {
								b.Fatalf("GET %s: status %d, want %d", rq.target, status, want)
							}
						}
						b.ReportAllocs()
						cpu0, n := benchCPU(b), 0
						for b.Loop() {
							serve(base)
							n++
						}
						b.ReportMetric(float64(benchCPU(b)-cpu0)/float64(n), "cpu-ns/op")
					})
				}
			}
		}
	}
}

// benchVia are the two ways a request is handed to a loaded server. Each
// serves a copy of the request it is given, as Caddy's server sets fields
// of its request (its body, among others), and returns the status.
var benchVia = []struct {
	name  string
	serve func(srv *caddyhttp.Server) func(base *http.Request) int
}{
	// The server's ServeHTTP, as net/http calls it: what a site pays per
	// request, Caddy's error handling of a denial included.
	{"server", func(srv *caddyhttp.Server) func(*http.Request) int {
		return func(base *http.Request) int {
			r, w := *base, httptest.NewRecorder()
			srv.ServeHTTP(w, &r)
			return w.Code
		}
	}},
	// The server's routes alone, compiled as the server compiles them,
	// with a request prepared as the server prepares it: less of Caddy's
	// own work around the module, so less noise in the difference.
	{"route", func(srv *caddyhttp.Server) func(*http.Request) int {
		chain := srv.Routes.Compile(caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil }))
		return func(base *http.Request) int {
			r, w := *base, httptest.NewRecorder()
			err := chain.ServeHTTP(w, caddyhttp.PrepareRequest(&r, caddy.NewReplacer(), w, srv))
			if he, ok := err.(caddyhttp.HandlerError); ok {
				return he.StatusCode
			}
			return w.Code
		}
	}},
}

type benchKey struct {
	source  string
	variant string
}

// benchLoad loads one Caddy server per source and variant, each on its own
// loopback port, and returns them. They are stopped when b ends.
func benchLoad(b *testing.B) map[benchKey]*caddyhttp.Server {
	b.Helper()
	var cf strings.Builder
	// Compliance records go to a file, as in production: a denial pays
	// for its record, encoded and written (allowed requests write none).
	fmt.Fprintf(&cf, "{\n\tadmin off\n\tpersist_config off\n\tlog {\n\t\toutput discard\n\t}\n"+
		"\tlog robots {\n\t\toutput file %s\n\t\tformat json\n\t\tinclude http.handlers.robots_enforce\n\t}\n}\n",
		filepath.Join(b.TempDir(), "robots.log"))
	ports := make(map[string]benchKey)
	for _, src := range benchSources {
		for _, variant := range benchVariants {
			port := benchFreePort(b)
			ports[port] = benchKey{src.name, variant}
			fmt.Fprintf(&cf, "http://:%s {\n\tbind 127.0.0.1\n", port)
			switch variant {
			case "noop":
				cf.WriteString("\tbench_noop\n")
			case "on":
				cf.WriteString("\t" + src.enforce)
			}
			cf.WriteString(src.rest + "}\n")
		}
	}
	ranges := filepath.Join(b.TempDir(), "gptbot.json")
	if err := os.WriteFile(ranges, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	text := strings.ReplaceAll(cf.String(), "<RANGES>", filepath.ToSlash(ranges))
	cfg, warn, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), nil)
	if err != nil {
		b.Fatalf("adapting the Caddyfile: %v\n%s", err, text)
	}
	if len(warn) > 0 {
		b.Fatalf("adapting the Caddyfile: %v", warn)
	}
	if err := caddy.Load(e2eVerifyOff(b, cfg), true); err != nil {
		b.Fatalf("loading the configuration: %v", err)
	}
	b.Cleanup(func() { _ = caddy.Stop() })
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		b.Fatal(err)
	}
	servers := make(map[benchKey]*caddyhttp.Server)
	for _, srv := range app.(*caddyhttp.App).Servers {
		for _, l := range srv.Listen {
			if k, ok := ports[l[strings.LastIndex(l, ":")+1:]]; ok {
				servers[k] = srv
			}
		}
	}
	if len(servers) != len(ports) {
		b.Fatalf("found %d servers, want %d", len(servers), len(ports))
	}
	return servers
}

// benchCPU returns the CPU time the process has used, user and system, in
// nanoseconds. Reported per request beside ns/op, it leaves out the time the
// benchmark waited for a CPU on a busy machine, and keeps what the process
// spent on garbage collection on its other threads.
func benchCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchFreePort returns a loopback port free a moment ago.
func benchFreePort(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// benchIndent indents each line of s.
func benchIndent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}
