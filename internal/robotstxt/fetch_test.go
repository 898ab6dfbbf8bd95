package robotstxt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// routeFetcher answers each URL from a table; a URL not in it fails as a
// network error would.
type routeFetcher map[string]routeReply

type routeReply struct {
	resp Response
	err  error
}

func (r routeFetcher) Fetch(ctx context.Context, url string, limit int) (Response, error) {
	rep, ok := r[url]
	if !ok {
		return Response{}, fmt.Errorf("dial %s: connection refused", url)
	}
	return rep.resp, rep.err
}

// reply is a response with the given status, body and header fields given
// as name, value pairs.
func reply(code int, body string, fields ...string) routeReply {
	h := http.Header{}
	for i := 0; i+1 < len(fields); i += 2 {
		h.Add(fields[i], fields[i+1])
	}
	return routeReply{resp: Response{StatusCode: code, Header: h, Body: []byte(body)}}
}

// redirectChain routes a.example's robots.txt through n redirects to a
// file.
func redirectChain(n int) routeFetcher {
	r := routeFetcher{}
	from := "https://a.example/robots.txt"
	for i := 1; i <= n; i++ {
		to := fmt.Sprintf("https://a.example/hop%d", i)
		r[from] = reply(http.StatusFound, "", "Location", to)
		from = to
	}
	r[from] = reply(http.StatusOK, "User-agent: *\nDisallow: /\n")
	return r
}

const robotsA = "https://a.example/robots.txt"

// RFC 9309 §2.3.1: every access result, and how each response is read.
func TestFetchRobotsOutcome(t *testing.T) {
	const text = "User-agent: *\nDisallow: /private\n"
	tests := []struct {
		name      string
		routes    routeFetcher
		access    AccessResult
		status    int
		finalURL  string
		body      string // for available files
		errSubstr string
	}{
		// §2.3.1.1
		{name: "200 text", routes: routeFetcher{robotsA: reply(200, text, "Content-Type", "text/plain; charset=utf-8")},
			access: AccessAvailable, status: 200, body: text},
		{name: "200 without content type", routes: routeFetcher{robotsA: reply(200, text)},
			access: AccessAvailable, status: 200, body: text},
		{name: "204 empty", routes: routeFetcher{robotsA: reply(204, "")}, access: AccessAvailable, status: 204},
		{name: "200 octet-stream text", routes: routeFetcher{robotsA: reply(200, text, "Content-Type", "application/octet-stream")},
			access: AccessAvailable, status: 200, body: text},
		// Refused bodies count as server errors (§2.3.1.4).
		{name: "200 html doctype", routes: routeFetcher{robotsA: reply(200, "\n  <!DOCTYPE HTML><title>x</title>")},
			access: AccessUnreachable, status: 200, errSubstr: "HTML page"},
		{name: "200 html element after bom", routes: routeFetcher{robotsA: reply(200, "\xEF\xBB\xBF<Html><body>")},
			access: AccessUnreachable, status: 200, errSubstr: "HTML page"},
		{name: "200 served as text/html", routes: routeFetcher{robotsA: reply(200, text, "Content-Type", "Text/HTML; charset=utf-8")},
			access: AccessUnreachable, status: 200, errSubstr: "HTML page"},
		{name: "200 JSON by type", routes: routeFetcher{robotsA: reply(200, text, "Content-Type", "application/problem+json")},
			access: AccessUnreachable, status: 200, errSubstr: "JSON"},
		{name: "200 JSON by body", routes: routeFetcher{robotsA: reply(200, "\n {\"apps\":{\"http\":{}}}", "Content-Type", "text/plain")},
			access: AccessUnreachable, status: 200, errSubstr: "JSON"},
		{name: "200 JSON array", routes: routeFetcher{robotsA: reply(200, "[1,2]")},
			access: AccessUnreachable, status: 200, errSubstr: "JSON"},
		{name: "200 NUL octets", routes: routeFetcher{robotsA: reply(200, "User-agent: *\x00\x00")},
			access: AccessUnreachable, status: 200, errSubstr: "binary"},
		{name: "200 image", routes: routeFetcher{robotsA: reply(200, text, "Content-Type", "image/png")},
			access: AccessUnreachable, status: 200, errSubstr: "image/png"},
		{name: "200 octet-stream not UTF-8", routes: routeFetcher{robotsA: reply(200, "\xff\xfe\xfd", "Content-Type", "application/octet-stream")},
			access: AccessUnreachable, status: 200, errSubstr: "not UTF-8"},
		// §2.3.1.2
		{name: "301 to 200 same host", routes: routeFetcher{
			robotsA:                             reply(301, "", "Location", "https://a.example/robots-live.txt"),
			"https://a.example/robots-live.txt": reply(200, text)},
			access: AccessAvailable, status: 200, finalURL: "https://a.example/robots-live.txt", body: text},
		{name: "cross host", routes: routeFetcher{
			robotsA:                            reply(308, "", "Location", "https://cdn.example/a/robots.txt"),
			"https://cdn.example/a/robots.txt": reply(200, text)},
			access: AccessAvailable, status: 200, finalURL: "https://cdn.example/a/robots.txt", body: text},
		{name: "relative location", routes: routeFetcher{
			robotsA:                              reply(302, "", "Location", "files/robots.txt#top"),
			"https://a.example/files/robots.txt": reply(307, "", "Location", "../robots2.txt"),
			"https://a.example/robots2.txt":      reply(200, text)},
			access: AccessAvailable, status: 200, finalURL: "https://a.example/robots2.txt", body: text},
		{name: "5 redirects", routes: redirectChain(5), access: AccessAvailable, status: 200,
			finalURL: "https://a.example/hop5", body: "User-agent: *\nDisallow: /\n"},
		{name: "6 redirects", routes: redirectChain(6), access: AccessUnavailable, status: 302,
			finalURL: "https://a.example/hop5", errSubstr: "more than 5 redirects"},
		{name: "redirect without location", routes: routeFetcher{robotsA: reply(301, "")},
			access: AccessUnavailable, status: 301, errSubstr: "without a Location"},
		{name: "redirect to ftp", routes: routeFetcher{robotsA: reply(301, "", "Location", "ftp://a.example/robots.txt")},
			access: AccessUnavailable, status: 301, errSubstr: "not an http or https URL"},
		{name: "redirect to a server error", routes: routeFetcher{
			robotsA:                        reply(301, "", "Location", "https://b.example/robots.txt"),
			"https://b.example/robots.txt": reply(502, "")},
			access: AccessUnreachable, status: 502, finalURL: "https://b.example/robots.txt", errSubstr: "502"},
		// §2.3.1.3
		{name: "404", routes: routeFetcher{robotsA: reply(404, "<html>not found</html>")},
			access: AccessUnavailable, status: 404, errSubstr: "404 Not Found"},
		{name: "401", routes: routeFetcher{robotsA: reply(401, "")}, access: AccessUnavailable, status: 401},
		{name: "403", routes: routeFetcher{robotsA: reply(403, "")}, access: AccessUnavailable, status: 403},
		{name: "410", routes: routeFetcher{robotsA: reply(410, "")}, access: AccessUnavailable, status: 410},
		// §2.3.1.4
		{name: "429", routes: routeFetcher{robotsA: reply(429, "")}, access: AccessUnreachable, status: 429, errSubstr: "429"},
		{name: "500", routes: routeFetcher{robotsA: reply(500, "")}, access: AccessUnreachable, status: 500},
		{name: "503", routes: routeFetcher{robotsA: reply(503, "")}, access: AccessUnreachable, status: 503, errSubstr: "Service Unavailable"},
		{name: "status 600", routes: routeFetcher{robotsA: reply(600, "")}, access: AccessUnreachable, status: 600},
		{name: "network error", routes: routeFetcher{}, access: AccessUnreachable, errSubstr: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fetchRobots(t.Context(), tt.routes, robotsA, 1<<20)
			if o.access != tt.access || o.status != tt.status || o.finalURL != tt.finalURL {
				t.Errorf("fetchRobots() = %v, status %d, final %q; want %v, %d, %q",
					o.access, o.status, o.finalURL, tt.access, tt.status, tt.finalURL)
			}
			if string(o.body) != tt.body {
				t.Errorf("body = %q, want %q", o.body, tt.body)
			}
			switch {
			case tt.access == AccessAvailable && o.err != nil:
				t.Errorf("err = %v, want nil", o.err)
			case tt.access != AccessAvailable && o.err == nil:
				t.Errorf("err = nil, want an error")
			case o.err != nil && !strings.Contains(o.err.Error(), tt.errSubstr):
				t.Errorf("err = %q, want it to contain %q", o.err, tt.errSubstr)
			}
		})
	}
}

// A Fetcher that panics (a route's handler aborting on a cut body, say)
// makes the file unreachable (RFC 9309 §2.3.1.4), and the panic goes no
// further.
func TestFetchRobotsPanic(t *testing.T) {
	for _, v := range []any{http.ErrAbortHandler, "boom", nil} {
		f := FetcherFunc(func(ctx context.Context, url string, limit int) (Response, error) {
			if v == nil {
				var m map[string]int
				m["x"] = 1 // a runtime error
			}
			panic(v)
		})
		o := fetchRobots(t.Context(), f, robotsA, 100)
		var pe *FetchPanicError
		if o.access != AccessUnreachable || !errors.As(o.err, &pe) {
			t.Errorf("panic(%v): fetchRobots() = %v, %v; want unreachable with a FetchPanicError", v, o.access, o.err)
		}
	}
}

// RFC 9309 §2.3.1.4: a timeout is a network error.
func TestFetchRobotsTimeout(t *testing.T) {
	block := FetcherFunc(func(ctx context.Context, url string, limit int) (Response, error) {
		<-ctx.Done()
		return Response{}, ctx.Err()
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	o := fetchRobots(ctx, block, robotsA, 100)
	if o.access != AccessUnreachable || !errors.Is(o.err, context.DeadlineExceeded) {
		t.Errorf("fetchRobots() = %v, %v; want unreachable, deadline exceeded", o.access, o.err)
	}
}

// RFC 9309 §2.5: a body past the limit is cut, even from a fetcher that
// ignored the limit.
func TestFetchRobotsTruncated(t *testing.T) {
	tests := []struct {
		name          string
		resp          Response
		wantLen       int
		wantTruncated bool
	}{
		{"within limit", Response{StatusCode: 200, Body: []byte("0123456789")}, 10, false},
		{"marked by fetcher", Response{StatusCode: 200, Body: []byte("0123456789"), Truncated: true}, 10, true},
		{"past the limit", Response{StatusCode: 200, Body: []byte("0123456789ABCDEF")}, 10, true},
	}
	for _, tt := range tests {
		o := fetchRobots(t.Context(), routeFetcher{robotsA: {resp: tt.resp}}, robotsA, 10)
		if len(o.body) != tt.wantLen || o.truncated != tt.wantTruncated {
			t.Errorf("%s: body %d octets, truncated %v; want %d, %v", tt.name, len(o.body), o.truncated, tt.wantLen, tt.wantTruncated)
		}
	}
}

func TestValidUTF8Prefix(t *testing.T) {
	tests := []struct {
		body      string
		truncated bool
		want      bool
	}{
		{"plain", false, true},
		{"caf\xc3", true, true}, // é cut by the limit
		{"caf\xc3", false, false},
		{"\xe2\x82", true, true}, // € cut
		{"\xff", true, false},
		{"", true, true},
	}
	for _, tt := range tests {
		if got := validUTF8Prefix([]byte(tt.body), tt.truncated); got != tt.want {
			t.Errorf("validUTF8Prefix(%q, %v) = %v, want %v", tt.body, tt.truncated, got, tt.want)
		}
	}
}

// RFC 9309 §2.4 with RFC 9111 §4.2: how long a response is used.
func TestCacheFreshness(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	httpDate := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name   string
		fields []string
		want   time.Duration
	}{
		{"no cache information", nil, 24 * time.Hour},
		{"max-age shorter", []string{"Cache-Control", "public, max-age=3600"}, time.Hour},
		{"max-age upper case and quoted", []string{"Cache-Control", `MAX-AGE="600"`}, 10 * time.Minute},
		{"max-age longer than 24h", []string{"Cache-Control", "max-age=604800"}, 24 * time.Hour},
		{"max-age huge", []string{"Cache-Control", "max-age=99999999999999999999"}, 24 * time.Hour},
		{"max-age zero", []string{"Cache-Control", "max-age=0"}, time.Minute},
		{"no-store", []string{"Cache-Control", "no-store"}, time.Minute},
		{"no-cache with max-age", []string{"Cache-Control", "max-age=600", "Cache-Control", "no-cache"}, time.Minute},
		{"invalid max-age", []string{"Cache-Control", "max-age=soon"}, time.Minute},
		{"negative max-age", []string{"Cache-Control", "max-age=-5"}, time.Minute},
		{"first max-age counts", []string{"Cache-Control", "max-age=600, max-age=60"}, 10 * time.Minute},
		{"age subtracted", []string{"Cache-Control", "max-age=600", "Age", "100"}, 500 * time.Second},
		{"older than max-age", []string{"Cache-Control", "max-age=600", "Age", "900"}, time.Minute},
		{"s-maxage ignored", []string{"Cache-Control", "s-maxage=60"}, 24 * time.Hour},
		{"expires", []string{"Expires", httpDate(2 * time.Hour)}, 2 * time.Hour},
		{"expires from date", []string{"Date", httpDate(-time.Hour), "Expires", httpDate(2 * time.Hour)}, 3 * time.Hour},
		{"max-age beats expires", []string{"Expires", httpDate(2 * time.Hour), "Cache-Control", "max-age=60"}, time.Minute},
		{"expires zero", []string{"Expires", "0"}, time.Minute},
		{"expired", []string{"Expires", httpDate(-time.Hour)}, time.Minute},
	}
	for _, tt := range tests {
		h := reply(200, "", tt.fields...).resp.Header
		if got := cacheFreshness(h, now, time.Minute, 24*time.Hour); got != tt.want {
			t.Errorf("%s: cacheFreshness(%v) = %v, want %v", tt.name, h, got, tt.want)
		}
	}
}

// roundTrip adapts a function to http.RoundTripper.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHTTPFetcher(t *testing.T) {
	var gotAgent string
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		gotAgent = r.Header.Get("User-Agent")
		h := http.Header{}
		code, body := 200, "0123456789"
		switch r.URL.Path {
		case "/moved":
			code = 301
			h.Set("Location", "/robots.txt")
		case "/down":
			return nil, errors.New("connection reset")
		}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(bytes.NewReader([]byte(body)))}, nil
	})}
	f := &HTTPFetcher{Client: client, UserAgent: "robots-enforce/1"}
	tests := []struct {
		url       string
		limit     int
		code      int
		body      string
		truncated bool
		wantErr   bool
	}{
		{"https://a.example/robots.txt", 100, 200, "0123456789", false, false},
		{"https://a.example/robots.txt", 10, 200, "0123456789", false, false},
		{"https://a.example/robots.txt", 4, 200, "0123", true, false},
		{"https://a.example/moved", 100, 301, "0123456789", false, false}, // not followed
		{"https://a.example/down", 100, 0, "", false, true},
	}
	for _, tt := range tests {
		resp, err := f.Fetch(t.Context(), tt.url, tt.limit)
		if (err != nil) != tt.wantErr || resp.StatusCode != tt.code || string(resp.Body) != tt.body || resp.Truncated != tt.truncated {
			t.Errorf("Fetch(%q, %d) = %d %q truncated=%v, err %v; want %d %q %v, error %v",
				tt.url, tt.limit, resp.StatusCode, resp.Body, resp.Truncated, err, tt.code, tt.body, tt.truncated, tt.wantErr)
		}
	}
	if gotAgent != "robots-enforce/1" {
		t.Errorf("User-Agent = %q, want robots-enforce/1", gotAgent)
	}
	if client.CheckRedirect != nil {
		t.Error("Fetch changed the client's redirect policy")
	}
}
