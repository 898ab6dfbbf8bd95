package integration

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// e2eText is a route answering 200 with body, as text/plain.
func e2eText(body string) e2eRoute {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, body)
	}
}

// e2eStatus is a route answering status with a short body.
func e2eStatus(status int) e2eRoute {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, http.StatusText(status), status)
	}
}

// e2eRedirect is a route answering status with Location loc.
func e2eRedirect(status int, loc string) e2eRoute {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", loc)
		w.WriteHeader(status)
	}
}

// e2eSlow is a route that answers with next after d, or not at all when
// the request is canceled first.
func e2eSlow(d time.Duration, next e2eRoute) e2eRoute {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
			next(w, r)
		case <-r.Context().Done():
		}
	}
}

// e2eNewUpstream starts an upstream with routes, closed when the test ends.
func e2eNewUpstream(t testing.TB, routes map[string]e2eRoute) *e2eUpstream {
	u := &e2eUpstream{hits: make(map[string]int), agents: make(map[string]string)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Host + " " + r.URL.Path
		u.mu.Lock()
		u.hits[key]++
		u.agents[key] = r.Header.Get("User-Agent")
		u.mu.Unlock()
		route, ok := routes[key]
		if !ok {
			route, ok = routes[r.URL.Path]
		}
		if !ok {
			route = e2eText("page " + r.URL.Path)
		}
		route(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// count returns how many requests for path on host the upstream received.
func (u *e2eUpstream) count(host, path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits[host+" "+path]
}

// agent returns the User-Agent of the last request for path on host.
func (u *e2eUpstream) agent(host, path string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.agents[host+" "+path]
}

// hostPort returns the upstream's address, for reverse_proxy.
func (u *e2eUpstream) hostPort() string {
	return strings.TrimPrefix(u.URL, "http://")
}
