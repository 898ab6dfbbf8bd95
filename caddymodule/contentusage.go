package caddymodule

import (
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// AIPREF usage preferences (draft-ietf-aipref-attach-05, with the
// vocabulary of draft-ietf-aipref-vocab-08, and Content Signals mapped
// onto it): robots.txt says whether a crawler may fetch a path; a
// Content-Usage rule or a Content-Signal line says how what it fetches
// may be used. The handler carries the preference that applies to each
// response as the Content-Usage header field (attach-05 §2): the named
// group's for a named crawler, the "*" group's for everyone else. The
// preference is about the content, so browsers get it too.

// contentUsageHeader is the response header field of a usage preference.
const contentUsageHeader = "Content-Usage"

// usageWriter adds the Content-Usage field to a response as its status is
// written: in the default mode ("header") only when the origin set none,
// with "override" in place of the origin's.
type usageWriter struct {
	*caddyhttp.ResponseWriterWrapper
	value    string
	override bool
	written  bool
}

func (h *Handler) withUsage(w http.ResponseWriter, value string) http.ResponseWriter {
	return &usageWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, value: value, override: h.settings.usage == usageOverride}
}

func (w *usageWriter) WriteHeader(status int) {
	if !w.written && status >= 200 {
		w.written = true
		if hdr := w.Header(); w.override || len(hdr[contentUsageHeader]) == 0 {
			hdr.Set(contentUsageHeader, w.value)
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *usageWriter) Write(p []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom writes the header first: the wrapper's ReadFrom would hand the
// body to the connection without it.
func (w *usageWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriterWrapper.ReadFrom(r)
}
