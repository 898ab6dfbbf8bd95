package caddymodule

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// benchHandlerRobots is the robots.txt the handler benchmark enforces.
const benchHandlerRobots = "User-agent: GPTBot\nDisallow: /private/\nAllow: /private/open/\n\nUser-agent: *\nDisallow: /admin/\n"

// BenchmarkHandler measures the handler alone: ServeHTTP on a request
// Caddy has prepared, with a next handler that does nothing, so that the
// figure is what the module adds to a request (the in-process and
// whole-process figures are in docs/performance.md). The records of
// denials are encoded, as JSON, to nowhere.
//
// Allowed requests, browser or crawler, allocate nothing; a denial
// allocates 3 times, its record included (TestHandlerAllocs holds both).
// The times measured on this project's 2-core machine are in
// docs/performance.md.
func BenchmarkHandler(b *testing.B) {
	h := newBenchHandler(b)
	for _, c := range handlerCases {
		b.Run("req="+c.name, func(b *testing.B) {
			serve := handlerRequest(b, h, c)
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}

// TestHandlerAllocs holds the handler to its allocations: none for an
// allowed request, browser or verified crawler; at most 3 for a denial
// with its record.
func TestHandlerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what is put back, and a denial allocates what the pools would have held")
	}
	h := newBenchHandler(t)
	for _, c := range handlerCases {
		t.Run(c.name, func(t *testing.T) {
			serve := handlerRequest(t, h, c)
			want := 0.0
			if c.denied {
				want = 3
			}
			if got := testing.AllocsPerRun(200, serve); got > want {
				t.Errorf("%s: %.1f allocations a request, want at most %.0f", c.name, got, want)
			}
		})
	}
}

// A handlerCase is a request of BenchmarkHandler and TestHandlerAllocs,
// and whether the handler denies it.
type handlerCase struct {
	name, ua, target string
	denied           bool
}

// handlerCases are the requests of BenchmarkHandler and TestHandlerAllocs.
var handlerCases = []handlerCase{
	{"browser", benchChrome, "/private/page.html", false},
	{"crawler-allowed", benchGPTBot, "/blog/post.html", false},
	{"crawler-allow-rule", benchGPTBot, "/private/open/page.html", false},
	{"crawler-denied", benchGPTBot, "/private/page.html", true},
}

const (
	benchGPTBot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	benchChrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)

// newBenchHandler provisions the handler the benchmark runs: inline
// robots.txt, GPTBot verified by a range list holding the requests'
// address, records encoded as JSON to nowhere.
func newBenchHandler(tb testing.TB) *Handler {
	ranges := filepath.Join(tb.TempDir(), "gptbot.json")
	if err := os.WriteFile(ranges, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	h := &Handler{
		Source: &Source{Kind: "inline", Text: benchHandlerRobots},
		Verify: &Verify{Builtin: "off", IPRanges: []IPRanges{{Token: "GPTBot", Source: ranges}}},
	}
	if err := h.Provision(ctx); err != nil {
		tb.Fatalf("provisioning the handler: %v", err)
	}
	tb.Cleanup(func() { h.Cleanup() })
	h.logger = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel))
	return h
}

// handlerRequest prepares c's request as Caddy's server does, checks the
// handler's answer to it once, and returns a function that serves it
// again as a new request.
func handlerRequest(tb testing.TB, h *Handler, c handlerCase) func() {
	tb.Helper()
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, c.target, nil)
	r.Header.Set("User-Agent", c.ua)
	r.RemoteAddr = "192.0.2.1:4711"
	// As Caddy's Server.ServeHTTP does before its routes run.
	repl := caddy.NewReplacer()
	// A server without handle_errors routes, as most are.
	r = caddyhttp.PrepareRequest(r, repl, w, &caddyhttp.Server{})
	// A request's replacer and extra access log fields are new; they are
	// made so again, each time, by dropping what the handler added.
	providers := benchSliceField(repl, "providers")
	fresh := providers.Len()
	extra := benchSliceField(r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey), "fields")
	err := h.ServeHTTP(w, r, next)
	if denied := w.Code == http.StatusForbidden; err != nil || denied != c.denied {
		tb.Fatalf("GET %s by %q: status %d, error %v, want denied %v", c.target, c.ua, w.Code, err, c.denied)
	}
	return func() {
		providers.SetLen(fresh)
		extra.SetLen(0)
		_ = h.ServeHTTP(w, r, next)
	}
}

// benchSliceField returns the unexported slice field name of the struct p
// points to, settable.
func benchSliceField(p any, name string) reflect.Value {
	f := reflect.ValueOf(p).Elem().FieldByName(name)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}
