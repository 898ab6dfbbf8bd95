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

// adaptGoldenDir holds the golden files of the adapter's unit test,
// TestCaddyfileAdapt in package caddymodule (see its README): this test
// feeds the same files to the built binary.
const adaptGoldenDir = "../testdata/adapt"

// adaptGoldenSeparator splits a golden file into its Caddyfile and the
// expected JSON or error.
const adaptGoldenSeparator = "----------"

// TestCaddyAdaptBinary runs the golden files through a real "caddy adapt",
// the caddy of cmd/caddy, as an operator would: the errors (a
// subdirective given twice among them) fail it with their file and line,
// the others adapt.
func TestCaddyAdaptBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/caddy")
	}
	bin := hxBinary(t)
	files, err := filepath.Glob(filepath.Join(adaptGoldenDir, "*.caddyfiletest"))
	if err != nil || len(files) == 0 {
		t.Fatalf("golden files %v: %v", files, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".caddyfiletest")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cfText, want, _ := strings.Cut(strings.ReplaceAll(string(data), "\r\n", "\n"), adaptGoldenSeparator)
		// The errors name the file given to --config.
		config := filepath.Join(t.TempDir(), "Caddyfile")
		if err := os.WriteFile(config, []byte(strings.TrimSpace(cfText)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = strings.ReplaceAll(strings.TrimSpace(want), "at Caddyfile:", "at "+config+":")
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, "adapt", "--config", config, "--adapter", "caddyfile")
		// Run from the caddymodule directory, where the golden files'
		// relative paths lead, as TestCaddyfileAdapt reads them.
		cmd.Dir = ".."
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		cancel()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s: caddy adapt: %v", name, err)
		}
		switch {
		case strings.HasPrefix(want, "{") && err != nil:
			t.Errorf("%s: caddy adapt: %v\n%s", name, err, stderr.String())
		case strings.HasPrefix(want, "{") && !json.Valid(stdout.Bytes()):
			t.Errorf("%s: caddy adapt wrote no JSON: %q", name, stdout.String())
		case !strings.HasPrefix(want, "{") && err == nil:
			t.Errorf("%s: caddy adapt succeeded, want it to fail with %q", name, want)
		case !strings.HasPrefix(want, "{") && !strings.Contains(adaptLogMessages(stderr.String()), want):
			t.Errorf("%s: caddy adapt said %q, want %q in it", name, stderr.String(), want)
		}
	}
}

// adaptLogMessages returns the messages of caddy's JSON log lines in out,
// one a line; other lines as they are.
func adaptLogMessages(out string) string {
	var b strings.Builder
	for line := range strings.Lines(out) {
		var entry struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg != "" {
			line = entry.Msg + "\n"
		}
		b.WriteString(line)
	}
	return b.String()
}
