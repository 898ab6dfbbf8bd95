package lint

import (
	"os"
	"regexp"
	"testing"
)

// TestDocsListEveryCode checks that docs/lint.md documents every finding
// code, the parser's (rules/diagnostic.go) and this package's (lint.go),
// in a table row of its own: a code a tool can filter on is a code an
// operator must be able to look up.
func TestDocsListEveryCode(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lint.md")
	if err != nil {
		t.Fatal(err)
	}
	constant := regexp.MustCompile(`(?m)^\s*Code\w+\s*=\s*"([a-z0-9-]+)"`)
	n := 0
	for _, src := range []string{"../../rules/diagnostic.go", "lint.go"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range constant.FindAllSubmatch(b, -1) {
			n++
			if !regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(string(m[1])) + "` \\|").Match(doc) {
				t.Errorf("docs/lint.md has no row for the code %q of %s", m[1], src)
			}
		}
	}
	if n < 30 {
		t.Errorf("found %d code constants, want the 30 and more the sources define", n)
	}
}
