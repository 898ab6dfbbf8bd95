package caddymodule

import (
	"bytes"
	"cmp"
	"io"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// serveRobotsTxt passes a client's request for /robots.txt on, untouched,
// and notes which version the client was served, for the compliance of
// its later requests. With the upstream source, a version other than the
// one in force is a hint that the file changed (enforce.Store.Hint): the
// handler fetches it again with its own request, so that a crawler that
// has just read a new file meets that file here, not the copy fetched
// before the change. The client gets exactly what it would get without
// the handler; its body is only hashed on its way, up to the size limit.
func (h *Handler) serveRobotsTxt(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.sites == nil && h.ServeRobots != "origin" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return h.serveEnforced(w, r)
	}
	sent := sentRequestOf(r)
	key, ok := "", true
	if h.sites != nil {
		var sr *siteRoute
		if sr, ok = h.sites.site(r, next); ok {
			key = sr.key
		}
	} else {
		key = siteOfRequest(r)
	}
	if !ok || !plainRobotsRequest(&sent, r) {
		return next.ServeHTTP(w, r)
	}
	tee := &hashingWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		sum: enforce.NewVersionHasher(cmp.Or(int(h.MaxSize), rules.DefaultMaxSize) + 1)}
	err := next.ServeHTTP(tee, r)
	version := tee.version()
	if err != nil || version == "" {
		return err
	}
	now := time.Now()
	tokens, ip := servedTokens(userAgent(r.Header)), clientIP(r)
	h.state.served.Note(key, tokens, ip, version, now)
	h.recordServed(r, key, tokens, ip, version, tee.status)
	if h.state.store != nil && h.sites != nil && version != enforce.VersionUnavailable {
		h.state.store.Hint(key, version)
	}
	return nil
}

// servedTokens returns the product tokens a robots.txt fetch is noted
// under: the header's own, not the generic browser words.
func servedTokens(ua string) []string {
	toks := enforce.Tokenize(ua)
	var out []string
	for i := 0; i < toks.Len() && !toks.Generic(i); i++ {
		out = append(out, toks.At(i))
	}
	return out
}

// plainRobotsRequest reports whether a request for /robots.txt, sent as
// sent and now r, gets the answer every client gets: a GET with no query,
// no range and no condition, whose 200 is the whole file as it is now.
func plainRobotsRequest(sent *sentRequest, r *http.Request) bool {
	if sent.method != http.MethodGet || sent.rawQuery != "" || r.Method != http.MethodGet || r.URL.RawQuery != "" {
		return false
	}
	for _, name := range [...]string{"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if _, ok := r.Header[name]; ok {
			return false
		}
	}
	return true
}

// hashingWriter passes a response on to the client and hashes the first
// octets of its body, as many as a fetch reads, so that the version the
// client was served is named as the Store names the versions it fetches
// (enforce.VersionHash).
type hashingWriter struct {
	*caddyhttp.ResponseWriterWrapper
	status  int
	encoded bool // the site sent the body with a Content-Encoding: not the file's octets
	sum     *enforce.VersionHasher
}

func (w *hashingWriter) WriteHeader(status int) {
	if status >= 200 && w.status == 0 {
		// Read now: handlers before this one (encode) may add to the
		// header once the status passes them.
		w.status = status
		w.encoded = w.Header().Get("Content-Encoding") != ""
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *hashingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.sum.Write(p)
	return w.ResponseWriter.Write(p)
}

// ReadFrom copies through Write, so that the body is seen: the wrapper's
// own ReadFrom would hand the copy to the client's connection directly.
func (w *hashingWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{w}, r)
}

// writerOnly hides every method but Write, so that io.Copy writes.
type writerOnly struct{ io.Writer }

// version names what the client was served: the version of a whole 200,
// enforce.VersionUnavailable for a 4xx other than 429, "" for anything else (an
// encoded body, a redirect, a server error).
func (w *hashingWriter) version() string {
	switch {
	case w.status == http.StatusOK && !w.encoded:
		return w.sum.Name()
	case w.status >= 400 && w.status <= 499 && w.status != http.StatusTooManyRequests:
		return enforce.VersionUnavailable
	}
	return ""
}

// serveEnforced answers GET and HEAD /robots.txt with the file the handler
// enforces (the file, inline and url sources), so that crawlers can read
// the rules they are held to: a site without a robots.txt of its own would
// otherwise answer 404, which RFC 9309 §2.3.1.3 makes "everything
// allowed". The octets are exactly those enforced, as text/plain with an
// ETag naming the version and Last-Modified, and conditional and range
// requests are answered as for any file. A source with no file answers as
// the file's state reads: 404 when there is none (everything allowed), 503
// while it is unreachable with no copy (everything disallowed, RFC 9309
// §2.3.1.4).
func (h *Handler) serveEnforced(w http.ResponseWriter, r *http.Request) error {
	snap := h.state.source.Snapshot(r.Context(), h.fixed)
	version := snap.VersionName()
	status := http.StatusOK
	switch {
	case snap.Robots != nil && snap.Body != nil:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("ETag", `"`+snap.Hash+`"`)
		rec := &statusRecorder{ResponseWriter: w}
		http.ServeContent(rec, r, "robots.txt", snap.ChangedAt, bytes.NewReader(snap.Body))
		status = rec.status
	case snap.Robots == nil && !snap.DisallowAll:
		status = http.StatusNotFound
		w.WriteHeader(status)
	default:
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(status)
	}
	if status == http.StatusOK || status == http.StatusNotModified || status == http.StatusPartialContent || status == http.StatusNotFound {
		site, tokens, ip := siteOfRequest(r), servedTokens(userAgent(r.Header)), clientIP(r)
		h.state.served.Note(site, tokens, ip, version, time.Now())
		h.recordServed(r, site, tokens, ip, version, status)
	}
	return nil
}

// statusRecorder notes the status a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}
