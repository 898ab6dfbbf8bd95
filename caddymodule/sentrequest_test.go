package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// TestOriginalRequestRead holds originalRequest, which reads the request
// Caddy keeps where the context holds it, to what a copy of it reads,
// after a handler before this one rewrote the request.
func TestOriginalRequestRead(t *testing.T) {
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
	got := originalRequest(r)
	if got == r {
		t.Fatal("originalRequest returned the rewritten request")
	}
	if got.Method != copied.Method || got.RequestURI != copied.RequestURI || got.RemoteAddr != copied.RemoteAddr ||
		got.URL.String() != copied.URL.String() || got.Host != copied.Host {
		t.Errorf("read %s %s from %s (%s), the copy says %s %s from %s (%s)",
			got.Method, got.RequestURI, got.RemoteAddr, got.URL, copied.Method, copied.RequestURI, copied.RemoteAddr, copied.URL)
	}
	if got.Method != http.MethodPost || got.URL.EscapedPath() != "/a%2Fb/c" || got.URL.RawQuery != "q=1" || got.RemoteAddr != "192.0.2.1:4711" {
		t.Errorf("read %s %s?%s from %s, want the request as sent", got.Method, got.URL.EscapedPath(), got.URL.RawQuery, got.RemoteAddr)
	}

	// Without an original request, or with something else under its
	// key, the request is its own original.
	plain := httptest.NewRequest(http.MethodGet, "/x", nil)
	if originalRequest(plain) != plain {
		t.Error("a request without an original is not its own")
	}
	other := plain.WithContext(context.WithValue(plain.Context(), caddyhttp.OriginalRequestCtxKey, &http.Request{}))
	if originalRequest(other) != other {
		t.Error("a pointer under the original request's key was read as the original")
	}
	empty := plain.WithContext(context.WithValue(plain.Context(), caddyhttp.OriginalRequestCtxKey, http.Request{}))
	if originalRequest(empty) != empty {
		t.Error("an original request without a URL was read")
	}
}

// TestJudgeRequestStartsClean holds judgeRequest to writing the whole
// request it judges: a judgement comes from a pool, and what the
// previous request left in it (its site, say) must not be judged again.
func TestJudgeRequestStartsClean(t *testing.T) {
	h := newBenchHandler(t)
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	prepare := func(host string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/blog/post.html", nil)
		r.Host = host
		r.Header.Set("User-Agent", benchGPTBot)
		r.RemoteAddr = "192.0.2.1:4711"
		return caddyhttp.PrepareRequest(r, caddy.NewReplacer(), httptest.NewRecorder(), &caddyhttp.Server{})
	}
	withSite, without := prepare("example.com"), prepare("")
	for range 20 {
		jd := h.judgeRequest(withSite, benchGPTBot, next)
		if jd.Request().Site == "" {
			t.Fatal("a request for example.com was judged without its site")
		}
		jd.Release()
		jd = h.judgeRequest(without, benchGPTBot, next)
		if site := jd.Request().Site; site != "" {
			t.Fatalf("a request without a Host was judged for site %q, the previous request's", site)
		}
		jd.Release()
	}
}
