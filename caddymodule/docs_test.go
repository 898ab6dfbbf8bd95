package caddymodule

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
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
