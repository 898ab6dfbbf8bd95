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

// e2eRangeFileSite holds GPTBot to its group (Disallow: /private/) when it
// proves its claim by the operator's own list, <LIST>; a forged GPTBot is
// judged by "*", which closes everything.
const e2eRangeFileSite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: GPTBot
			Disallow: /private/

			User-agent: *
			Disallow: /
			TXT
		verify {
			builtin off
			ip_ranges GPTBot <LIST>
		}
	}
	respond "page"
}
http://:<PORT1> {
	bind 127.0.0.1
	metrics
}
`

// e2eRangeFileWait bounds the wait for the verifier's periodic look at an
// ip_ranges file (every 5 s): three looks, and never a sleep that
// asserts by itself.
const e2eRangeFileWait = 16 * time.Second

// e2eRangeList is an ip_ranges file holding prefix; pad spaces keep two
// lists of prefixes of different lengths the same size.
func e2eRangeList(prefix, pad string) string {
	return `{"prefixes": [{"ipv4Prefix": "` + prefix + `"}]}` + pad + "\n"
}

// An ip_ranges file is read again when it changes, within the verifier's
// check interval; a reload reads it at once, even an edit that kept its
// size and modification time; a file that no longer parses keeps the last
// good list in force, says so in the log (naming the file and the error)
// and in a metric, fails a reload, and is said to read again once fixed.
func TestE2EIPRangesFileReread(t *testing.T) {
	list := filepath.Join(t.TempDir(), "gptbot.json")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	write := func(body string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(list, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(list, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	write(e2eRangeList("192.0.2.0/24", "   "), t0)
	c := e2eStart(t, 2, e2eRangeFileSite, map[string]string{"<LIST>": filepath.ToSlash(list)})
	from := func(ip string) int {
		return c.getWith(0, "", "/page", e2eGPTBot, http.Header{"X-Forwarded-For": {ip}}).status
	}
	expect := func(when, ip string, want int) {
		t.Helper()
		if got := from(ip); got != want {
			t.Errorf("%s: GPTBot from %s GET /page = %d, want %d", when, ip, got, want)
		}
	}
	// poll waits, at most e2eRangeFileWait, for GPTBot from ip to be
	// judged as want.
	poll := func(when, ip string, want int) {
		t.Helper()
		deadline := time.Now().Add(e2eRangeFileWait)
		for from(ip) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: GPTBot from %s still not %d after %v", when, ip, want, e2eRangeFileWait)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	expect("the first list", "192.0.2.7", http.StatusOK)
	expect("the first list", "198.51.100.7", http.StatusForbidden)

	// An edit is in force within the check interval.
	write(e2eRangeList("198.51.100.0/24", ""), t0.Add(time.Minute))
	poll("after the file changed", "198.51.100.7", http.StatusOK)
	expect("after the file changed, the old range", "192.0.2.7", http.StatusForbidden)

	// An edit that keeps the file's size and modification time, which no
	// periodic look sees: a reload reads it at once.
	write(e2eRangeList("203.0.113.0/24", " "), t0.Add(time.Minute))
	c.load(e2eRangeFileSite)
	expect("at once after a reload", "203.0.113.7", http.StatusOK)
	expect("at once after a reload, the old range", "198.51.100.7", http.StatusForbidden)

	// A corrupt file: the last good list stays in force, the log says so.
	goodConfig := c.adapt(e2eRangeFileSite) // adapted while the file reads
	write("{\"prefixes\": [\n  {\"ipv4Prefix\": \"0.0.0.0/0\"}\n]}\n", t0.Add(2*time.Minute))
	var warning e2eRecord
	deadline := time.Now().Add(e2eRangeFileWait)
	for warning == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no warning of the corrupt file after %v", e2eRangeFileWait)
		}
		time.Sleep(50 * time.Millisecond)
		for _, name := range []string{"caddy.log", "robots.log"} {
			for _, rec := range c.readLog(name, "http.robots_enforce.verify") {
				if rec.str("level") == "warn" && rec.str("source") == filepath.ToSlash(list) {
					warning = rec
				}
			}
		}
	}
	if !strings.Contains(warning.str("msg"), "last good") || !strings.Contains(warning.str("error"), filepath.ToSlash(list)+":2") {
		t.Errorf("the corrupt file's warning: %q, error %q; want it to say the last good list stays, and the error to name %s:2",
			warning.str("msg"), warning.str("error"), list)
	}
	expect("with the file corrupt", "203.0.113.7", http.StatusOK)
	if n := e2eMetric(t, c, `caddy_robots_enforce_ip_ranges_failures_total{list="custom"}`); n != 1 {
		t.Errorf("ip_ranges_failures_total = %v, want 1", n)
	}
	// A reload with the corrupt file fails, naming it, whether the
	// Caddyfile is adapted again or the JSON adapted before is loaded; the
	// configuration running keeps its list.
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(c.caddyfile(e2eRangeFileSite)), map[string]any{"filename": "Caddyfile"})
	if err == nil || !strings.Contains(err.Error(), filepath.ToSlash(list)+":2") {
		t.Errorf("adapting the Caddyfile with the corrupt file: %v, want an error naming %s:2", err, list)
	}
	if err := caddy.Load(goodConfig, true); err == nil || !strings.Contains(err.Error(), filepath.ToSlash(list)+":2") {
		t.Errorf("a reload with the corrupt file: %v, want an error naming %s:2", err, list)
	}
	expect("after the failed reload", "203.0.113.7", http.StatusOK)

	// Fixed: in force again, and said.
	write(e2eRangeList("192.0.2.0/24", ""), t0.Add(3*time.Minute))
	poll("after the file was fixed", "192.0.2.7", http.StatusOK)
	again := c.linesWhere("caddy.log", "http.robots_enforce.verify", 1, func(rec e2eRecord) bool {
		return rec.str("level") == "info" && rec.str("source") == filepath.ToSlash(list)
	})
	if msg := again[len(again)-1].str("msg"); !strings.Contains(msg, "again") {
		t.Errorf("the fixed file's line: %q, want it said to load again", msg)
	}
}
