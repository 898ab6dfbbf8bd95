package caddymodule

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
)

// The JSON field reference (docs/json.md) lists every field of the handler
// and of its verify block, and no other.
func TestDocsJSONFields(t *testing.T) {
	doc, err := os.ReadFile("../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Handler](), reflect.TypeFor[Verify]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !documented[name] {
				t.Errorf("docs/json.md does not document the field %s.%s (%q)", typ.Name(), f.Name, name)
			}
			delete(documented, name)
		}
	}
	for name := range documented {
		t.Errorf("docs/json.md documents %q, which no field has", name)
	}
}

// The README's directive reference names every subdirective the Caddyfile
// parser takes, and only those.
func TestDocsDirectiveReference(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(readme), "```caddyfile\nrobots_enforce [<matcher>] [enforce|log] {\n")
	block, _, _ = strings.Cut(block, "\n}\n```")
	if block == "" {
		t.Fatal("no directive reference in the README")
	}
	// Names are dotted by the blocks they are in: "verify.web_bot_auth.agent".
	var names, outer []string
	for _, line := range strings.Split(block, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "}" {
			outer = outer[:max(len(outer)-1, 0)]
			continue
		}
		names = append(names, strings.Join(append(slices.Clone(outer), fields[0]), "."))
		if slices.Contains(fields, "{") {
			outer = append(outer, fields[0])
		}
	}
	for _, name := range names {
		path := strings.Split(name, ".")
		input := "robots_enforce {\n"
		for i, p := range path {
			input += strings.Repeat("\t", i+1) + p
			if i < len(path)-1 {
				input += " {"
			}
			input += "\n"
		}
		for i := len(path) - 1; i > 0; i-- {
			input += strings.Repeat("\t", i) + "}\n"
		}
		input += "}"
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
		if err != nil && strings.Contains(err.Error(), "unrecognized subdirective") {
			t.Errorf("the README documents %q, which the parser does not take: %v", name, err)
		}
	}
	// And the parser takes nothing the README leaves out.
	for _, opt := range []string{"mode", "source", "serve_robots", "status", "body", "wildcard", "unreachable",
		"refresh", "max_size", "fetch_timeout", "max_hosts", "max_memory", "new_hosts", "allow_agents", "log_allowed",
		"content_usage", "verify"} {
		if !slices.Contains(names, opt) {
			t.Errorf("the README's directive reference leaves out %q", opt)
		}
	}
}

// The README's table of reasons names every reason a decision can give,
// and the record's reason field lists every one but not_automated, which
// no record carries (the rules bind no such client).
func TestDocsReasons(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(readme), "| reason | why |\n")
	table, _, _ = strings.Cut(table, "\n\n")
	_, field, _ := strings.Cut(string(readme), "| `reason` | string |")
	field, _, _ = strings.Cut(field, "\n")
	for r := range enforce.NumReasons {
		name := enforce.Reason(r).String()
		if !strings.Contains(table, "| `"+name+"` |") {
			t.Errorf("the README's table of reasons does not explain %q", name)
		}
		if inField := strings.Contains(field, "`"+name+"`"); inField != (enforce.Reason(r) != enforce.ReasonNotAutomated) {
			t.Errorf("the README's record field reason: %q listed %v", name, inField)
		}
	}
}

// The README's Install block is the form that works before a release, the
// same commands as xcaddy.md's "From a checkout" (which CI builds,
// .ci/install-recipe), not the form that needs the module on a module
// proxy.
func TestDocsInstallBlock(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	xcaddy, err := os.ReadFile("../xcaddy.md")
	if err != nil {
		t.Fatal(err)
	}
	firstBlock := func(doc, heading string) string {
		_, rest, ok := strings.Cut(doc, heading)
		if !ok {
			t.Fatalf("no %q", heading)
		}
		_, block, _ := strings.Cut(rest, "```sh\n")
		block, _, _ = strings.Cut(block, "```")
		return block
	}
	install := firstBlock(string(readme), "\n## Install\n")
	checkout := firstBlock(string(xcaddy), "\n## From a checkout")
	if install != checkout {
		t.Errorf("the README's Install block\n%s\ndiffers from xcaddy.md's From a checkout\n%s", install, checkout)
	}
	if !strings.Contains(install, "@v0.0.0-00010101000000-000000000000=") {
		t.Errorf("the README's Install block does not pin the placeholder version to a checkout:\n%s", install)
	}
}

// The latest version CHANGELOG.md names is either a git tag of this
// repository, released, or marked unreleased: a changelog that dates a
// version no tag makes sends readers after a module version that does not
// exist.
func TestChangelogVersions(t *testing.T) {
	log, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	var version, marker string
	for _, m := range regexp.MustCompile(`(?m)^## \[?([^\]\s]+)\]?(?: - (.*))?$`).FindAllStringSubmatch(string(log), -1) {
		if m[1] != "Unreleased" {
			version, marker = m[1], strings.TrimSpace(m[2])
			break
		}
	}
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(version) {
		t.Fatalf("CHANGELOG.md: the latest version is %q, want X.Y.Z", version)
	}
	unreleased := strings.EqualFold(marker, "unreleased")
	tagged, err := gitTag("v" + version)
	if err != nil {
		t.Skipf("cannot ask git whether v%s is a tag (CHANGELOG.md marks it %q): %v", version, marker, err)
	}
	switch {
	case !tagged && !unreleased:
		t.Errorf("CHANGELOG.md dates %s (%q), which no tag v%s releases: mark it Unreleased until the tag exists", version, marker, version)
	case tagged && unreleased:
		t.Errorf("CHANGELOG.md marks %s unreleased, but the tag v%s exists: give it its date", version, version)
	}
}

// gitTag reports whether tag is a tag of the repository this test runs
// in; an error when git or the checkout's git metadata is missing (a
// source archive has none).
func gitTag(tag string) (bool, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return false, err
	}
	if out, err := exec.Command("git", "-C", "..", "rev-parse", "--git-dir").CombinedOutput(); err != nil {
		return false, fmt.Errorf("the checkout has no git metadata: %v: %s", err, strings.TrimSpace(string(out)))
	}
	out, err := exec.Command("git", "-C", "..", "tag", "--list", tag).Output()
	if err != nil {
		return false, fmt.Errorf("git tag: %w", err)
	}
	return strings.TrimSpace(string(out)) == tag, nil
}
