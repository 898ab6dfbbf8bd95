package rules

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// conformanceDir holds Google's public robots.txt test cases with the
// verdicts this project's profile expects; its README says where they come
// from and under which licence.
var conformanceDir = filepath.Join("..", "testdata", "conformance")

// minConformanceCases is how many cases each file holds: a file cut short
// by a bad copy must fail the tests, not pass fewer of them.
var minConformanceCases = map[string]int{"google.jsonl": 545, "urlpath.jsonl": 44, "parse_stats.jsonl": 12}

// readJSONL decodes every line of a file in conformanceDir into a T. The
// test fails, rather than skips, when the file is missing: the conformance
// suite is part of what "done" means for this package.
func readJSONL[T any](t *testing.T, name string) []T {
	t.Helper()
	path := filepath.Join(conformanceDir, name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("conformance cases missing: %v (see testdata/conformance/README.md)", err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	if want := minConformanceCases[name]; len(out) < want {
		t.Fatalf("read %d cases from %s, want at least %d", len(out), name, want)
	}
	return out
}

// exact returns the exact bytes of a field: the base64 form when present
// (the plain field is then only a lossy rendering of bytes that are not
// UTF-8), else the plain one.
func exact(t *testing.T, plain, b64 string) string {
	t.Helper()
	if b64 == "" {
		return plain
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("bad base64 %q: %v", b64, err)
	}
	return string(b)
}

type googleCase struct {
	ID          string `json:"id"`
	Robots      string `json:"robots"`
	RobotsB64   string `json:"robots_b64"`
	Agent       string `json:"agent"`
	AgentB64    string `json:"agent_b64"`
	URL         string `json:"url"`
	URLB64      string `json:"url_b64"`
	Expected    bool   `json:"expected"`
	Google      bool   `json:"google"`
	ProfileNote string `json:"profile_note"`
	Source      string `json:"source"`
}

// TestGoogleConformance runs the 545 cases of Google's robots.txt test
// suites with the verdict this project's profile expects.
func TestGoogleConformance(t *testing.T) {
	cases := readJSONL[googleCase](t, "google.jsonl")
	for _, c := range cases {
		body := exact(t, c.Robots, c.RobotsB64)
		agent := exact(t, c.Agent, c.AgentB64)
		url := exact(t, c.URL, c.URLB64)
		r := Parse([]byte(body))
		if got := r.Allowed(agent, url); got != c.Expected {
			t.Errorf("%s (%s): Allowed(%q, %q) = %v, want %v (google: %v; %s)\nrobots.txt:\n%s",
				c.ID, c.Source, agent, url, got, c.Expected, c.Google, c.ProfileNote, body)
		}
	}
}

type urlPathCase struct {
	ID       string `json:"id"`
	Input    string `json:"input"`
	Expected string `json:"expected"`
}

// TestGoogleURLPath checks how a target is cut to the path that rules are
// matched against, with Google's own cases for absolute URLs.
func TestGoogleURLPath(t *testing.T) {
	// Deliberate difference: a target that starts with "/" is an
	// origin-form request target, taken as a path, never as a URL without a
	// scheme (see targetPath).
	ours := map[string]string{
		"//a/b/c":       "//a/b/c",
		"//example.com": "//example.com",
		"///x":          "///x",
	}
	for _, c := range readJSONL[urlPathCase](t, "urlpath.jsonl") {
		want := c.Expected
		if w, ok := ours[c.Input]; ok {
			want = w
		}
		p, slash := targetPath(c.Input)
		if slash {
			p = "/" + p
		}
		if p != want {
			t.Errorf("%s: targetPath(%q) = %q, want %q", c.ID, c.Input, p, want)
		}
	}
}
