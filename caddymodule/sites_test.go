package caddymodule

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// unitVarsSeen returns a handler that stores the root variable of each
// request it gets, by host.
func unitVarsSeen(seen map[string]any) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		vars := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
		seen[r.Host] = vars["root"]
		return nil
	})
}

// TestSiteVars checks what a site keeps of a client request's variables:
// a copy, from its first request, without the per-request keys; and that
// the internal request gets them.
func TestSiteVars(t *testing.T) {
	seen := map[string]any{}
	next := unitVarsSeen(seen)
	c := newSiteCache(8, new(atomic.Bool))
	first := unitClientRequest("Example.COM", map[string]any{"root": "/srv/a"})
	sr, _ := c.site(first, next)
	// The same Host again changes nothing; nor does a change to the first
	// request's variables.
	if again, _ := c.site(unitClientRequest("Example.COM", map[string]any{"root": "/srv/b"}), next); again != sr {
		t.Error("a second request for the same Host built a new site")
	}
	first.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)["root"] = "/srv/c"

	f := &upstreamFetcher{external: &unitExternal{}}
	if _, err := unitFetch(context.Background(), f, sr, "https://example.com/robots.txt", 10); err != nil {
		t.Fatal(err)
	}
	if seen["Example.COM"] != "/srv/a" { // the Host as the client sent it
		t.Errorf("root of the internal request for Example.COM = %v, want /srv/a, from the first request", seen["Example.COM"])
	}
	for _, k := range []string{caddyhttp.ClientIPVarKey, caddyhttp.TrustedProxyVarKey} {
		if _, ok := sr.vars[k]; ok {
			t.Errorf("saved vars %v hold %s, want the per-request keys left out", sr.vars, k)
		}
	}
}

// TestSiteKeys checks the Store key of each kind of request: an origin
// with the scheme the request came over, one spelling per site whatever
// the client writes in Host, and no site for a Host that names none.
func TestSiteKeys(t *testing.T) {
	plain := func(host string, port int) *http.Request {
		r := unitClientRequest(host, nil)
		r.TLS = nil
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}))
	}
	for _, tt := range []struct {
		r    *http.Request
		want string
	}{
		{unitClientRequest("Example.COM", nil), "https://example.com"},
		{unitClientRequest("example.com.", nil), "https://example.com"},
		{unitClientRequest("example.com:1", nil), "https://example.com"},
		{unitClientRequest("example.com:0009301", nil), "https://example.com"},
		{unitClientRequest("example.com:abc", nil), "https://example.com"},
		{unitClientRequest("example.com:443", nil), "https://example.com"},
		{plain("Example.COM:8080", 8080), "http://example.com:8080"},
		{plain("example.com:08080", 8080), "http://example.com:8080"},
		{plain("example.com:9999", 8080), "http://example.com"},
		{plain("example.com", 8080), "http://example.com"},
		{plain("[::1]:8080", 8080), "http://localhost:8080"},
		{plain("127.1", 8080), "http://localhost"},
		{unitClientRequest("a..b", nil), ""},
		{unitClientRequest("", nil), ""},
	} {
		sr, ok := newSiteCache(8, new(atomic.Bool)).site(tt.r, nil)
		got := ""
		if ok {
			got = sr.key
		}
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("site(%q, TLS %v) = %q, %v; want %q", tt.r.Host, tt.r.TLS != nil, got, ok, tt.want)
		}
	}
}

// TestSiteBound feeds more hosts than the cache holds: no more are kept,
// and each still gets its site.
func TestSiteBound(t *testing.T) {
	const max = 4
	c := newSiteCache(max, new(atomic.Bool))
	for i := range 3 * max {
		host := fmt.Sprintf("host%d.example", i)
		if sr, ok := c.site(unitClientRequest(host, map[string]any{"root": "/srv/" + host}), nil); !ok || sr.vars["root"] != "/srv/"+host {
			t.Fatalf("site of %s: %v, %v", host, sr, ok)
		}
		c.hosts.CleanUp()
		if got := c.hosts.EstimatedSize(); got > max {
			t.Fatalf("size = %d after %d hosts, want at most %d", got, i+1, max)
		}
	}
	if n := c.hosts.EstimatedSize(); n != max {
		t.Errorf("%d hosts kept, want %d", n, max)
	}
	// A Host too long to name a site is not kept.
	long := unitClientRequest("example.com", nil)
	long.Host = strings.Repeat("a", 300)
	if _, ok := c.site(long, nil); ok {
		t.Error("a 300-octet Host named a site")
	}
}

// TestSiteCacheKeepsHostsInUse floods a cache of 30 with one-time Hosts,
// 90 in every 100 requests, between 10 Hosts asked for once in every 100:
// once those are in use (a warm-up), their routes are never forgotten and
// built again, which would replace the route the Store keeps for the site.
func TestSiteCacheKeepsHostsInUse(t *testing.T) {
	const (
		max    = 30
		warmUp = 20 // rounds of 100 requests
		rounds = 60
	)
	c := newSiteCache(max, new(atomic.Bool))
	routes := map[string]*siteRoute{}
	rebuilt := map[string]int{}
	for round := range warmUp + rounds {
		for i := range 100 {
			host := fmt.Sprintf("once-%d-%d.example", round, i)
			if i%10 == 0 {
				host = fmt.Sprintf("hot%d.example", i/10)
			}
			sr, ok := c.site(unitClientRequest(host, nil), nil)
			if !ok || i%10 != 0 {
				continue
			}
			if prev := routes[host]; prev != sr {
				if round >= warmUp {
					rebuilt[host]++
				}
				routes[host] = sr
			}
		}
	}
	for host, n := range rebuilt {
		t.Errorf("%s: route built again %d times in %d rounds of one-time Hosts, want never", host, n, rounds)
	}
	c.hosts.CleanUp()
	if n := c.hosts.EstimatedSize(); n > max {
		t.Errorf("%d Hosts kept, want at most %d", n, max)
	}
}

// The lookup of a Host seen before: one cache read, no allocation.
func BenchmarkSiteCacheHit(b *testing.B) {
	c := newSiteCache(64, new(atomic.Bool))
	r := unitClientRequest("example.com", nil)
	c.site(r, nil)
	b.ReportAllocs()
	for b.Loop() {
		c.site(r, nil)
	}
}
