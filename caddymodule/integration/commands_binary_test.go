package integration

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// commandsDir is where the commands run: the directory of package
// robotscmd, whose tests' inputs (testdata/commands) the paths below name,
// as its own tests name them.
const commandsDir = "../robotscmd"

// TestRobotsCommandsBinary runs the robots commands of the caddy of
// cmd/caddy, to prove they are registered and end with the right statuses.
// The command functions themselves are tested in package robotscmd.
func TestRobotsCommandsBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/caddy")
	}
	bin := hxBinary(t)
	demo := filepath.Join("..", "..", "testdata", "demo", "robots.txt")
	ranges := filepath.Join("testdata", "commands", "ranges.json")
	tests := []struct {
		args   []string
		status int
		stdout string // a line the output must hold
		stderr string // a text the error output must hold
	}{
		{[]string{"check", "--robots", demo, "--ua", "GPTBot", "/blog/post.html"}, 1, "/blog/post.html: deny", ""},
		{[]string{"check", "--robots", demo, "--ua", "GPTBot", "/robots.txt"}, 0, "/robots.txt: allow", ""},
		{[]string{"check", "--robots", demo, "--json", "--ua", "curl/8.5.0", "/private/press/x"}, 0, `"verdict":"allow"`, ""},
		{[]string{"check", "--robots", "missing.txt", "--ua", "GPTBot", "/"}, 2, "", "missing.txt"},
		{[]string{"check", "--no-such-flag"}, 2, "", "unknown flag"},
		{[]string{"lint", demo}, 0, "", ""},
		{[]string{"lint", filepath.Join("testdata", "commands", "broken.txt")}, 1, "broken.txt:2: error:", ""},
		{[]string{"lint", "--json", filepath.Join("testdata", "commands", "blockall.txt")}, 0, `"code": "disallow-all"`, ""},
		{[]string{"no-such-command"}, 2, "", "unknown command"},
		{nil, 0, "caddy robots verify", ""},
		{[]string{"verify", "--verify-builtin", "off", "--ip-ranges", "GPTBot=" + ranges, "GPTBot", "192.0.2.40"}, 0,
			"192.0.2.40: verified by ip_ranges", ""},
		{[]string{"verify", "--verify-builtin", "off", "--ip-ranges", "GPTBot=" + ranges, "GPTBot", "192.0.2.40", "198.51.100.7"}, 1,
			"198.51.100.7: forged (ip_ranges)", ""},
		{[]string{"verify", "GPTBot"}, 2, "", "no address"},
		{[]string{"check", "--robots", demo, "--ua", "GPTBot", "--ip", "198.51.100.7", "--verify-builtin", "off",
			"--ip-ranges", "GPTBot=" + ranges, "/blog/post.html"}, 0, "identity: forged (ip_ranges)", ""},
	}
	for _, tt := range tests {
		// None of them reaches the network; the bound only keeps a hung
		// command from holding the test.
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, append([]string{"robots"}, tt.args...)...)
		cmd.Dir = commandsDir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		status := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("caddy robots %s: %v", strings.Join(tt.args, " "), err)
		}
		if status != tt.status || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("caddy robots %s: status %d, stdout %q, stderr %q; want status %d, stdout with %q, stderr with %q",
				strings.Join(tt.args, " "), status, stdout.String(), stderr.String(), tt.status, tt.stdout, tt.stderr)
		}
	}
}
