package integration

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile" // the caddyfile adapter
	_ "github.com/caddyserver/caddy/v2/modules/standard"      // file_server, log writers and encoders

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/render"
)

// The -update-auditlog flag runs TestAuditLogGenerate, which writes
// ../../testdata/audit/compliance.log: the log of a real Caddy with
// robots_enforce in log mode, for the golden tests of package audit. See
// testdata/audit/README.md.
var updateAuditLog = flag.Bool("update-auditlog", false, "run a real Caddy and write ../../testdata/audit/compliance.log")

// auditLogRobots is the inline robots.txt of www.example.com: named groups
// for two AI crawlers and for Googlebot, and a "*" group.
const auditLogRobots = `User-agent: GPTBot
User-agent: CCBot
Disallow: /

User-agent: Googlebot
Disallow: /search

User-agent: *
Disallow: /private/
Disallow: /search
Allow: /private/press/
`

// The robots.txt of blog.example.com, a file that changes during the run,
// so that requests /archive/ loses are recorded as grace.
const (
	auditLogBlogV1 = "User-agent: *\nDisallow: /drafts/\n"
	auditLogBlogV2 = "User-agent: *\nDisallow: /drafts/\nDisallow: /archive/\n"
)

// User-Agent headers of the run, as the clients send them.
const (
	auditLogGooglebot  = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	auditLogBingbot    = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
	auditLogGPTBot     = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	auditLogCCBot      = "CCBot/2.0 (https://commoncrawl.org/faq/)"
	auditLogClaudeBot  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	auditLogApplebot   = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)"
	auditLogBytespider = "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)"
	auditLogAhrefs     = "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"
	auditLogCurl       = "curl/8.5.0"
	auditLogPython     = "python-requests/2.32.3"
	auditLogChrome     = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	auditLogFirefox    = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	auditLogNoAgent    = ""
)

// auditLogStep is one request of the run: a Host, a User-Agent and a
// target as sent.
type auditLogStep struct{ host, ua, target string }

// auditLogPhases are the requests of the run, phase by phase; a second
// passes between phases, so that the log spans several seconds, and
// blog.example.com's robots.txt changes before the last phase.
var auditLogPhases = [][]auditLogStep{
	{ // Crawlers that read robots.txt first; a browser.
		{"www.example.com", auditLogGooglebot, "/robots.txt"},
		{"www.example.com", auditLogGooglebot, "/"},
		{"www.example.com", auditLogGooglebot, "/blog/post.html"},
		{"www.example.com", auditLogGooglebot, "/private/report.html"},
		{"www.example.com", auditLogGPTBot, "/robots.txt"},
		{"www.example.com", auditLogGPTBot, "/"},
		{"www.example.com", auditLogGPTBot, "/blog/post.html"},
		{"www.example.com", auditLogGPTBot, "/blog/2026/11/robots-enforce.html"},
		{"www.example.com", auditLogChrome, "/"},
		{"www.example.com", auditLogChrome, "/private/report.html"},
		{"blog.example.com", auditLogApplebot, "/robots.txt"},
		{"blog.example.com", auditLogApplebot, "/archive/2025/index.html"},
		{"blog.example.com", auditLogApplebot, "/posts/hello.html"},
		{"blog.example.com", auditLogBytespider, "/drafts/next.html"},
		{"blog.example.com", auditLogBytespider, "/archive/2025/index.html"},
	},
	{ // Crawlers that never read it; tools; a client without a User-Agent.
		{"www.example.com", auditLogCCBot, "/blog/post.html"},
		{"www.example.com", auditLogCCBot, "/blog/archive?page=2"},
		{"www.example.com", auditLogCCBot, "/private/report.html"},
		{"www.example.com", auditLogClaudeBot, "/robots.txt"},
		{"www.example.com", auditLogClaudeBot, "/blog/post.html"},
		{"www.example.com", auditLogClaudeBot, "/private/press/release.html"},
		{"www.example.com", auditLogCurl, "/"},
		{"www.example.com", auditLogCurl, "/private/report.html"},
		{"www.example.com", auditLogCurl, "/search?q=robots"},
		{"www.example.com", auditLogPython, "/search?q=a"},
		{"www.example.com", auditLogPython, "/search?q=b"},
		{"www.example.com", auditLogNoAgent, "/private/"},
		{"www.example.com", auditLogGPTBot, "/private/report.html"},
		{"www.example.com", auditLogGPTBot, "/search?q=robots.txt"},
	},
	{ // Spellings that try to slip past the rules; more of the same.
		{"www.example.com", auditLogBingbot, "/robots.txt"},
		{"www.example.com", auditLogBingbot, "/blog/post.html"},
		{"www.example.com", auditLogBingbot, "/private/report.html"},
		{"www.example.com", auditLogBingbot, "/%70rivate/report.html"},
		{"www.example.com", auditLogAhrefs, "//private/report.html"},
		{"www.example.com", auditLogAhrefs, "/blog/post.html"},
		{"www.example.com", auditLogFirefox, "/blog/post.html"},
		{"www.example.com", auditLogGPTBot, "/blog/post.html"},
		{"www.example.com", auditLogGPTBot, "/blog/2026/11/robots-enforce.html"},
		{"www.example.com", auditLogGooglebot, "/blog/2026/11/robots-enforce.html"},
	},
	{ // After blog.example.com's robots.txt added Disallow: /archive/.
		{"blog.example.com", auditLogApplebot, "/archive/2024/index.html"},
		{"blog.example.com", auditLogApplebot, "/robots.txt"},
		{"blog.example.com", auditLogApplebot, "/archive/2023/index.html"},
		{"blog.example.com", auditLogBytespider, "/archive/2024/index.html"},
		{"blog.example.com", auditLogBytespider, "/drafts/next.html"},
		{"blog.example.com", auditLogBytespider, "/drafts/later.html"},
		{"blog.example.com", auditLogGPTBot, "/posts/hello.html"},
		{"www.example.com", auditLogGPTBot, "/blog/post.html"},
		{"www.example.com", auditLogCCBot, "/blog/post.html"},
	},
}

// TestAuditLogGenerate runs a real Caddy (caddy.Load of an adapted
// Caddyfile, admin off, on two loopback ports) with robots_enforce in log
// mode and log_allowed, sends auditLogPhases, and writes the log it made,
// compliance records and all other entries, to
// ../../testdata/audit/compliance.log. It runs only with -update-auditlog:
//
//	go test -run TestAuditLogGenerate -update-auditlog ./caddymodule/integration/
func TestAuditLogGenerate(t *testing.T) {
	if !*updateAuditLog {
		t.Skip("writes ../../testdata/audit/compliance.log; run with -update-auditlog")
	}
	dest, err := filepath.Abs(filepath.Join("..", "..", "testdata", "audit", "compliance.log"))
	if err != nil {
		t.Fatal(err)
	}
	// Relative paths keep the temporary directory out of the records.
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("blog", 0o755); err != nil {
		t.Fatal(err)
	}
	auditLogWrite(t, "blog/robots.txt", auditLogBlogV1)
	www, blog := auditLogPort(t), auditLogPort(t)
	auditLogLoad(t, www, blog)

	client := &http.Client{Timeout: 5 * time.Second}
	for i, phase := range auditLogPhases {
		if i == len(auditLogPhases)-1 {
			auditLogWrite(t, "blog/robots.txt", auditLogBlogV2)
			// The file source looks at the file at most every
			// robotstxt.DefaultCheckInterval; the first request after it
			// reads the change.
			time.Sleep(5500 * time.Millisecond)
			auditLogGet(t, client, www, blog, auditLogStep{"blog.example.com", auditLogChrome, "/posts/hello.html"})
		} else if i > 0 {
			time.Sleep(time.Second)
		}
		for _, s := range phase {
			auditLogGet(t, client, www, blog, s)
		}
	}
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile("compliance.log")
	if err != nil {
		t.Fatal(err)
	}
	auditLogCheck(t, log)
	if err := os.WriteFile(dest, log, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d lines)", dest, bytes.Count(log, []byte("\n")))
}

// auditLogLoad loads the configuration: both sites write access logs and
// compliance records, and Caddy its own messages, to compliance.log, as a
// server with one log file for everything would.
func auditLogLoad(t *testing.T, www, blog string) {
	t.Helper()
	cf := `{
	admin off
	persist_config off
	auto_https off
	storage file_system storage
	log default {
		output file compliance.log
		format json
		exclude http.handlers.robots_enforce
	}
	log robots_compliance {
		output file compliance.log
		format json
		include http.handlers.robots_enforce
	}
}

http://:` + www + ` {
	bind 127.0.0.1
	log
	robots_enforce log {
		source inline <<ROBOTS
` + auditLogIndent(auditLogRobots, "\t\t\t") + `			ROBOTS
		log_allowed
	}
	respond /robots.txt <<ROBOTS
` + auditLogIndent(auditLogRobots, "\t\t") + `		ROBOTS 200
	respond "www.example.com"
}

http://:` + blog + ` {
	bind 127.0.0.1
	log
	robots_enforce log {
		source file blog/robots.txt
		log_allowed
	}
	handle /robots.txt {
		root * blog
		file_server
	}
	respond "blog.example.com"
}
`
	cfg, warn, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
	if err != nil {
		t.Fatalf("adapting the Caddyfile: %v\n%s", err, cf)
	}
	if len(warn) > 0 {
		t.Fatalf("adapting the Caddyfile: %v", warn)
	}
	if err := caddy.Load(e2eVerifyOff(t, cfg), true); err != nil {
		t.Fatalf("loading the configuration: %v", err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
}

// auditLogGet sends one request of the run, to the port of its host.
func auditLogGet(t *testing.T, client *http.Client, www, blog string, s auditLogStep) {
	t.Helper()
	port := www
	if s.host == "blog.example.com" {
		port = blog
	}
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+s.target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = s.host
	req.Header.Set("User-Agent", s.ua) // "" sends none
	if got := req.URL.RequestURI(); got != s.target {
		t.Fatalf("target %q would be sent as %q", s.target, got)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s%s: status %d, want 200 (log mode)", s.host, s.target, resp.StatusCode)
	}
}

// auditLogCheck fails when the log misses what the golden tests rely on.
func auditLogCheck(t *testing.T, log []byte) {
	t.Helper()
	a := audit.New(audit.Options{})
	if _, err := a.Read("compliance.log", bytes.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	var grace, afterFetch, allowed int64
	agents := map[string]bool{}
	for _, c := range r.Crawlers {
		grace += c.Grace
		afterFetch += c.ViolationsAfterFetch
		allowed += c.Allowed
		agents[strings.ToLower(c.Agent)] = true
	}
	for _, want := range []string{"gptbot", "ccbot", "googlebot", "bingbot", "applebot", "bytespider", "curl", ""} {
		if !agents[want] {
			t.Errorf("no records of agent %q", want)
		}
	}
	if grace == 0 || afterFetch == 0 || allowed == 0 || r.Total.Skipped["other_logger"] == 0 {
		t.Errorf("grace %d, violations after fetch %d, allowed %d, other loggers %d: want all > 0",
			grace, afterFetch, allowed, r.Total.Skipped["other_logger"])
	}
	if t.Failed() {
		var b bytes.Buffer
		_ = render.Table(&b, r)
		t.Log(b.String())
	}
}

func auditLogWrite(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// auditLogPort returns a loopback port that was free a moment ago.
func auditLogPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// auditLogIndent indents text for a heredoc whose closing marker is
// indented by prefix, which Caddy strips from every line.
func auditLogIndent(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString(prefix + line)
		}
	}
	return b.String()
}
