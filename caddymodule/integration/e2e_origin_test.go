package integration

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Against an origin that reads paths without regard to case, as IIS or a
// case-folding file system does, /PRIVATE/secret is /private/secret:
// without origin case_insensitive a crawler reads it by that spelling;
// with it, every spelling is denied (reading folded, protective: a
// crawler obeying RFC 9309 may fetch /PRIVATE/secret).
func TestE2ECaseInsensitiveOrigin(t *testing.T) {
	const secret = "SECRET-c4se: the private page"
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.ToLower(r.URL.Path) == "/private/secret" {
			w.Write([]byte(secret))
			return
		}
		w.Write([]byte("page"))
	}))
	defer origin.Close()
	site := func(port, option string) string {
		return `
http://:<PORT` + port + `> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: *
			Disallow: /Private/
			TXT
		` + option + `
	}
	reverse_proxy <ORIGIN>
}
`
	}
	c := e2eStart(t, 2, site("0", "origin case_sensitive")+site("1", "origin case_insensitive"),
		map[string]string{"<ORIGIN>": strings.TrimPrefix(origin.URL, "http://")})
	for _, tc := range []struct {
		port   int
		path   string
		status int
		body   string
	}{
		{0, "/private/secret", http.StatusOK, secret}, // the rule is /Private/: RFC 9309 compares with case
		{0, "/Private/secret", http.StatusForbidden, ""},
		{1, "/private/secret", http.StatusForbidden, ""},
		{1, "/PRIVATE/secret", http.StatusForbidden, ""},
		{1, "/PR%49VATE/secret", http.StatusForbidden, ""}, // decoded, then folded
		{1, "/public", http.StatusOK, "page"},
	} {
		r := c.get(tc.port, "", tc.path, e2eCrawler)
		if r.status != tc.status || tc.body != "" && r.body != tc.body {
			t.Errorf("port %d: GET %s = %d %q, want %d %q", tc.port, tc.path, r.status, r.body, tc.status, tc.body)
		}
	}
	recs := c.records(4)
	if r := recs[1]; r.str("uri") != "/private/secret" || r.str("reading") != "folded" || r.str("compliance") != "protective" {
		t.Errorf("the folded denial's record:\n%s", e2eDump(recs[1:2]))
	}
}

// The warning that the handler runs after a path rewrite fires whatever
// the source: with an inline robots.txt too.
func TestE2EAfterPathRewriteInline(t *testing.T) {
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	handle_path /app/* {
		robots_enforce {
			source inline "User-agent: *"
		}
		respond "app {path}"
	}
}
`, nil)
	c.get(0, "", "/app/x", e2eCrawler)
	warned := c.linesWhere("caddy.log", "http.robots_enforce", 1, func(rec e2eRecord) bool {
		return rec.str("level") == "warn" && rec.str("source") == "inline" && rec.str("rewritten_path") == "/x"
	})
	time.Sleep(100 * time.Millisecond)
	if len(warned) != 1 {
		t.Errorf("warnings: %s, want one", e2eDump(warned))
	}
}
