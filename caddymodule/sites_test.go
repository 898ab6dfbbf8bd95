package caddymodule

import (
	"context"
	"net/http"
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

// TestSiteVars checks what is kept of a client request's variables:
// a copy, per host compared case-insensitively, from the first request.
func TestSiteVars(t *testing.T) {
	seen := map[string]any{}
	f, _, _ := unitUpstream(t, 8, unitVarsSeen(seen))

	first := unitClientRequest("Example.COM", map[string]any{"root": "/srv/a"})
	f.site(first)
	// Later requests for the host, in any case, change nothing.
	f.site(unitClientRequest("example.com", map[string]any{"root": "/srv/b"}))
	// Nor does a change to the first request's variables.
	first.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)["root"] = "/srv/c"

	if got := f.sitesSize.Load(); got != 1 {
		t.Errorf("sitesSize = %d after one host, want 1", got)
	}
	for _, url := range []string{"https://example.com/robots.txt", "https://other.example/robots.txt"} {
		if _, err := f.Fetch(context.Background(), url, 10); err != nil {
			t.Fatal(err)
		}
	}
	if seen["example.com"] != "/srv/a" {
		t.Errorf("root of the internal request for example.com = %v, want /srv/a, from the first request", seen["example.com"])
	}
	if root, ok := seen["other.example"]; !ok || root != nil {
		t.Errorf("root of the internal request for other.example = %v (called %v), want none", root, ok)
	}

	saved, _ := f.sites[1].Load("example.com")
	for _, k := range []string{caddyhttp.ClientIPVarKey, caddyhttp.TrustedProxyVarKey} {
		if _, ok := saved.(*siteEntry).vars[k]; ok {
			t.Errorf("saved vars %v hold %s, want the per-request keys left out", saved, k)
		}
	}
}

// TestSiteKeys checks the Store key of each kind of request, and that a
// host served over both schemes keeps each scheme's variables apart.
func TestSiteKeys(t *testing.T) {
	seen := map[string]any{}
	f, _, _ := unitUpstream(t, 8, unitVarsSeen(seen))
	plain := unitClientRequest("Example.COM:8080", map[string]any{"root": "/srv/plain"})
	plain.TLS = nil
	for _, c := range []struct {
		r    *http.Request
		want string
	}{
		{unitClientRequest("Example.COM", map[string]any{"root": "/srv/tls"}), "example.com"},
		{plain, "http://example.com:8080"},
		{plain, "http://example.com:8080"}, // from the table, the second time
	} {
		if got := f.site(c.r); got != c.want {
			t.Errorf("site(%s, TLS %v) = %q, want %q", c.r.Host, c.r.TLS != nil, got, c.want)
		}
	}
	for _, u := range []string{"https://example.com/robots.txt", "http://example.com:8080/robots.txt"} {
		if _, err := f.Fetch(context.Background(), u, 10); err != nil {
			t.Fatal(err)
		}
	}
	if seen["example.com"] != "/srv/tls" || seen["example.com:8080"] != "/srv/plain" {
		t.Errorf("roots of the internal requests = %v, want /srv/tls for example.com and /srv/plain for example.com:8080", seen)
	}
}

// TestSiteBound feeds more hosts than maxSites: no more are kept.
func TestSiteBound(t *testing.T) {
	const maxSites = 4
	f, _, _ := unitUpstream(t, maxSites, unitVarsSeen(map[string]any{}))
	for i := range 3 * maxSites {
		host := unitAgentName(i) + ".example"
		f.site(unitClientRequest(host, map[string]any{"root": "/srv/" + host}))
		if got := f.sitesSize.Load(); got > maxSites {
			t.Fatalf("sitesSize = %d after %d hosts, want at most %d", got, i+1, maxSites)
		}
	}
	n := 0
	for i := range f.sites {
		f.sites[i].Range(func(_, _ any) bool { n++; return true })
	}
	if n != maxSites {
		t.Errorf("%d hosts' vars kept, want %d", n, maxSites)
	}
}

// TestSiteAfterBound checks that a host first seen after maxSites
// others still gets its variables: the Store tracks the hosts used most
// recently, so the vars must follow them, not the first ones ever seen.
func TestSiteAfterBound(t *testing.T) {
	const maxSites = 2
	seen := map[string]any{}
	f, _, _ := unitUpstream(t, maxSites, unitVarsSeen(seen))
	for _, host := range []string{"junk1.example", "junk2.example", "example.com"} {
		f.site(unitClientRequest(host, map[string]any{"root": "/srv/" + host}))
	}
	if _, err := f.Fetch(context.Background(), "https://example.com/robots.txt", 10); err != nil {
		t.Fatal(err)
	}
	if seen["example.com"] != "/srv/example.com" {
		t.Errorf("root of the internal request for example.com = %v, want /srv/example.com", seen["example.com"])
	}
}
