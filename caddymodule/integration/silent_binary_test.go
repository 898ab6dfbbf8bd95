package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSilentConfigurationsBinary feeds configurations that once ran and
// did the wrong thing to a real "caddy validate" (which adapts a
// Caddyfile, then provisions every handler, as caddy run does before it
// serves): each fails naming what is wrong (and, for a Caddyfile, the
// file and line), or, for what only deserves a warning, validates and
// logs one that says what will happen and what to do, from a logger that
// a compliance log's include of http.handlers.robots_enforce does not
// catch. The Caddyfile errors are also golden files of the adapter
// (../testdata/adapt/error_*.caddyfiletest, which TestCaddyAdaptBinary
// runs through caddy adapt); these are the same cases as an operator
// validates them, and the JSON ones.
func TestSilentConfigurationsBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/caddy")
	}
	bin := hxBinary(t)
	const site = ":0 {\n\tbind 127.0.0.1\n\trobots_enforce {\n%s\n\t}\n\tfile_server\n}\n"
	caddyfile := func(options string) string { return strings.Replace(site, "%s", options, 1) }
	jsonConfig := func(handler string) string {
		return `{"apps": {"http": {"servers": {"s": {"listen": ["127.0.0.1:0"], "routes": [{"handle": [` + handler + `]}]}}}}}`
	}
	tests := []struct {
		name, file, config string
		want               string // in the error, with the file's path for <FILE>; "" when it validates
		warning            string // in a warning logged by http.robots_enforce, when it validates
	}{
		{"inline text with \\n", "Caddyfile", caddyfile("\t\tsource inline \"User-agent: *\\nDisallow: /private/\""),
			`write the text as a heredoc (source inline <<TXT, its lines, then TXT)), at <FILE>:4`, ""},
		{"an HTML page as a file source", "Caddyfile", caddyfile("\t\tsource file testdata/adapt/page.html"),
			"source file testdata/adapt/page.html: error: an HTML page, not a robots.txt", ""},
		{"two handlers in one site", "Caddyfile", ":0 {\n\tbind 127.0.0.1\n\trobots_enforce log\n\trobots_enforce\n\tfile_server\n}\n",
			"robots_enforce given twice in one site: first at <FILE>:3; both would judge and record the same requests, " +
				"one after the other; give one, or a matcher to each for its own paths, at <FILE>:4", ""},
		{"serve_robots origin with upstream", "Caddyfile", caddyfile("\t\tserve_robots origin"),
			"serve_robots origin: the upstream source is the site's own robots.txt", ""},
		{"undeclared bind with nothing to bind by", "Caddyfile", caddyfile("\t\tverify {\n\t\t\tbuiltin off\n\t\t\tundeclared bind\n\t\t}"),
			"leave builtin on, or leave undeclared out, at <FILE>:6", ""},
		{"a directory as the file source", "Caddyfile", caddyfile("\t\tsource file testdata/adapt"),
			"source file testdata/adapt is a directory: want a robots.txt file, at <FILE>:4", ""},
		{"a malformed ip_ranges file", "Caddyfile", caddyfile("\t\tverify {\n\t\t\tbuiltin off\n\t\t\tip_ranges GPTBot testdata/adapt/malformed-ranges.json\n\t\t}"),
			"range list testdata/adapt/malformed-ranges.json:5: bad range list", ""},
		{"JSON: verify off with a policy", "caddy.json", jsonConfig(`{"handler": "robots_enforce", "verify": {"off": true, "forged": "deny"}}`),
			"verify off: forged given too, which would do nothing with verification off", ""},
		{"JSON: every type error at once, by its path", "caddy.json",
			jsonConfig(`{"handler": "robots_enforce", "max_hosts": "ten", "verify": {"ip_ranges": [{"token": 7}]}, "mode": "block"}`),
			`max_hosts: want a whole number, got the string "ten"; verify.ip_ranges[0].token: want a string, got the number 7; mode "block": want enforce or log`, ""},
		{"JSON: inline text with \\n", "caddy.json", jsonConfig(`{"handler": "robots_enforce", "source": {"kind": "inline", "text": "User-agent: *\\nDisallow: /"}}`),
			"source inline: line 1: error: user-agent", ""},
		{"a source that disallows everything: a warning", "Caddyfile",
			caddyfile("\t\tverify off\n\t\tsource inline <<TXT\n\t\t\tUser-agent: *\n\t\t\tDisallow: /\n\t\t\tTXT"),
			"", `line 2: warning: Disallow: / in the "*" group disallows everything to every crawler`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(config, []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"validate", "--config", config}
			if tt.file == "Caddyfile" {
				args = append(args, "--adapter", "caddyfile")
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Dir = ".." // where the paths above lead, as the golden files' do
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("caddy validate: %v", err)
			}
			if tt.want != "" {
				want := strings.ReplaceAll(tt.want, "<FILE>", config)
				if err == nil || !strings.Contains(adaptLogMessages(stderr.String()), want) {
					t.Errorf("caddy validate %s: %v, said:\n%s\nwant an error with %q", tt.name, err, stderr.String(), want)
				}
				return
			}
			if err != nil {
				t.Fatalf("caddy validate %s: %v\n%s", tt.name, err, stderr.String())
			}
			if !silentWarned(stderr.String(), tt.warning) {
				t.Errorf("caddy validate %s said:\n%s\nwant a warning of http.robots_enforce with %q", tt.name, stderr.String(), tt.warning)
			}
		})
	}
}

// silentWarned reports whether out, caddy's JSON log lines, holds a
// warning of the logger http.robots_enforce with want in its fields.
func silentWarned(out, want string) bool {
	for line := range strings.Lines(out) {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) != nil || entry["logger"] != "http.robots_enforce" || entry["level"] != "warn" {
			continue
		}
		if b, _ := json.Marshal(entry); strings.Contains(string(b), jsonEscaped(want)) {
			return true
		}
	}
	return false
}

// jsonEscaped is s as JSON writes it inside a string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
