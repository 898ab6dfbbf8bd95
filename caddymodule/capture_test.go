package caddymodule

import (
	"net/http"
	"testing"
)

// The capturing writer of the internal robots.txt request.

func TestCapturingWriterBody(t *testing.T) {
	for _, tt := range []struct {
		name          string
		limit         int
		writes        []string
		wantBody      string
		wantTruncated bool
	}{
		{"empty", 10, nil, "", false},
		{"under the limit", 10, []string{"User-agent"}, "User-agent", false},
		{"exactly the limit in pieces", 10, []string{"User-", "agent"}, "User-agent", false},
		{"one write past the limit", 10, []string{"User-agent: *"}, "User-agent", true},
		{"a later write past the limit", 10, []string{"User", "-agent: *"}, "User-agent", true},
		{"writes after the limit", 4, []string{"User", "-agent", ": *"}, "User", true},
		{"empty write at the limit", 4, []string{"User", ""}, "User", false},
		{"zero limit", 0, []string{"x"}, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &capturingWriter{ctx: t.Context(), header: make(http.Header), boundedBody: boundedBody{limit: tt.limit}}
			for _, s := range tt.writes {
				n, err := w.Write([]byte(s))
				// Past the limit a write fails, so that the handler
				// writing stops; before it, a write is taken whole.
				if w.truncated != (err != nil) || err == nil && n != len(s) {
					t.Errorf("Write(%q) = %d, %v with truncated %v; want an error exactly past the limit", s, n, err, w.truncated)
				}
			}
			if string(w.body) != tt.wantBody || w.truncated != tt.wantTruncated {
				t.Errorf("after writes %q with limit %d: body %q, truncated %v; want %q, %v",
					tt.writes, tt.limit, w.body, w.truncated, tt.wantBody, tt.wantTruncated)
			}
		})
	}
}

func TestCapturingWriterStatus(t *testing.T) {
	for _, tt := range []struct {
		name   string
		do     func(w *capturingWriter)
		status int
	}{
		{"nothing written", func(w *capturingWriter) {}, 0}, // Fetch reads 0 as 200
		{"body only", func(w *capturingWriter) { w.Write([]byte("x")) }, http.StatusOK},
		{"status only", func(w *capturingWriter) { w.WriteHeader(http.StatusNotFound) }, http.StatusNotFound},
		{"first status wins", func(w *capturingWriter) {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.WriteHeader(http.StatusOK)
		}, http.StatusServiceUnavailable},
		{"status after body ignored", func(w *capturingWriter) {
			w.Write([]byte("x"))
			w.WriteHeader(http.StatusInternalServerError)
		}, http.StatusOK},
		{"flush changes nothing", func(w *capturingWriter) {
			w.Flush()
			w.WriteHeader(http.StatusGone)
		}, http.StatusGone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &capturingWriter{ctx: t.Context(), header: make(http.Header), boundedBody: boundedBody{limit: 10}}
			tt.do(w)
			if w.status != tt.status {
				t.Errorf("status = %d, want %d", w.status, tt.status)
			}
		})
	}
}

// TestCapturingWriterInformational checks that a 1xx status, which
// reverse_proxy forwards with WriteHeader before the final one (103 Early
// Hints), is not taken for the response's status.
func TestCapturingWriterInformational(t *testing.T) {
	w := &capturingWriter{ctx: t.Context(), header: make(http.Header), boundedBody: boundedBody{limit: 10}}
	w.WriteHeader(http.StatusEarlyHints)
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("x"))
	if w.status != http.StatusOK {
		t.Errorf("status after 103 then 200 = %d, want 200", w.status)
	}
}
