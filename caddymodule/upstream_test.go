package caddymodule

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// unitExternal is a fake network fetcher: it records the URLs it is asked
// for and answers each with a robots.txt.
type unitExternal struct {
	mu   sync.Mutex
	urls []string
}

func (e *unitExternal) Fetch(ctx context.Context, url string, limit int) (robotstxt.Response, error) {
	e.mu.Lock()
	e.urls = append(e.urls, url)
	e.mu.Unlock()
	return robotstxt.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: []byte("User-agent: *\nDisallow: /external/\n")}, nil
}

func (e *unitExternal) fetched() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.urls...)
}

// unitUpstream returns an upstreamFetcher with a fake network fetcher, and
// a site as a client's request for example.com gives it, whose route is
// next.
func unitUpstream(t *testing.T, next caddyhttp.Handler) (*upstreamFetcher, *unitExternal, *siteRoute) {
	t.Helper()
	ext := &unitExternal{}
	f := &upstreamFetcher{external: ext, logger: zap.NewNop}
	return f, ext, unitSite(t, next, unitClientRequest("example.com", map[string]any{"root": "/srv/example.com", "site": "demo"}))
}

// unitSite returns the site of r, as a handler whose next handler is next
// finds it.
func unitSite(t *testing.T, next caddyhttp.Handler, r *http.Request) *siteRoute {
	t.Helper()
	sr, ok := newSiteCache(8, new(atomic.Bool)).site(r, next)
	if !ok {
		t.Fatalf("no site for Host %q", r.Host)
	}
	return sr
}

// unitFetch fetches url as a Store's fetch of sr's site does.
func unitFetch(ctx context.Context, f *upstreamFetcher, sr *siteRoute, url string, limit int) (robotstxt.Response, error) {
	return siteFetcher{f, sr}.Fetch(ctx, url, limit)
}

// unitClientRequest is a client's request for host as the handlers before
// robots_enforce leave it, over HTTPS on port 443: with variables, among
// them root, and the server it came to.
func unitClientRequest(host string, vars map[string]any) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "https://example.com/page", nil)
	r.Host = host
	all := map[string]any{caddyhttp.ClientIPVarKey: "203.0.113.7", caddyhttp.TrustedProxyVarKey: true}
	for k, v := range vars {
		all[k] = v
	}
	ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, all)
	ctx = context.WithValue(ctx, caddyhttp.ServerCtxKey, unitServer)
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 443})
	return r.WithContext(ctx)
}

// unitServer is the server of unitClientRequest's requests.
var unitServer = &caddyhttp.Server{}

// TestUpstreamFetchRequest checks the internal request the rest of the
// route receives.
func TestUpstreamFetchRequest(t *testing.T) {
	var checked bool
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		checked = true
		for _, c := range []struct{ what, got, want string }{
			{"method", r.Method, http.MethodGet},
			{"Host", r.Host, "example.com"},
			{"RequestURI", r.RequestURI, "/robots.txt"},
			{"URL.Path", r.URL.Path, "/robots.txt"},
			{"User-Agent", r.Header.Get("User-Agent"), robotstxt.FetchUserAgent},
			{"RemoteAddr", r.RemoteAddr, "127.0.0.1:0"},
		} {
			if c.got != c.want {
				t.Errorf("internal request %s = %q, want %q", c.what, c.got, c.want)
			}
		}
		if r.Context().Value(internalKey{}) != true {
			t.Error("internal request not marked internal in its context")
		}
		repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		if !ok {
			t.Fatal("internal request has no Replacer")
		}
		if got := repl.ReplaceAll("{http.request.host}{http.request.uri}", ""); got != "example.com/robots.txt" {
			t.Errorf("placeholders of the internal request = %q, want %q", got, "example.com/robots.txt")
		}
		if got := r.Context().Value(caddyhttp.ServerCtxKey); got != unitServer {
			t.Errorf("internal request server = %v, want the client request's", got)
		}
		vars, ok := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
		if !ok {
			t.Fatal("internal request has no vars")
		}
		if vars["root"] != "/srv/example.com" || vars["site"] != "demo" {
			t.Errorf("internal request vars %v, want root /srv/example.com and site demo", vars)
		}
		if vars[caddyhttp.ClientIPVarKey] == "203.0.113.7" {
			t.Errorf("internal request vars %v: the client's IP was copied", vars)
		}
		if _, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); !ok {
			t.Error("internal request has no original request")
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
		return nil
	})
	f, ext, sr := unitUpstream(t, next)
	resp, err := unitFetch(context.Background(), f, sr, "https://example.com/robots.txt", 1000)
	if err != nil {
		t.Fatalf("Fetch = %v", err)
	}
	if !checked {
		t.Fatal("the next handler was not called")
	}
	if resp.StatusCode != http.StatusOK || string(resp.Body) != "User-agent: *\nDisallow: /private/\n" || resp.Truncated ||
		resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("Fetch = %+v, want the handler's 200 text/plain answer", resp)
	}
	if got := ext.fetched(); len(got) != 0 {
		t.Errorf("network fetches %q, want none", got)
	}
}

// unitWrites is a next handler that answers with status, unless 0, and body.
func unitWrites(status int, body string) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if status != 0 {
			w.WriteHeader(status)
		}
		if body != "" {
			_, err := w.Write([]byte(body))
			return err
		}
		return nil
	})
}

// unitFails is a next handler that returns err.
func unitFails(err error) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return err })
}

// TestUpstreamFetchResponse checks how the next handler's answer becomes
// the Response.
func TestUpstreamFetchResponse(t *testing.T) {
	for _, tt := range []struct {
		name          string
		next          caddyhttp.Handler
		limit         int
		wantStatus    int
		wantBody      string
		wantTruncated bool
	}{
		{"body only", unitWrites(0, "ok"), 10, http.StatusOK, "ok", false},
		{"nothing written", unitWrites(0, ""), 10, http.StatusOK, "", false},
		{"body past the limit", unitWrites(0, "0123456789"), 4, http.StatusOK, "0123", true},
		{"status written", unitWrites(http.StatusServiceUnavailable, ""), 10, http.StatusServiceUnavailable, "", false},
		{"status and body", unitWrites(http.StatusNotFound, "gone"), 10, http.StatusNotFound, "gone", false},
		{"handler error with a status, as file_server's 404",
			unitFails(caddyhttp.Error(http.StatusNotFound, errors.New("no such file"))), 10, http.StatusNotFound, "", false},
		{"handler error with a status, as reverse_proxy's 502",
			unitFails(caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp: connection refused"))), 10, http.StatusBadGateway, "", false},
		{"plain handler error", unitFails(errors.New("boom")), 10, http.StatusInternalServerError, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, _, sr := unitUpstream(t, tt.next)
			resp, err := unitFetch(context.Background(), f, sr, "https://example.com/robots.txt", tt.limit)
			if err != nil {
				t.Fatalf("Fetch = %v, want a response", err)
			}
			if resp.StatusCode != tt.wantStatus || string(resp.Body) != tt.wantBody || resp.Truncated != tt.wantTruncated {
				t.Errorf("Fetch = status %d, body %q, truncated %v; want %d, %q, %v",
					resp.StatusCode, resp.Body, resp.Truncated, tt.wantStatus, tt.wantBody, tt.wantTruncated)
			}
		})
	}
}

// TestUpstreamFetchCanceled checks that a handler failing because the fetch
// was canceled gives no response but the context's error.
func TestUpstreamFetchCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, _, sr := unitUpstream(t, unitFails(ctx.Err()))
	if _, err := unitFetch(ctx, f, sr, "https://example.com/robots.txt", 10); !errors.Is(err, context.Canceled) {
		t.Errorf("Fetch with a canceled context = %v, want %v", err, context.Canceled)
	}
}

// TestUpstreamFetchWithoutRoute checks that a fetch with no route for the
// site, or the route of a replaced configuration, fails: never over the
// network, nor through a route without the site's variables, whose 404
// would read as "no rules".
func TestUpstreamFetchWithoutRoute(t *testing.T) {
	f, ext, sr := unitUpstream(t, unitWrites(http.StatusNotFound, ""))
	if _, err := f.Fetch(context.Background(), "https://example.com/robots.txt", 100); err == nil {
		t.Error("Fetch without a route = nil error, want one")
	}
	sr.retired.Store(true)
	if _, err := unitFetch(context.Background(), f, sr, "https://example.com/robots.txt", 100); !errors.Is(err, errRouteRetired) {
		t.Errorf("Fetch through a retired route = %v, want %v", err, errRouteRetired)
	}
	if got := ext.fetched(); len(got) != 0 {
		t.Errorf("network fetches %q, want none", got)
	}
}

// unitRedirectingSite is a next handler for example.com whose robots.txt
// redirects to location; /robots-v2.txt answers with rules. It counts the
// paths it is asked for.
type unitRedirectingSite struct {
	location string
	mu       sync.Mutex
	paths    []string
}

func (s *unitRedirectingSite) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	s.paths = append(s.paths, r.Host+r.RequestURI)
	s.mu.Unlock()
	switch r.URL.Path {
	case "/robots.txt":
		w.Header().Set("Location", s.location)
		w.WriteHeader(http.StatusMovedPermanently)
	case "/robots-v2.txt":
		w.Write([]byte("User-agent: *\nDisallow: /internal/\n"))
	default:
		return caddyhttp.Error(http.StatusNotFound, nil)
	}
	return nil
}

// TestUpstreamFetchRedirects runs the fetcher under an robotstxt.Store, which
// follows redirects and tells the fetcher, by robotstxt.FetchOrigin, where the
// access started: the only way to give a fetch an origin. A redirect within
// the site stays on the route; one to another host goes over the network
// (RFC 9309 §2.3.1.2).
func TestUpstreamFetchRedirects(t *testing.T) {
	for _, tt := range []struct {
		name         string
		location     string
		wantInternal []string // host and URI of the internal requests
		wantExternal []string // URLs fetched over the network
		wantFinalURL string
		wantRule     string // a path the rules disallow
	}{
		{
			name:         "same host",
			location:     "/robots-v2.txt",
			wantInternal: []string{"example.com/robots.txt", "example.com/robots-v2.txt"},
			wantExternal: nil,
			wantFinalURL: "https://example.com/robots-v2.txt",
			wantRule:     "/internal/",
		},
		{
			name:         "same host, absolute URL",
			location:     "https://example.com/robots-v2.txt",
			wantInternal: []string{"example.com/robots.txt", "example.com/robots-v2.txt"},
			wantExternal: nil,
			wantFinalURL: "https://example.com/robots-v2.txt",
			wantRule:     "/internal/",
		},
		{
			name:         "same host, other case",
			location:     "https://EXAMPLE.com/robots-v2.txt",
			wantInternal: []string{"example.com/robots.txt", "EXAMPLE.com/robots-v2.txt"},
			wantExternal: nil,
			wantFinalURL: "https://EXAMPLE.com/robots-v2.txt",
			wantRule:     "/internal/",
		},
		{
			name:         "another host",
			location:     "https://cdn.example.net/robots.txt",
			wantInternal: []string{"example.com/robots.txt"},
			wantExternal: []string{"https://cdn.example.net/robots.txt"},
			wantFinalURL: "https://cdn.example.net/robots.txt",
			wantRule:     "/external/",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &unitRedirectingSite{location: tt.location}
			f, ext, sr := unitUpstream(t, site)
			store, err := robotstxt.NewStore(robotstxt.StoreConfig{Fetcher: f})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })

			snap := store.SnapshotWith(context.Background(), sr.key, siteFetcher{f, sr})
			if snap.Robots == nil {
				t.Fatalf("snapshot %+v: no rules", snap)
			}
			if snap.FinalURL != tt.wantFinalURL {
				t.Errorf("FinalURL = %q, want %q", snap.FinalURL, tt.wantFinalURL)
			}
			if snap.Robots.Allowed("somebot", tt.wantRule+"x") {
				t.Errorf("rules allow %sx, want the rules of %s", tt.wantRule, tt.wantFinalURL)
			}
			site.mu.Lock()
			internal := strings.Join(site.paths, " ")
			site.mu.Unlock()
			if want := strings.Join(tt.wantInternal, " "); internal != want {
				t.Errorf("internal requests %q, want %q", internal, want)
			}
			if got, want := strings.Join(ext.fetched(), " "), strings.Join(tt.wantExternal, " "); got != want {
				t.Errorf("network fetches %q, want %q", got, want)
			}
		})
	}
}

// TestUpstreamFetchSurvivesTheRoute checks what a fetch makes of a route
// that panics (reverse_proxy aborts with http.ErrAbortHandler when an
// origin cuts or drips a body), writes without end, or outlives the
// fetch's time: never a panic out of Fetch, a body read up to the limit
// only, and an error (an unreachable file) for anything but a body cut by
// the limit.
func TestUpstreamFetchSurvivesTheRoute(t *testing.T) {
	endless := func(written *atomic.Int64) caddyhttp.Handler {
		return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			chunk := []byte("Disallow: /x\n")
			for {
				if _, err := w.Write(chunk); err != nil {
					panic(http.ErrAbortHandler) // as reverse_proxy does on a failed copy
				}
				if written.Add(int64(len(chunk))) > 4<<20 {
					return nil
				}
			}
		})
	}
	var written atomic.Int64
	for _, tt := range []struct {
		name      string
		next      caddyhttp.Handler
		timeout   time.Duration
		wantErr   string // substring; "" for a response
		wantTrunc bool
	}{
		{"abort", caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { panic(http.ErrAbortHandler) }), 0, "aborted", false},
		{"other panic", caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { panic("boom") }), 0, "boom", false},
		{"endless body", endless(&written), 0, "", true},
		{"drip past the timeout", caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			for {
				if _, err := w.Write([]byte("#")); err != nil {
					panic(http.ErrAbortHandler)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}), 50 * time.Millisecond, "deadline exceeded", false},
		{"silent past the timeout", caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			<-r.Context().Done()
			return r.Context().Err()
		}), 50 * time.Millisecond, "deadline exceeded", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, _, sr := unitUpstream(t, tt.next)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			resp, err := unitFetch(ctx, f, sr, "https://example.com/robots.txt", 1000)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Fetch = %v, want a response", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Fetch = %+v, %v; want an error with %q", resp, err, tt.wantErr)
			}
			if resp.Truncated != tt.wantTrunc || len(resp.Body) > 1000 {
				t.Errorf("Fetch: %d octets, truncated %v; want at most 1000, truncated %v", len(resp.Body), resp.Truncated, tt.wantTrunc)
			}
		})
	}
	if n := written.Load(); n > 2000 {
		t.Errorf("the endless route wrote %d octets before it was stopped, want about the limit", n)
	}
}
