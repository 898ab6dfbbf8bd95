package robotscmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/render"
)

// auditV3 are the version 3 logs of two instances (see
// testdata/audit/README.md).
var auditV3 = filepath.Join("..", "..", "testdata", "audit", "v3-*.log")

// TestAuditHelpWords checks that the words --help quotes for the ROBOTS.TXT
// FETCHED column are those the table writes, and the formats those the
// audit has.
func TestAuditHelpWords(t *testing.T) {
	help := newAuditCommand().Long
	quoted := regexp.MustCompile(`"yes\s+\(([a-z]+)\)"`)
	var inHelp []string
	for _, m := range quoted.FindAllStringSubmatch(help, -1) {
		inHelp = append(inHelp, "yes ("+m[1]+")")
	}
	status, err, out, _ := auditRun(t, nil, filepath.Join("..", "..", "testdata", "audit", "v3-a.log"), filepath.Join("..", "..", "testdata", "audit", "v3-b.log"))
	if status != exitOK || err != nil {
		t.Fatalf("status %d, %v", status, err)
	}
	var inOutput []string
	for _, m := range regexp.MustCompile(`  (yes \([a-z]+\))  `).FindAllStringSubmatch(out, -1) {
		inOutput = append(inOutput, m[1])
	}
	slices.Sort(inHelp)
	slices.Sort(inOutput)
	inHelp, inOutput = slices.Compact(inHelp), slices.Compact(inOutput)
	if len(inOutput) < 2 || !slices.Equal(inHelp, inOutput) {
		t.Errorf("--help quotes %q, the table writes %q:\n%s", inHelp, inOutput, out)
	}
	var formats []string
	for _, f := range render.Formats {
		formats = append(formats, string(f))
	}
	if !strings.Contains(auditUsage, "--format "+strings.Join(formats, "|")) {
		t.Errorf("the usage line does not name the formats %v: %s", formats, auditUsage)
	}
}

// TestAuditEvidenceCommand checks --evidence: the HTML and its JSON twin,
// the texts from --storage, and its usage errors.
func TestAuditEvidenceCommand(t *testing.T) {
	dir := t.TempDir()
	// A storage holding one version of www.example.com's robots.txt in
	// the v3 logs would need its text; the v3 logs name made-up versions,
	// so the evidence names them without text.
	out := filepath.Join(dir, "gptbot.html")
	status, err, stdout, stderr := auditRun(t, nil, "--evidence", "ExampleBot", "--output", out, auditV3)
	if status != exitOK || err != nil || stdout != "" {
		t.Fatalf("status %d, %v, stdout %q", status, err, stdout)
	}
	if !strings.Contains(stderr, "without their text: give a copy of Caddy's storage with --storage") {
		t.Errorf("stderr %q", stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(page), "<!DOCTYPE html>") || !strings.Contains(string(page), "robots.txt evidence: ExampleBot") {
		t.Fatalf("the HTML: %v\n%.300s", err, page)
	}
	b, err := os.ReadFile(filepath.Join(dir, "gptbot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev audit.Evidence
	if err := json.Unmarshal(b, &ev); err != nil || ev.Agent != "ExampleBot" || len(ev.Sites) != 1 || len(ev.Sites[0].Violations) != 2 {
		t.Fatalf("the JSON twin: %v, %+v", err, ev)
	}
	for _, q := range ev.Sites[0].Violations {
		if q.Target == "" || q.Instance == "" || q.ClientIP == "" || len(q.Readings) == 0 {
			t.Errorf("violation %+v", q)
		}
	}

	// With a storage holding a file that is no version of these logs, and
	// one under a version's name that does not hash to it.
	storage := filepath.Join(dir, "data")
	body := "User-agent: *\nDisallow: /\n"
	sum := sha256.Sum256([]byte(body))
	for name, content := range map[string]string{hex.EncodeToString(sum[:]): body, "5f0c1e2d3a4b5c6d" + strings.Repeat("0", 48): body} {
		p := filepath.Join(storage, "robots_enforce", "x", "bodies", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	status, err, _, _ = auditRun(t, nil, "--evidence", "ExampleBot", "--storage", storage, "--output", out, auditV3)
	b, _ = os.ReadFile(filepath.Join(dir, "gptbot.json"))
	ev = audit.Evidence{}
	if jerr := json.Unmarshal(b, &ev); status != exitOK || err != nil || jerr != nil || ev.Merge.Texts.Mismatched != 1 || len(ev.Merge.Texts.Storage) != 1 || ev.Merge.Texts.Storage[0] != storage {
		t.Errorf("with a storage: status %d, %v, %v, texts %+v", status, err, jerr, ev.Merge.Texts)
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no output", []string{"--evidence", "GPTBot", auditV3}, "--evidence needs --output"},
		{"a JSON output", []string{"--evidence", "GPTBot", "--output", filepath.Join(dir, "e.json"), auditV3}, "name the HTML file"},
		{"not a token", []string{"--evidence", "GPT Bot", "--output", out, auditV3}, "not a product token"},
		{"a format", []string{"--evidence", "GPTBot", "--format", "csv", "--output", out, auditV3}, "do not apply"},
		{"no storage", []string{"--storage", filepath.Join(dir, "nothing"), auditV3}, "--storage"},
	} {
		status, err, _, _ := auditRun(t, nil, tt.args...)
		if status != exitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: status %d, %v; want %d, an error with %q", tt.name, status, err, exitUsage, tt.want)
		}
	}
}

// TestAuditDetail checks --detail: the table with each row's detail.
func TestAuditDetail(t *testing.T) {
	status, err, plain, _ := auditRun(t, nil, auditV3)
	if status != exitOK || err != nil {
		t.Fatal(err)
	}
	status, err, detail, _ := auditRun(t, nil, "--detail", auditV3)
	if status != exitOK || err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(plain, "\nNotes:")
	if !strings.HasPrefix(detail, head) || !strings.Contains(detail, "\nDetail:\n") ||
		!strings.Contains(detail, "/private/more.html?page=2") || !strings.Contains(detail, "robots.txt fetches:") {
		t.Errorf("--detail:\n%s", detail)
	}
	if strings.Contains(plain, "\nDetail:\n") {
		t.Errorf("without --detail:\n%s", plain)
	}
}
