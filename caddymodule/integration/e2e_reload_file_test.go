package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// e2eFileSite enforces the robots.txt file <FILE>.
const e2eFileSite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source file <FILE>
		body denied
	}
	respond "page {path}"
}
`

// An operator who edits a source file robots.txt and reloads has the new
// file in force for the very next request, not when the file source's
// next look comes due (robotstxt.DefaultCheckInterval); the earlier version
// and who was served it stay. So too when the edit kept the file's size
// and modification time, which no look of the source would notice. A
// reload while the file cannot be read fails, naming it, and the running
// configuration and its state carry on.
func TestE2EReloadRereadsSourceFile(t *testing.T) {
	const (
		v1 = "User-agent: *\nDisallow: /old/\n"
		v2 = "User-agent: *\nDisallow: /old/\nDisallow: /new/\n"
		v3 = "User-agent: *\nDisallow: /old/\nDisallow: /neu/\n" // v2's size
	)
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eStart(t, 1, e2eFileSite, map[string]string{"<FILE>": filepath.ToSlash(file)})
	const honest, other = "HonestBot/1.0 (+https://honest.example)", "OtherBot/1.0 (+https://other.example)"
	from := map[string]http.Header{honest: {"X-Forwarded-For": {"192.0.2.1"}}, other: {"X-Forwarded-For": {"192.0.2.2"}}}
	get := func(path, ua string) e2eResponse { return c.getWith(0, "", path, ua, from[ua]) }
	// want checks a request's status and, for a denial, its record: the
	// compliance (grace for what only a version of the last day
	// disallows) and whether the client was served robots.txt.
	want := func(step, path, ua string, status int, compliance string) {
		t.Helper()
		r := get(path, ua)
		if r.status != status {
			t.Errorf("%s: GET %s by %s = %d, want %d", step, path, ua, r.status, status)
			return
		}
		if status != http.StatusForbidden {
			return
		}
		recs := c.records(1)
		rec := recs[len(recs)-1]
		if rec.str("uri") != path || rec.str("compliance") != compliance || rec["served_robots"] != (ua == honest) {
			t.Errorf("%s: GET %s by %s recorded %s, served %v; want %s, served %v\n%s", step, path, ua,
				rec.str("compliance"), rec["served_robots"], compliance, ua == honest, e2eDump(recs[len(recs)-1:]))
		}
	}

	if r := get("/robots.txt", honest); r.body != v1 {
		t.Fatalf("GET /robots.txt = %d %q, want the file", r.status, r.body)
	}
	want("v1", "/old/a", other, http.StatusForbidden, "violation")
	want("v1", "/new/a", other, http.StatusOK, "")

	// An edit and a reload, well within the source's check interval of
	// its last look, at the start.
	writeFile := func(body string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(v2)
	c.load(e2eFileSite)
	// v1 allowed /new/ a moment ago: grace. HonestBot is still known to
	// have been served v1.
	want("v2 reloaded", "/new/b", other, http.StatusForbidden, "grace")
	want("v2 reloaded", "/new/c", honest, http.StatusForbidden, "grace")
	want("v2 reloaded", "/old/b", honest, http.StatusForbidden, "violation")

	// An edit that keeps the size and the modification time.
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(v3)
	if err := os.Chtimes(file, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	c.load(e2eFileSite)
	want("v3 reloaded", "/neu/a", other, http.StatusForbidden, "grace")
	want("v3 reloaded", "/new/d", other, http.StatusOK, "")

	// A directory in the file's place: the Caddyfile no longer adapts,
	// and the JSON adapted before fails to load, each naming the file;
	// the running configuration keeps its last copy. The file back, a
	// reload finds the state with its history.
	adapted := c.adapt(e2eFileSite)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(file, 0o755); err != nil {
		t.Fatal(err)
	}
	isDir := "source file " + filepath.ToSlash(file) + " is a directory"
	if _, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(c.caddyfile(e2eFileSite)), map[string]any{"filename": "Caddyfile"}); err == nil ||
		!strings.Contains(err.Error(), isDir) || !strings.Contains(err.Error(), ", at Caddyfile:") {
		t.Errorf("adapting with a directory for the file: %v, want an error naming it and its line", err)
	}
	if err := caddy.Load(adapted, true); err == nil || !strings.Contains(err.Error(), isDir) {
		t.Errorf("reloading with a directory for the file: %v, want an error naming it", err)
	}
	want("file unreadable", "/neu/b", other, http.StatusForbidden, "grace")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	writeFile(v3)
	c.load(e2eFileSite)
	want("file back", "/new/e", honest, http.StatusOK, "")
	want("file back", "/neu/c", honest, http.StatusForbidden, "grace")
}
