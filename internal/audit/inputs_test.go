package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExpandInputs checks how command-line arguments name inputs: patterns
// expanded (directories left out), names and "-" kept, each file once, and
// an error naming each argument that names nothing.
func TestExpandInputs(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"robots.log", "robots.log.1", "robots.log.2.gz", "b[1].log", "other.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "robots.log.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(filepath.Join(dir, "robots.log"), link); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		args []string
		want []string
		err  string // "" for none
	}{
		{"rotated logs by pattern, in order, no directory", []string{p("robots.log*")}, []string{p("robots.log"), p("robots.log.1"), p("robots.log.2.gz")}, ""},
		{"names and standard input", []string{"-", p("other.txt")}, []string{"-", p("other.txt")}, ""},
		{"a name with pattern syntax that exists", []string{p("b[1].log")}, []string{p("b[1].log")}, ""},
		{"a directory named is kept, to fail when read", []string{p("robots.log.d")}, []string{p("robots.log.d")}, ""},
		{"a file named twice is read once", []string{p("robots.log"), p("robots.log*"), p("./robots.log"), link}, []string{p("robots.log"), p("robots.log.1"), p("robots.log.2.gz")}, ""},
		{"no match", []string{p("robots.log"), p("*.zst")}, nil, `no file matches "` + p("*.zst") + `"`},
		{"only a directory matches", []string{p("robots.log.d*")}, nil, "no file matches"},
		{"a bad pattern", []string{p("[.log")}, nil, "syntax error in pattern"},
		{"a missing file", []string{p("missing.log")}, nil, "missing.log"},
		{"standard input twice", []string{"-", "-"}, nil, "more than once"},
		{"each error", []string{p("a*.x"), p("b*.x")}, nil, `"` + p("b*.x") + `"`},
	}
	for _, tt := range tests {
		got, err := ExpandInputs(tt.args)
		switch {
		case tt.err == "" && (err != nil || !slices.Equal(got, tt.want)):
			t.Errorf("%s: ExpandInputs(%q) = %q, %v; want %q", tt.name, tt.args, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: ExpandInputs(%q) error %v, want one with %q", tt.name, tt.args, err, tt.err)
		}
	}
}

// TestAgentIsTheRecordsToken checks that a crawler is named by its
// record's agent, the product token the handler judged, never by a name
// read from the User-Agent (a library's, say).
func TestAgentIsTheRecordsToken(t *testing.T) {
	log := v2("ExampleBot", "deny", "violation", "user_agent", "python-requests/2.32.3 crawlee/3.11 (ExampleBot/1.0)") +
		v2("", "deny", "violation", "user_agent", "Scrapy/2.11 (+https://scrapy.org)", "agent", nil)
	a := New(Options{})
	if _, err := a.Read("ua.log", strings.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range a.Report().Crawlers {
		got = append(got, c.Agent)
	}
	if want := []string{"", "ExampleBot"}; !slices.Equal(got, want) && !slices.Equal(got, []string{"ExampleBot", ""}) {
		t.Errorf("agents %q, want %q", got, want)
	}
}
