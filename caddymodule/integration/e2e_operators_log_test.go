package integration

import (
	"os"
	"strings"
	"testing"
)

// TestE2EOperatorsLogApart runs the logging block docs/audit.md gives for
// keeping records in a log that includes all of http: the records reach
// that log and the handler's warnings do not; the warnings reach the
// operators' log, which holds no record.
func TestE2EOperatorsLogApart(t *testing.T) {
	doc, err := os.ReadFile("../../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### Records apart from the operators' lines\n")
	_, block, ok2 := strings.Cut(section, "```caddyfile\n")
	block, _, ok3 := strings.Cut(block, "```")
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if !ok || !ok2 || !ok3 || len(lines) < 3 || lines[0] != "{" || lines[len(lines)-1] != "}" {
		t.Fatalf("docs/audit.md: no global options block under its section on the operators' lines:\n%s", block)
	}
	global := strings.ReplaceAll(strings.Join(lines[1:len(lines)-1], "\n"), "/var/log/caddy/", "<DIR>/")
	if !strings.Contains(global, "<DIR>/http.log") || !strings.Contains(global, "<DIR>/robots-operators.log") {
		t.Fatalf("the block's logs are not the files this test reads:\n%s", global)
	}
	// A path rewritten before the handler draws a warning, on the
	// operators' logger, when the first request shows it.
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	handle_path /app/* {
		robots_enforce {
			source inline "User-agent: *"
			log_allowed
		}
		respond "app {path}"
	}
}
`, map[string]string{"<GLOBAL>": global})
	if r := c.get(0, "", "/app/x", e2eCrawler); r.status != 200 {
		t.Fatalf("GET /app/x: %d, want 200", r.status)
	}
	c.linesWhere("http.log", "http.handlers.robots_enforce", 1, func(rec e2eRecord) bool {
		return rec.str("msg") == "robots.txt decision"
	})
	c.linesWhere("robots-operators.log", "http.robots_enforce", 1, func(rec e2eRecord) bool {
		return rec.str("level") == "warn" && rec.str("rewritten_path") == "/x"
	})
	if got := c.readLog("http.log", "http.robots_enforce"); len(got) != 0 {
		t.Errorf("the records' log holds the operators' lines:\n%s", e2eDump(got))
	}
	if got := c.readLog("robots-operators.log", "http.handlers.robots_enforce"); len(got) != 0 {
		t.Errorf("the operators' log holds records:\n%s", e2eDump(got))
	}
}
