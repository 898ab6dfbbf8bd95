package caddymodule

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// serveRobotsTxt passes a client's request for /robots.txt on, untouched,
// and notes which version the client was served, whole, for the
// compliance of its later requests (enforce.Judgement.NoteServed, which
// also has the store fetch the file again when the site served a version
// other than the one in force, so that a crawler that has just read a new
// file meets that file here, not the copy fetched before the change). The
// client gets exactly what it would get without the handler; its body is
// only hashed on its way, up to the size limit, and counted.
func (h *Handler) serveRobotsTxt(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, jd *enforce.Judgement) error {
	if h.settings.source != sourceUpstream && h.settings.serve != serveOrigin && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return h.serveEnforced(w, r, jd)
	}
	if !plainRobotsRequest(r) {
		return next.ServeHTTP(w, r)
	}
	tee := &hashingWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		sum: robotstxt.NewVersionHasher(cmp.Or(int(h.MaxSize), rules.DefaultMaxSize) + 1)}
	err := next.ServeHTTP(tee, r)
	version := tee.version()
	if err != nil || version == "" || !tee.whole() {
		return err
	}
	h.recordServed(jd.NoteServed(version, tee.status, time.Now()))
	return nil
}

// plainRobotsRequest reports whether a request for /robots.txt gets the
// answer every client gets, as sent and as it now is: a GET with no
// query, no range, no condition, and no header that makes some origins
// serve another path, whose 200 is the whole file as it is now.
func plainRobotsRequest(r *http.Request) bool {
	sent := sentRequest(r)
	if sent.method != http.MethodGet || sent.url.RawQuery != "" || r.Method != http.MethodGet || r.URL.RawQuery != "" {
		return false
	}
	for _, name := range [...]string{"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since",
		"X-Original-Url", "X-Rewrite-Url", "X-Forwarded-Prefix"} {
		if _, ok := r.Header[name]; ok {
			return false
		}
	}
	return true
}

// hashingWriter passes a response on to the client and hashes the first
// octets of its body, as many as a fetch reads, so that the version the
// client was served is named as the Store names the versions it fetches
// (robotstxt.VersionHash).
type hashingWriter struct {
	*caddyhttp.ResponseWriterWrapper
	status  int
	encoded bool // the site sent the body with a Content-Encoding: not the file's octets
	sum     *robotstxt.VersionHasher
	// length is the Content-Length the response announced, -1 for none;
	// written counts the octets the client's connection took, and failed
	// says a write was refused.
	length, written int64
	failed          bool
}

func (w *hashingWriter) WriteHeader(status int) {
	if status >= 200 && w.status == 0 {
		// Read now: handlers before this one (encode) may add to the
		// header once the status passes them.
		w.status = status
		w.encoded = w.Header().Get("Content-Encoding") != ""
		w.length = -1
		if n, err := strconv.ParseInt(w.Header().Get("Content-Length"), 10, 64); err == nil {
			w.length = n
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *hashingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.sum.Write(p[:n])
	w.written += int64(n)
	w.failed = w.failed || err != nil
	return n, err
}

// whole reports whether the response was written whole: every write
// accepted and flushed to the client's connection, as many octets as
// announced. A client that goes as soon as it has read the body (a
// half-close, a connection closed) was served all the same: only a body
// cut short, which a write or the flush refuses, is not a serve.
func (w *hashingWriter) whole() bool {
	if w.failed || w.length >= 0 && w.written != w.length {
		return false
	}
	return flushed(w.ResponseWriter)
}

// flushed flushes w to the client's connection, and reports whether the
// connection took it.
func flushed(w http.ResponseWriter) bool {
	err := http.NewResponseController(w).Flush()
	return err == nil || errors.Is(err, http.ErrNotSupported)
}

// ReadFrom copies through Write, so that the body is seen: the wrapper's
// own ReadFrom would hand the copy to the client's connection directly.
func (w *hashingWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{w}, r)
}

// writerOnly hides every method but Write, so that io.Copy writes.
type writerOnly struct{ io.Writer }

// version names what the client was served: the version of a whole 200,
// robotstxt.VersionUnavailable for a 4xx other than 429, "" for anything else (an
// encoded body, a redirect, a server error).
func (w *hashingWriter) version() string {
	switch {
	case w.status == http.StatusOK && !w.encoded:
		return w.sum.Name()
	case w.status >= 400 && w.status <= 499 && w.status != http.StatusTooManyRequests:
		return robotstxt.VersionUnavailable
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
// §2.3.1.4). A GET answered whole (the file, a 304 for the version the
// client holds, a 404) is noted as served.
func (h *Handler) serveEnforced(w http.ResponseWriter, r *http.Request, jd *enforce.Judgement) error {
	snap := jd.Snapshot
	version := snap.VersionName()
	rec := &statusRecorder{ResponseWriter: w}
	switch {
	case snap.Robots != nil && snap.Body != nil:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("ETag", `"`+snap.Hash+`"`)
		http.ServeContent(rec, r, "robots.txt", snap.ChangedAt, bytes.NewReader(snap.Body))
	case snap.Robots == nil && !snap.DisallowAll:
		rec.WriteHeader(http.StatusNotFound)
	default:
		w.Header().Set("Retry-After", "60")
		rec.WriteHeader(http.StatusServiceUnavailable)
	}
	whole := r.Method == http.MethodGet && !rec.failed && flushed(w)
	switch rec.status {
	case http.StatusOK:
		whole = whole && rec.written == int64(len(snap.Body))
	case http.StatusNotModified, http.StatusNotFound:
	default:
		whole = false
	}
	if whole {
		h.recordServed(jd.NoteServed(version, rec.status, time.Now()))
	}
	return nil
}

// statusRecorder notes the status a handler writes, and the octets of
// the body the connection took.
type statusRecorder struct {
	http.ResponseWriter
	status  int
	written int64
	failed  bool
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
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	w.failed = w.failed || err != nil
	return n, err
}
