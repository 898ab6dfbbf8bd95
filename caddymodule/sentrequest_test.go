package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// TestSentRequest checks that sentRequest reads the request line Caddy
// keeps for a request as the client sent it, after a handler before this
// one rewrote the request.
func TestSentRequest(t *testing.T) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/a%2Fb/c?q=1", nil)
	r.RemoteAddr = "192.0.2.1:4711"
	r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, &caddyhttp.Server{})
	// A rewrite, as uri or handle_path make one.
	r.Method, r.RequestURI, r.RemoteAddr = http.MethodGet, "/other", "198.51.100.1:1"
	r.URL.Path, r.URL.RawPath, r.URL.RawQuery = "/other", "", ""

	copied, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request)
	if !ok {
		t.Fatal("Caddy kept no original request")
	}
	want := asSent{http.MethodPost, "/a%2Fb/c?q=1", "192.0.2.1:4711", copied.URL}
	if got := sentRequest(r); got != want {
		t.Errorf("read %+v, want the request as sent, %+v", got, want)
	}
	if want.url.EscapedPath() != "/a%2Fb/c" || want.url.RawQuery != "q=1" {
		t.Errorf("Caddy kept %s?%s, want the request as sent", want.url.EscapedPath(), want.url.RawQuery)
	}
	// A pointer to the request as sent is read as Caddy's own copy is.
	pointer := r.WithContext(context.WithValue(r.Context(), caddyhttp.OriginalRequestCtxKey, &copied))
	if got := sentRequest(pointer); got != want {
		t.Errorf("read %+v through a pointer, want %+v", got, want)
	}

	// Without an original request, or with one without a URL under its
	// key, the request is its own original.
	plain := httptest.NewRequest(http.MethodGet, "/x", nil)
	own := asSent{plain.Method, plain.RequestURI, plain.RemoteAddr, plain.URL}
	for name, ctx := range map[string]context.Context{
		"none":                  plain.Context(),
		"a pointer without URL": context.WithValue(plain.Context(), caddyhttp.OriginalRequestCtxKey, &http.Request{}),
		"a value without URL":   context.WithValue(plain.Context(), caddyhttp.OriginalRequestCtxKey, http.Request{}),
		"something else":        context.WithValue(plain.Context(), caddyhttp.OriginalRequestCtxKey, "GET /"),
	} {
		if got := sentRequest(plain.WithContext(ctx)); got != own {
			t.Errorf("%s: read %+v, want the request's own %+v", name, got, own)
		}
	}
}

// TestJudgeRequestStartsClean holds judgeRequest to writing the whole
// request it judges: a judgement comes from a pool, and what the
// previous request left in it (its site, say) must not be judged again.
func TestJudgeRequestStartsClean(t *testing.T) {
	h := newBenchHandler(t)
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	prepare := func(host string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/private/page.html", nil) // denied: a record is due
		r.Host = host
		r.Header.Set("User-Agent", benchGPTBot)
		r.RemoteAddr = "192.0.2.1:4711"
		return caddyhttp.PrepareRequest(r, caddy.NewReplacer(), httptest.NewRecorder(), &caddyhttp.Server{})
	}
	withSite, without := prepare("example.com"), prepare("")
	for range 20 {
		jd := h.judgeRequest(withSite, benchGPTBot, next)
		if jd.Record == nil || jd.Record.Site == "" {
			t.Fatal("a request for example.com was judged without its site")
		}
		jd.Release()
		jd = h.judgeRequest(without, benchGPTBot, next)
		if jd.Record == nil {
			t.Fatal("no record for a denied request without a Host")
		}
		if site := jd.Record.Site; site != "" {
			t.Fatalf("a request without a Host was judged for site %q, the previous request's", site)
		}
		jd.Release()
	}
}
