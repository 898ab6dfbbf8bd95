package caddymodule

import (
	"cmp"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// serveRobotsTxt passes a client's request for /robots.txt on, untouched.
// With the upstream source, the site's answer to a plain GET is also
// offered to the Store (see enforce.Store.Offer): a crawler that has just
// read a changed file then meets that file here, not the copy fetched
// before the change. The client gets exactly what it would get without
// the handler; only a copy of the body is kept, up to the size limit.
func (h *Handler) serveRobotsTxt(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.offers == nil {
		return next.ServeHTTP(w, r)
	}
	if sent := sentRequestOf(r); !plainRobotsRequest(&sent, r) {
		return next.ServeHTTP(w, r)
	}
	key := h.upstream.site(r)
	if !h.offers.Offerable(key) {
		return next.ServeHTTP(w, r)
	}
	tee := &teeWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		boundedBody: boundedBody{limit: cmp.Or(h.MaxSize, rules.DefaultMaxSize) + 1}}
	err := next.ServeHTTP(tee, r)
	if err == nil && tee.status == http.StatusOK && !tee.encoded {
		h.offers.Offer(key, enforce.Response{StatusCode: tee.status, Header: tee.header, Body: tee.body, Truncated: tee.truncated})
	}
	return err
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

// teeWriter passes a response on to the client and keeps its status, its
// header as the site set it, and up to limit octets of its body.
type teeWriter struct {
	*caddyhttp.ResponseWriterWrapper
	status  int
	header  http.Header // a copy, taken when the status is written
	encoded bool        // the site sent the body with a Content-Encoding
	boundedBody
}

func (w *teeWriter) WriteHeader(status int) {
	if status >= 200 && w.status == 0 {
		// Taken now: handlers before this one (encode) may add to the
		// header once the status passes them.
		w.status, w.header = status, w.Header().Clone()
		w.encoded = w.header.Get("Content-Encoding") != ""
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *teeWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.keep(p)
	return w.ResponseWriter.Write(p)
}

// ReadFrom copies through Write, so that the body is seen: the wrapper's
// own ReadFrom would hand the copy to the client's connection directly.
func (w *teeWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{w}, r)
}

// writerOnly hides every method but Write, so that io.Copy writes.
type writerOnly struct{ io.Writer }
