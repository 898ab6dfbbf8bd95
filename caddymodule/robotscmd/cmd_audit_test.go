package robotscmd

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/pflag"
)

// auditTestLog is the real Caddy log that package audit's golden tests
// read (see testdata/audit/README.md).
var auditTestLog = filepath.Join("..", "..", "testdata", "audit", "compliance.log")

// auditRun runs "caddy robots audit" with args and stdin, and returns its
// exit status, error, standard output and standard error.
func auditRun(t *testing.T, stdin []byte, args ...string) (int, error, string, string) {
	t.Helper()
	cmd := newAuditCommand()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("flags %q: %v", args, err)
	}
	var out, errOut bytes.Buffer
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	status, err := runAudit(caddycmd.Flags{FlagSet: cmd.Flags()}, bytes.NewReader(stdin), &out, &errOut, now)
	return status, err, out.String(), errOut.String()
}

func auditGzip(t *testing.T, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// TestAuditCommand checks the command's inputs, filters, formats and
// output file.
func TestAuditCommand(t *testing.T) {
	log, err := os.ReadFile(auditTestLog)
	if err != nil {
		t.Fatal(err)
	}

	// A file, as a table.
	status, err, out, _ := auditRun(t, nil, auditTestLog)
	if status != exitOK || err != nil || !strings.Contains(out, "GPTBot           none      www.example.com") || !strings.Contains(out, "Top disallowed paths") {
		t.Errorf("table of a file: status %d, %v\n%s", status, err, out)
	}

	// Standard input, gzip-compressed, with filters, as CSV.
	status, err, out, _ = auditRun(t, auditGzip(t, log), "--agent", "gptbot", "--host", "www.example.com", "--format", "csv", "-")
	rows, cerr := csv.NewReader(strings.NewReader(out)).ReadAll()
	if status != exitOK || err != nil || cerr != nil || len(rows) != 2 || rows[1][0] != "GPTBot" || rows[1][6] != "8" {
		t.Errorf("csv of stdin: status %d, %v, %v\n%s", status, err, cerr, out)
	}

	// JSON to a file, from two inputs, the log and stdin: the same log
	// twice, whose denials (all of GPTBot's records) are counted once.
	dest := filepath.Join(t.TempDir(), "audit.json")
	status, err, out, _ = auditRun(t, log, "--format", "json", "--output", dest, "--since", "2026-11-21", "--until", "1h", auditTestLog, "-")
	var r struct {
		Inputs []struct {
			Name    string `json:"name"`
			Records int64  `json:"records"`
		} `json:"inputs"`
		Crawlers []struct {
			Requests int64 `json:"requests"`
		} `json:"crawlers"`
	}
	b, _ := os.ReadFile(dest)
	if jerr := json.Unmarshal(b, &r); status != exitOK || err != nil || out != "" || jerr != nil || len(r.Inputs) != 2 || r.Inputs[1].Name != "-" || r.Crawlers[0].Requests != 8 {
		t.Errorf("json to a file: status %d, %v, stdout %q, %v: %+v", status, err, out, jerr, r)
	}

	// HTML.
	status, err, out, _ = auditRun(t, nil, "-f", "html", auditTestLog)
	if status != exitOK || err != nil || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, `<svg id="violations-chart"`) {
		t.Errorf("html: status %d, %v", status, err)
	}

	// A gzip stream cut short: a warning, and the report of what was read.
	z := auditGzip(t, log)
	status, err, out, errOut := auditRun(t, z[:len(z)/2], "-")
	if status != exitOK || err != nil || !strings.Contains(errOut, "robots audit: -: the gzip stream ends early") || !strings.Contains(out, "standard input: the gzip stream ends early") {
		t.Errorf("truncated gzip: status %d, %v, stderr %q\n%s", status, err, errOut, out)
	}
}

// TestAuditCommandErrors checks that usage errors and unreadable inputs
// exit with status 2, before any report is written.
func TestAuditCommandErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no inputs", nil, "no logs to read"},
		{"missing file", []string{auditTestLog, filepath.Join(dir, "missing.log")}, "missing.log"},
		{"directory", []string{dir}, "is a directory"},
		{"stdin twice", []string{"-", "-"}, "more than once"},
		{"pattern without a match", []string{auditTestLog, filepath.Join(dir, "*.log")}, `no file matches "` + filepath.Join(dir, "*.log") + `"`},
		{"bad pattern", []string{filepath.Join(dir, "[.log")}, "syntax error in pattern"},
		{"mode", []string{"--mode", "audit", auditTestLog}, `--mode "audit": want enforce or log`},
		{"every error on one line", []string{"--top", "0", filepath.Join(dir, "a*.log"), filepath.Join(dir, "b*.log")}, `--top 0: want 1 to 64; no file matches "` + filepath.Join(dir, "a*.log") + `"; no file matches "` + filepath.Join(dir, "b*.log") + `"`},
		{"format", []string{"--format", "xml", auditTestLog}, `format "xml"`},
		{"since", []string{"--since", "last week", auditTestLog}, `--since: time "last week"`},
		{"since after until", []string{"--since", "2026-11-21", "--until", "2026-11-20", auditTestLog}, "is not before --until"},
		{"top", []string{"--top", "0", auditTestLog}, "--top 0"},
		{"output", []string{"--output", filepath.Join(dir, "no", "such", "dir.txt"), auditTestLog}, "no such file"},
	}
	for _, tt := range tests {
		status, err, out, _ := auditRun(t, nil, tt.args...)
		if status != exitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: status %d, %v; want %d, an error with %q", tt.name, status, err, exitUsage, tt.want)
		}
		if out != "" {
			t.Errorf("%s: wrote %q", tt.name, out)
		}
	}
}

// TestAuditCommandCobra runs the command through cobra, as caddy does.
func TestAuditCommandCobra(t *testing.T) {
	cmd := newAuditCommand()
	var out bytes.Buffer
	cmd.SetArgs([]string{"--format", "csv", "-"})
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), "agent,host,requests") {
		t.Errorf("empty stdin as csv: %v\n%s", err, out.String())
	}
	cmd = newAuditCommand()
	cmd.SetArgs([]string{filepath.Join(t.TempDir(), "missing.log")})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("a missing file: no error")
	}
}

// auditV2 are the synthetic version 2 logs of two instances (see
// testdata/audit/README.md).
var auditV2 = filepath.Join("..", "..", "testdata", "audit", "v2-*.log")

// TestAuditCommandInputs checks that patterns are expanded by the command
// (a quoted pattern reaches it unexpanded), that files and standard input
// are merged into one report whatever their order, and that a file named
// twice is read once.
func TestAuditCommandInputs(t *testing.T) {
	files, err := filepath.Glob(auditV2)
	if err != nil || len(files) != 2 {
		t.Fatalf("%s: %v, %v", auditV2, files, err)
	}
	rows := func(args []string, stdin []byte) string {
		t.Helper()
		status, err, out, _ := auditRun(t, stdin, append([]string{"--format", "csv"}, args...)...)
		if status != exitOK || err != nil {
			t.Fatalf("%q: status %d, %v", args, status, err)
		}
		return out
	}
	want := rows(files, nil)
	if !strings.Contains(want, "ExampleBot,https://www.example.com,") || !strings.Contains(want, ",client,") || !strings.Contains(want, ",forged,") {
		t.Errorf("both instances' logs:\n%s", want)
	}
	b, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		args  []string
		stdin []byte
		want  string
	}{
		{"a pattern", []string{auditV2}, nil, want},
		{"in reverse", []string{files[1], files[0]}, nil, want},
		// The records name no instance: the log read stands for it.
		{"a file and gzip on stdin", []string{"-", files[0]}, auditGzip(t, b), strings.ReplaceAll(want, files[1], "-")},
		{"a file twice", []string{files[0], auditV2, files[0], files[1]}, nil, want},
	} {
		if got := rows(tt.args, tt.stdin); got != tt.want {
			t.Errorf("%s: differs from the files named one by one:\n%s\nwant:\n%s", tt.name, got, want)
		}
	}
	status, err, out, _ := auditRun(t, nil, "--format", "json", files[0], auditV2)
	var r struct {
		Inputs []struct{ Name string } `json:"inputs"`
	}
	if jerr := json.Unmarshal([]byte(out), &r); status != exitOK || err != nil || jerr != nil || len(r.Inputs) != 2 {
		t.Errorf("a file and a pattern matching it: status %d, %v, %v, inputs %+v", status, err, jerr, r.Inputs)
	}
}

// TestAuditCommandMode checks --mode: a crawler seen in both modes is one
// row without it, and only its records of that mode with it.
func TestAuditCommandMode(t *testing.T) {
	for _, tt := range []struct {
		mode string
		want string // AhrefsBot's row: requests, then mode
	}{
		{"", "3 enforce+log"},
		{"log", "1 log"},
		{"ENFORCE", "2 enforce"},
	} {
		args := []string{"--format", "csv", "--agent", "AhrefsBot", auditV2}
		if tt.mode != "" {
			args = append([]string{"--mode", tt.mode}, args...)
		}
		status, err, out, _ := auditRun(t, nil, args...)
		rows, cerr := csv.NewReader(strings.NewReader(out)).ReadAll()
		if status != exitOK || err != nil || cerr != nil || len(rows) != 2 {
			t.Fatalf("--mode %q: status %d, %v, %v\n%s", tt.mode, status, err, cerr, out)
		}
		if got := rows[1][2] + " " + rows[1][16]; got != tt.want {
			t.Errorf("--mode %q: AhrefsBot %q, want %q", tt.mode, got, tt.want)
		}
	}
}

// TestAuditUsage checks that the usage line names every flag.
func TestAuditUsage(t *testing.T) {
	cmd := newAuditCommand()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(cmd.Use, "--"+f.Name+" ") && !strings.Contains(cmd.Use, "--"+f.Name+"]") {
			t.Errorf("the usage line does not name --%s: %s", f.Name, cmd.Use)
		}
	})
}
