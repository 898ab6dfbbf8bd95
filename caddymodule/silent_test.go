package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Configurations that ran and did the wrong thing now fail, or warn. The
// Caddyfile's are golden files (testdata/adapt/error_*.caddyfiletest),
// which TestCaddyfileAdapt and, through a built caddy adapt,
// TestCaddyAdaptBinary check with their file and line; these are their
// JSON forms, which fail when the handler is provisioned (Settings is
// what Provision reads the options with).
func TestSilentJSON(t *testing.T) {
	for _, tt := range []struct {
		name, json, want string
	}{
		{"inline text with \\n for line breaks", `{"source": {"kind": "inline", "text": "User-agent: *\\nDisallow: /private/"}}`,
			`source inline: line 1: error: user-agent "*\\nDisallow: /private/" has no product token`},
		{"an HTML page as a file source", `{"source": {"kind": "file", "path": "testdata/adapt/page.html"}}`,
			"source file testdata/adapt/page.html: error: an HTML page, not a robots.txt"},
		{"an HTML page as inline text", `{"source": {"kind": "inline", "text": "<html><body>Disallow: /</body></html>"}}`,
			"source inline: error: an HTML page, not a robots.txt"},
		{"serve_robots origin with the upstream source", `{"serve_robots": "origin"}`,
			"serve_robots origin: the upstream source is the site's own robots.txt"},
		{"serve_robots origin with no kind of source", `{"serve_robots": "origin", "source": {}}`,
			"serve_robots origin: the upstream source is the site's own robots.txt"},
		{"undeclared bind with nothing to bind by", `{"verify": {"builtin": "off", "undeclared": "bind"}}`,
			"verify undeclared bind: there is no range list to bind a client by"},
		{"verify off with a policy", `{"verify": {"off": true, "forged": "deny"}}`,
			"verify off: forged given too, which would do nothing with verification off; leave it out, or verification on"},
		{"verify off with several", `{"verify": {"off": true, "undeclared": "bind", "ip_ranges": [{"token": "GPTBot", "source": "x.json"}]}}`,
			"verify off: ip_ranges, undeclared given too"},
		{"a directory as the file source", `{"source": {"kind": "file", "path": "testdata/adapt"}}`,
			"source file testdata/adapt is a directory: want a robots.txt file"},
		{"a malformed ip_ranges file", `{"verify": {"ip_ranges": [{"token": "GPTBot", "source": "testdata/adapt/malformed-ranges.json"}]}}`,
			"verify ip_ranges GPTBot: range list testdata/adapt/malformed-ranges.json:5: bad range list"},
		{"type errors, all at once", `{"max_hosts": "ten", "verify": {"ip_ranges": [{"token": 7}]}, "mode": "block"}`,
			`max_hosts: want a whole number, got the string "ten"`},
		{"type errors, all at once: the second", `{"max_hosts": "ten", "verify": {"ip_ranges": [{"token": 7}]}, "mode": "block"}`,
			"verify.ip_ranges[0].token: want a string, got the number 7"},
		{"type errors, all at once: the check", `{"max_hosts": "ten", "verify": {"ip_ranges": [{"token": 7}]}, "mode": "block"}`,
			`mode "block": want enforce or log`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var h Handler
			err := json.Unmarshal([]byte(tt.json), &h)
			if err == nil {
				_, err = h.Settings()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want an error with %q", tt.json, err, tt.want)
			}
		})
	}
}

// TestSourceLintWarnings checks that what lint warns of in a source's text
// is logged when the handler is provisioned, saying what it is about, what
// will happen and what to do; and that a clean text logs nothing.
func TestSourceLintWarnings(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string // in the findings; none for a clean text
	}{
		{"disallow all", "User-agent: *\nDisallow: /\n", []string{`line 2: warning: Disallow: / in the "*" group disallows everything to every crawler`}},
		{"a rule that never decides", "User-agent: *\nDisallow: /fish*\nAllow: /fish\n", []string{"line 3: warning: Allow: /fish never decides"}},
		{"clean", "User-agent: GPTBot\nDisallow: /\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := Handler{Source: &Source{Kind: "inline", Text: tt.text}}
			s, err := h.Settings()
			if err != nil {
				t.Fatalf("Settings() = %v; warnings are no error", err)
			}
			core, logs := observer.New(zap.WarnLevel)
			s.logLintWarnings(zap.New(core))
			entries := logs.All()
			if len(tt.want) == 0 {
				if len(entries) != 0 {
					t.Errorf("%q: logged %v, want nothing", tt.text, entries)
				}
				return
			}
			if len(entries) != 1 {
				t.Fatalf("%q: %d warnings logged, want 1", tt.text, len(entries))
			}
			e := entries[0]
			if !strings.Contains(e.Message, "rules may not work as they read") || !strings.Contains(e.Message, "caddy robots lint") {
				t.Errorf("warning %q: want what will happen and what to do", e.Message)
			}
			fields := e.ContextMap()
			if fields["robots_source"] != "source inline" {
				t.Errorf("robots_source = %v, want %q", fields["robots_source"], "source inline")
			}
			for _, w := range tt.want {
				if f, _ := fields["findings"].(string); !strings.Contains(f, w) {
					t.Errorf("findings = %q, want %q in them", f, w)
				}
			}
		})
	}
}
