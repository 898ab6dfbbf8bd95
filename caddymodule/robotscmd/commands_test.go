package robotscmd

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files of testdata")
	}
}

// cmdUpdating reports whether the tests were run with -update.
func cmdUpdating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// cmdSubcommands are the robots subcommands, by name.
var cmdSubcommands = map[string]struct {
	cobra func() *cobra.Command
	run   robotsCommandFunc
}{
	"check":  {newCheckCommand, runCheck},
	"verify": {newVerifyCommand, runVerify},
	"lint":   {newLintCommand, runLint},
}

// cmdRun runs "caddy robots <args>" in the process, as the cobra command
// would: its flags parsed by the command's flag set, its function called
// with them. It returns the output, the exit status and the error.
func cmdRun(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	sub, ok := cmdSubcommands[args[0]]
	if !ok {
		t.Fatalf("no robots subcommand %q", args[0])
	}
	cmd := sub.cobra()
	if err := cmd.ParseFlags(args[1:]); err != nil {
		return "", exitUsage, err
	}
	var out bytes.Buffer
	status, err := sub.run(caddycmd.Flags{FlagSet: cmd.Flags()}, &out)
	return out.String(), status, err
}

// cmdShellWord quotes a word for a shell, when it needs it.
func cmdShellWord(s string) string {
	if s != "" && regexp.MustCompile(`^[A-Za-z0-9_./:=%,@+-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cmdTranscript is a command line and its output, as a golden file holds
// them: "$ caddy robots <args>", then the output.
func cmdTranscript(args []string, out string) string {
	words := []string{"$ caddy robots"}
	for _, a := range args {
		words = append(words, cmdShellWord(a))
	}
	return strings.Join(words, " ") + "\n" + out
}

// cmdGolden compares got with the golden file testdata/commands/golden/name,
// or rewrites the file with -update.
func cmdGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "commands", "golden", name)
	if cmdUpdating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (go test -run %s -update writes it): %v", t.Name(), err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run %s -update rewrites it):\n%s", path, t.Name(), cmdDiff(string(want), got))
	}
}

// cmdDiff shows the first line where want and got differ.
func cmdDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}

// TestRobotsExit checks how exit statuses reach the process: 0 and 1
// without a message, 2 with the error.
func TestRobotsExit(t *testing.T) {
	cmd := &cobra.Command{Use: "check"}
	if err := robotsExit(cmd, exitOK, nil); err != nil {
		t.Errorf("robotsExit(0) = %v, want nil", err)
	}
	if err := robotsExit(cmd, exitFindings, nil); !errors.Is(err, errFindings) || !cmd.SilenceErrors {
		t.Errorf("robotsExit(1) = %v, silenced %v; want errFindings, silenced", err, cmd.SilenceErrors)
	}
	usage := errors.New("robots check: --robots is required")
	if err := robotsExit(&cobra.Command{Use: "check"}, exitUsage, usage); err == nil || err.Error() != usage.Error() {
		t.Errorf("robotsExit(2) = %v, want %v", err, usage)
	}
}
