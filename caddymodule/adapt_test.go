package caddymodule

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile" // the caddyfile adapter
	_ "github.com/caddyserver/caddy/v2/modules/standard"      // file_server, rewrite, redir, ...

	// The robots_buffered writer, whose Caddyfile the golden files
	// cover with the handler's: the project's whole Caddyfile surface.
	_ "github.com/robotsenforce/caddy-robots-enforce/caddymodule/robotsbuf"
)

// The -update flag rewrites the JSON half of each golden file in
// testdata/adapt from the adapter's output. It is looked up rather than
// owned, so that another test file of the package may declare it too.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the expected JSON of testdata/adapt/*.caddyfiletest")
	}
}

func unitUpdating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// unitGoldenSeparator splits a golden file into its Caddyfile and the
// expected JSON (or, when that does not start with "{", a substring of the
// expected error).
const unitGoldenSeparator = "----------"

// unitAdapt adapts a Caddyfile to indented JSON, as Caddy's own adapt tests
// do, and fails t on adapter warnings.
func unitAdapt(t *testing.T, name, caddyfileText string) (string, error) {
	t.Helper()
	adapter := caddyconfig.GetAdapter("caddyfile")
	if adapter == nil {
		t.Fatal("no caddyfile adapter registered")
	}
	out, warnings, err := adapter.Adapt([]byte(caddyfileText), map[string]any{})
	if err != nil {
		return "", err
	}
	for _, w := range warnings {
		t.Errorf("%s:%d: adapter warning: %s: %s", name, w.Line, w.Directive, w.Message)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "\t"); err != nil {
		t.Fatalf("%s: adapter output is not JSON: %v", name, err)
	}
	return pretty.String(), nil
}

// TestCaddyfileAdapt checks, for each testdata/adapt/*.caddyfiletest, that
// its Caddyfile adapts to its JSON. Run with -update to rewrite the JSON.
func TestCaddyfileAdapt(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "adapt", "*.caddyfiletest"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/adapt/*.caddyfiletest files")
	}
	// file_server hides the Caddyfile by its OS-specific relative path.
	hidden, _ := json.Marshal("." + string(filepath.Separator) + "Caddyfile")
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".caddyfiletest"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ReplaceAll(string(data), "\r\n", "\n")
			cfText, want, ok := strings.Cut(text, unitGoldenSeparator)
			if !ok {
				t.Fatalf("%s: no %q line between the Caddyfile and the expected JSON", name, unitGoldenSeparator)
			}
			cfText, want = strings.TrimSpace(cfText)+"\n", strings.TrimSpace(want)
			got, err := unitAdapt(t, name, cfText)

			if !strings.HasPrefix(want, "{") { // an expected error
				switch {
				case err == nil:
					t.Errorf("%s: adapted without error, want an error containing %q", name, want)
				case !strings.Contains(err.Error(), want):
					t.Errorf("%s: adapt error = %q, want it to contain %q", name, err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: adapting: %v", name, err)
			}
			if unitUpdating() {
				got = strings.ReplaceAll(got, string(hidden), `"./Caddyfile"`)
				out := cfText + unitGoldenSeparator + "\n" + got + "\n"
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want = strings.ReplaceAll(want, `"./Caddyfile"`, string(hidden))
			if got != want {
				t.Errorf("%s: adapted JSON differs from the golden file (run go test -run TestCaddyfileAdapt -update to rewrite it)\n%s",
					name, unitLineDiff(want, got))
			}
		})
	}
}

// unitLineDiff shows the lines of want and got from the first that differs,
// a few either side.
func unitLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(i-3, 0)
	var b strings.Builder
	b.WriteString("first difference at line " + strconv.Itoa(i+1) + "; lines from " + strconv.Itoa(from+1) + ", - golden, + adapted:\n")
	for _, l := range w[from:min(i+6, len(w))] {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range g[from:min(i+6, len(g))] {
		b.WriteString("+ " + l + "\n")
	}
	return b.String()
}

// unitHandlerOrder lists the handler names of the first server of an
// adapted configuration in the order a request meets them, subroutes
// walked depth first.
func unitHandlerOrder(t *testing.T, adapted string) []string {
	t.Helper()
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Routes []unitRoute `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal([]byte(adapted), &cfg); err != nil {
		t.Fatal(err)
	}
	var names []string
	var walk func(routes []unitRoute)
	walk = func(routes []unitRoute) {
		for _, r := range routes {
			for _, h := range r.Handle {
				names = append(names, h.Handler)
				walk(h.Routes)
			}
		}
	}
	for _, srv := range cfg.Apps.HTTP.Servers {
		walk(srv.Routes)
	}
	return names
}

// unitRoute is the part of an adapted route that orders handlers.
type unitRoute struct {
	Handle []struct {
		Handler string      `json:"handler"`
		Routes  []unitRoute `json:"routes"`
	} `json:"handle"`
}

// TestDirectiveOrder checks the place robots_enforce takes among Caddy's
// standard directives, whatever order they are written in: after those that
// set variables and headers, before those that redirect, rewrite or answer.
// Unlike the golden files, it states the property, so -update cannot bless
// a change of it.
func TestDirectiveOrder(t *testing.T) {
	const cf = `:80 {
	file_server
	try_files {path} /index.html
	uri strip_prefix /app
	rewrite /old /new
	redir /gone /here 301
	respond /ping "pong"
	reverse_proxy /api/* 127.0.0.1:9000
	basic_auth /admin/* {
		admin $2a$14$Zkx19XLiW6VYouLHR5NmfOFU0z2GTNmpkT/5qqR7hx4IjWJPDhjvG
	}
	encode
	templates
	robots_enforce
	header X-Frame-Options DENY
	vars site demo
	root * /srv
}
`
	out, err := unitAdapt(t, "order", cf)
	if err != nil {
		t.Fatalf("adapting: %v", err)
	}
	order := unitHandlerOrder(t, out)
	t.Logf("handlers in order: %v", order)
	at := slices.Index(order, "robots_enforce")
	if at < 0 {
		t.Fatalf("handlers %v: no robots_enforce", order)
	}
	for _, before := range []string{"vars", "headers"} {
		if i := slices.Index(order, before); i < 0 || i > at {
			t.Errorf("handlers %v: %s at %d, want it before robots_enforce at %d", order, before, i, at)
		}
	}
	for _, after := range []string{"static_response", "rewrite", "authentication", "encode", "templates", "reverse_proxy", "file_server"} {
		if i := slices.Index(order, after); i < at {
			t.Errorf("handlers %v: %s at %d, want it after robots_enforce at %d", order, after, i, at)
		}
	}
	// redir is a static_response too: the first one after robots_enforce
	// must be the redirect, which comes before rewrite.
	if i := slices.Index(order[at:], "static_response"); i != 1 {
		t.Errorf("handlers %v: want redir's static_response right after robots_enforce", order)
	}
}
