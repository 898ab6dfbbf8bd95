package robotscmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLintGolden checks the text and JSON output of caddy robots lint, and
// its exit status: 1 when a finding is an error, 0 otherwise.
func TestLintGolden(t *testing.T) {
	tests := []struct {
		name, file string
		status     int
	}{
		{"demo", cmdDemo, 0},
		{"shop", cmdShop, 0},
		{"broken", "testdata/commands/broken.txt", 1},
		{"blockall", "testdata/commands/blockall.txt", 0},
		{"page", "testdata/commands/page.html", 1},
	}
	for _, tt := range tests {
		for _, format := range []string{"txt", "json"} {
			t.Run(tt.name+"."+format, func(t *testing.T) {
				args := []string{"lint", tt.file}
				if format == "json" {
					args = slices.Insert(args, 1, "--json")
				}
				out, status, err := cmdRun(t, args...)
				if status != tt.status || err != nil {
					t.Errorf("status %d, error %v; want %d, no error", status, err, tt.status)
				}
				if format == "json" {
					var findings []lintFinding
					if err := json.Unmarshal([]byte(out), &findings); err != nil {
						t.Errorf("output is not a JSON array of findings: %v", err)
					}
				}
				cmdGolden(t, "lint-"+tt.name+"."+format, cmdTranscript(args, out))
			})
		}
	}
}

// TestLintSizeLimit checks that content past the size limit (RFC 9309 §2.5,
// --max-size) is an error.
func TestLintSizeLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < 600<<10; i++ {
		fmt.Fprintf(&b, "Disallow: /archive/%d/\n", i)
	}
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, status, err := cmdRun(t, "lint", path)
	if status != exitFindings || err != nil || !strings.Contains(out, ": error: content past ") {
		t.Errorf("lint of a 600 KiB file: status %d, error %v, output %.300q; want status 1 and a size error", status, err, out)
	}
	out, status, err = cmdRun(t, "lint", "--max-size", "1MiB", path)
	if status != exitOK || err != nil || out != "" {
		t.Errorf("lint --max-size 1MiB of a 600 KiB file: status %d, error %v, output %.300q; want status 0, nothing", status, err, out)
	}
}

// TestLintUsage checks the usage and input errors of caddy robots lint:
// exit status 2, and an error that says what is wrong.
func TestLintUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no input", nil, "no input"},
		{"missing file", []string{"testdata/commands/missing.txt"}, "no such file"},
		{"directory", []string{"testdata/commands"}, "is a directory"},
		{"small max size", []string{"--max-size", "1KiB", cmdDemo}, "at least 500KiB"},
		{"unknown flag", []string{"--jsn", cmdDemo}, "unknown flag"},
		{"url without host", []string{"https:///robots.txt"}, "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, status, err := cmdRun(t, append([]string{"lint"}, tt.args...)...)
			if status != exitUsage || err == nil || !strings.Contains(err.Error(), tt.want) || out != "" {
				t.Errorf("lint %q: status %d, error %v, output %q; want %d, an error with %q", tt.args, status, err, out, exitUsage, tt.want)
			}
		})
	}
}

// TestLintURL checks lint of a robots.txt fetched over HTTP: the findings
// name the URL as given, and answers that leave no file to lint are input
// errors saying what the handler makes of them.
func TestLintURL(t *testing.T) {
	srv := cmdRobotsServer(t)
	tests := []struct {
		name, path string
		status     int
		want       string // in the output, or in the error for status 2
	}{
		{"available", "/ok/robots.txt", 0, "[]"},
		{"redirected", "/moved/robots.txt", 0, `"code": "redirected"`},
		{"served as HTML", "/html/robots.txt", 1, `"code": "content-type"`},
		{"404", "/missing/robots.txt", 2, "status 404 Not Found: there is no robots.txt, and crawlers may fetch everything"},
		{"500", "/error/robots.txt", 2, "status 500 Internal Server Error: robots.txt is unreachable, and the handler denies crawlers"},
		{"429", "/busy/robots.txt", 2, "status 429 Too Many Requests: robots.txt is unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := srv.URL + tt.path
			out, status, err := cmdRun(t, "lint", "--json", url)
			got := out
			if err != nil {
				got = err.Error()
			}
			if status != tt.status || !strings.Contains(got, tt.want) {
				t.Errorf("lint %s: status %d, output %q, error %v; want status %d with %q", url, status, out, err, tt.status, tt.want)
			}
			if status == exitUsage {
				return
			}
			var findings []lintFinding
			if err := json.Unmarshal([]byte(out), &findings); err != nil {
				t.Fatalf("lint %s: output is not a JSON array: %v", url, err)
			}
			for _, f := range findings {
				if f.File != url {
					t.Errorf("lint %s: finding names file %q, want the URL as given", url, f.File)
				}
			}
		})
	}

	t.Run("text", func(t *testing.T) {
		url := srv.URL + "/html/robots.txt"
		out, _, _ := cmdRun(t, "lint", url)
		if !strings.HasPrefix(out, url+": error: served as text/html") || !strings.Contains(out, url+": error: an HTML page") {
			t.Errorf("lint %s:\n%s\nwant the content type and the body reported against the URL", url, out)
		}
	})

	t.Run("no response", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		url := closed.URL + "/robots.txt"
		closed.Close()
		_, status, err := cmdRun(t, "lint", url)
		if status != exitUsage || err == nil || !strings.Contains(err.Error(), "fetching "+url) {
			t.Errorf("lint %s on a closed port: status %d, error %v; want %d and an error naming the URL", url, status, err, exitUsage)
		}
	})
}
