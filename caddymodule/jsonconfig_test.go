package caddymodule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestJSONErrors checks that a JSON configuration's problems are named by
// their field's path, in the configuration's words, and all at once.
func TestJSONErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		json string
		want []string // each in the error
		not  []string // none in it
	}{
		{"a string for a number", `{"max_hosts": "ten"}`, []string{`max_hosts: want a whole number, got the string "ten"`}, []string{"Go struct", "unmarshal"}},
		{"every problem at once", `{"max_hosts": "ten", "status": "403", "mode": "block", "verfy": {}, "log_allowed": "yes"}`,
			[]string{`max_hosts: want a whole number, got the string "ten"`, `status: want a whole number, got the string "403"`,
				`mode "block": want enforce or log`, "verfy: unknown field; did you mean verify?", `log_allowed: want true or false, got the string "yes"`}, nil},
		{"a nested path", `{"verify": {"ip_ranges": [{"token": "GPTBot", "source": "../testdata/demo/googlebot.json"}, {"token": 7}]}}`,
			[]string{`verify.ip_ranges[1].token: want a string, got the number 7`}, nil},
		{"a nested unknown field", `{"source": {"kind": "file", "file": "robots.txt"}}`, []string{"source.file: unknown field"}, nil},
		{"a duration", `{"refresh": true}`, []string{`refresh: want a duration such as "10s" or "24h", or a number of nanoseconds, got true`}, nil},
		{"a size", `{"max_size": "big"}`, []string{`max_size: want a number of octets, or a size such as "1MiB", got the string "big"`}, nil},
		{"an array for an object", `{"verify": []}`, []string{"verify: want an object, got an array"}, nil},
		{"an object for an array", `{"allow_agents": {"a": 1}}`, []string{"allow_agents: want an array of strings, got an object"}, nil},
		{"not an object", `[1]`, []string{"the configuration: want an object, got an array"}, nil},
		// The checks of the fields that could not be read are left out:
		// their values are not what was written.
		{"no check of a field not read", `{"verify": {"forged": 1, "pending": "later"}, "wildcard": "some"}`,
			[]string{"verify.forged: want a string, got the number 1", `wildcard policy "some"`}, []string{"pending"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var h Handler
			err := json.Unmarshal([]byte(tt.json), &h)
			if err == nil {
				t.Fatalf("Unmarshal(%s) = nil, want errors %q", tt.json, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Unmarshal(%s) = %q, want %q in it", tt.json, err, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("Unmarshal(%s) = %q, want no %q in it", tt.json, err, n)
				}
			}
		})
	}
}

// TestJSONAsEncodingJSON checks, as a differential test, that a valid
// configuration reads exactly as encoding/json reads it: every handler of
// the adapter's golden files, and a few spelt by hand (keys in another
// case, nulls).
func TestJSONAsEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"MODE": "log", "Status": 451, "source": null, "verify": {"Builtin": "off", "ip_ranges": null}}`,
		`{"verify": {"reverse_dns": {"ExampleBot": ["crawl.example.net"]}, "signature_agents": [{"token": "ExampleBot", "origin": "https://agent.example"}]}}`,
		`{"new_hosts": {"count": 5, "per": 60000000000}, "violators": {"mode": "block", "for": "1h"}, "max_size": "1MiB"}`,
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "adapt", "*.caddyfiletest"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, out, _ := strings.Cut(string(data), unitGoldenSeparator)
		if out = strings.TrimSpace(out); strings.HasPrefix(out, "{") {
			inputs = append(inputs, unitHandlersJSON(t, out)...)
		}
	}
	if len(inputs) < 10 {
		t.Fatalf("%d handler configurations, want the golden files' too", len(inputs))
	}
	type options Handler
	for _, in := range inputs {
		var got Handler
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Errorf("Unmarshal(%s) = %v", in, err)
			continue
		}
		var want options
		dec := json.NewDecoder(strings.NewReader(in))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json: %s: %v", in, err)
		}
		if !reflect.DeepEqual(got, Handler(want)) {
			t.Errorf("Unmarshal(%s) = %+v, encoding/json reads %+v", in, got, want)
		}
	}
}

// unitHandlersJSON returns the robots_enforce handlers of an adapted
// configuration, each as Caddy hands it to the module: without its
// "handler" key.
func unitHandlersJSON(t *testing.T, config string) []string {
	t.Helper()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["handler"] == "robots_enforce" {
				m := make(map[string]any, len(v))
				for k, x := range v {
					if k != "handler" {
						m[k] = x
					}
				}
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(b))
				return
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var cfg any
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatal(err)
	}
	walk(cfg)
	return out
}
