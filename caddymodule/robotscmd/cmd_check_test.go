package robotscmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/caddymodule"
	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// User-Agent headers of the check tests.
const (
	cmdGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	cmdGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	cmdChrome    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	// cmdCrawler is a crawler no group names: the "*" group binds it.
	cmdCrawler = "ExampleCrawler/1.0 (+https://crawler.example/about)"
)

const (
	cmdDemo   = "../../testdata/demo/robots.txt"
	cmdShop   = "testdata/commands/shop.txt"
	cmdAIPref = "testdata/commands/aipref.txt"
)

// TestCheckGolden checks the text and JSON output of caddy robots check,
// and its exit status: 0 when every target is allowed, 1 when one is not.
func TestCheckGolden(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		status int
	}{
		{"demo-gptbot", []string{"--robots", cmdDemo, "--ua", cmdGPTBot, "/blog/post.html", "/robots.txt"}, 1},
		{"demo-token", []string{"--robots", cmdDemo, "--ua", "ClaudeBot", "/"}, 1},
		// The default policy binds crawlers only: curl, a tool, passes.
		{"demo-curl", []string{"--robots", cmdDemo, "--ua", "curl/8.5.0", "/private/report.html", "/index.html"}, 0},
		{"demo-curl-automated", []string{"--robots", cmdDemo, "--ua", "curl/8.5.0", "--wildcard", "automated",
			"/private/report.html", "/private/press/release.html", "/pub/..%2Fprivate/report.html", "//private/x", "/index.html"}, 1},
		{"demo-curl-bots", []string{"--robots", cmdDemo, "--ua", "curl/8.5.0", "--wildcard", "bots", "/private/report.html"}, 1},
		{"demo-crawler", []string{"--robots", cmdDemo, "--ua", cmdCrawler,
			"/private/report.html", "/private/press/release.html", "/pub/..%2Fprivate/report.html", "//private/x", "/private%2Fx", "/index.html"}, 1},
		{"demo-browser", []string{"--robots", cmdDemo, "--ua", cmdChrome, "/private/report.html"}, 0},
		{"demo-browser-all", []string{"--robots", cmdDemo, "--ua", cmdChrome, "--wildcard", "all", "/private/report.html"}, 1},
		{"demo-no-ua", []string{"--robots", cmdDemo, "--ua", "", "/private/report.html", "*"}, 0},
		{"demo-no-ua-automated", []string{"--robots", cmdDemo, "--ua", "", "--wildcard", "automated", "/private/report.html", "*"}, 1},
		{"demo-no-ua-none", []string{"--robots", cmdDemo, "--ua", "", "--wildcard", "none", "/private/report.html"}, 0},
		{"shop-googlebot", []string{"--robots", cmdShop, "--ua", cmdGooglebot,
			"/checkout/pay", "/drafts/a", "/internal/x", "/internal/press/y", "/fish", "/cart"}, 1},
		{"shop-googlebot-news", []string{"--robots", cmdShop, "--ua", "Googlebot-News", "/checkout/pay", "/drafts/a"}, 1},
		{"shop-crawler", []string{"--robots", cmdShop, "--ua", "ExampleCrawler/1.0",
			"/catalog/shoes", "/catalog/shoes?color=red", "/search/q", "/data.json", "/data.json?v=2", "/account/help", "https://shop.example/account/orders"}, 1},
		{"shop-bingbot", []string{"--robots", cmdShop, "--ua", "bingbot/2.0", "/cart", "/checkout/pay"}, 0},
		{"shop-allow-listed", []string{"--robots", cmdShop, "--ua", "GPTBot", "--allow-agents", "gptbot", "/cart"}, 0},
		// AI usage preferences (draft-ietf-aipref-attach-05): the named
		// group's for a named crawler (two rules of one path combine),
		// none where that group has none; the "*" group's for everyone
		// else, browsers included, but none for a path it disallows.
		{"aipref-gptbot", []string{"--robots", cmdAIPref, "--ua", cmdGPTBot, "/blog/post", "/open/x", "/drafts/a", "/robots.txt"}, 1},
		{"aipref-googlebot", []string{"--robots", cmdAIPref, "--ua", cmdGooglebot, "/blog/post"}, 0},
		{"aipref-crawler", []string{"--robots", cmdAIPref, "--ua", cmdCrawler, "/blog/post", "/open/x", "/about", "/private/x"}, 1},
		{"aipref-browser", []string{"--robots", cmdAIPref, "--ua", cmdChrome, "/blog/post", "/private/x"}, 0},
		// Content Signals map onto the vocabulary and combine with a
		// Content-Usage rule; check names the line each part came from.
		{"signals-crawler", []string{"--robots", "testdata/commands/signals.txt", "--ua", cmdCrawler, "/blog/post", "/drafts/a"}, 0},
		// A crawler escalated for a violation: block denies what its
		// group allows, but /robots.txt.
		{"escalated-block", []string{"--robots", cmdDemo, "--ua", cmdCrawler, "--escalated", "block", "/index.html", "/robots.txt"}, 1},
		// An origin that reads paths without regard to case.
		{"case-insensitive", []string{"--robots", cmdDemo, "--ua", cmdCrawler, "--origin", "case_insensitive", "/PRIVATE/report.html", "/Private/Press/x"}, 1},
	}
	for _, tt := range tests {
		for _, format := range []string{"txt", "json"} {
			t.Run(tt.name+"."+format, func(t *testing.T) {
				args := append([]string{"check"}, tt.args...)
				if format == "json" {
					args = slices.Insert(args, 1, "--json")
				}
				out, status, err := cmdRun(t, args...)
				if status != tt.status || err != nil {
					t.Errorf("status %d, error %v; want %d, no error", status, err, tt.status)
				}
				if format == "json" {
					for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
						if !json.Valid([]byte(line)) {
							t.Errorf("not a JSON object: %s", line)
						}
					}
				}
				cmdGolden(t, "check-"+tt.name+"."+format, cmdTranscript(args, out))
			})
		}
	}
}

// TestCheckUsage checks the usage and input errors of caddy robots check:
// exit status 2, and an error that says what is wrong.
func TestCheckUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no robots", []string{"--ua", "GPTBot", "/"}, "--robots is required"},
		{"no ua", []string{"--robots", cmdDemo, "/"}, "--ua is required"},
		{"no target", []string{"--robots", cmdDemo, "--ua", "GPTBot"}, "no target"},
		{"relative target", []string{"--robots", cmdDemo, "--ua", "GPTBot", "private/x"}, `target "private/x"`},
		{"bad wildcard", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--wildcard", "some", "/"}, "--wildcard"},
		{"bad unreachable", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--unreachable", "maybe", "/"}, "--unreachable"},
		{"bad allow agent", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--allow-agents", "My Bot", "/"}, "--allow-agents"},
		{"small max size", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--max-size", "100KiB", "/"}, "at least 500KiB"},
		{"bad max size", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--max-size", "big", "/"}, "not a size"},
		{"unknown flag", []string{"--robot", cmdDemo}, "unknown flag"},
		{"missing file", []string{"--robots", "testdata/commands/missing.txt", "--ua", "GPTBot", "/"}, "no such file"},
		{"directory", []string{"--robots", "testdata/commands", "--ua", "GPTBot", "/"}, "is a directory"},
		{"url without host", []string{"--robots", "http:///robots.txt", "--ua", "GPTBot", "/"}, "no host"},
		{"target the server refuses", []string{"--robots", cmdDemo, "--ua", "GPTBot", "/a%zz"}, "400 Bad Request"},
		{"bad ip", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--ip", "192.0.2", "/"}, "--ip"},
		{"bad forged", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--ip", "192.0.2.1", "--forged", "allow", "/"}, "--forged"},
		{"forged without ip", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--forged", "deny", "/"}, "--forged: verifies a claim"},
		{"ranges without ip", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--ip-ranges", "GPTBot=" + cmdRanges, "/"}, "give --ip"},
		{"bad ranges", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--ip", "192.0.2.1", "--ip-ranges", "GPTBot", "/"}, "--ip-ranges"},
		{"bad resolver", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--ip", "192.0.2.1", "--resolver", "dns.example", "/"}, "--resolver"},
		{"bad escalation", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--escalated", "ban", "/"}, `--escalated "ban": want enforce or block`},
		{"undeclared bind with no list", []string{"--robots", cmdDemo, "--ua", "GPTBot", "--ip", "192.0.2.1", "--undeclared", "bind", "--verify-builtin", "off", "/"},
			"--undeclared bind: there is no range list to bind a client by"},
		{"an HTML page", []string{"--robots", "testdata/commands/page.html", "--ua", "GPTBot", "/"}, "--robots testdata/commands/page.html: error: an HTML page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, status, err := cmdRun(t, append([]string{"check"}, tt.args...)...)
			if status != exitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("check %q: status %d, error %v; want %d, an error with %q", tt.args, status, err, exitUsage, tt.want)
			}
			if out != "" {
				t.Errorf("check %q printed %q, want nothing", tt.args, out)
			}
		})
	}
}

// cmdRobotsServer serves robots.txt answers on 127.0.0.1, by path.
func cmdRobotsServer(t *testing.T) *httptest.Server {
	t.Helper()
	demo := "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/ok/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(demo))
	})
	mux.HandleFunc("/moved/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok/robots.txt", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/missing/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	})
	mux.HandleFunc("/error/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database down", http.StatusInternalServerError)
	})
	mux.HandleFunc("/busy/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	mux.HandleFunc("/html/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>Sign in</title>\n"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// cmdJSON is one result of caddy robots check --json: the compliance
// record's fields and check's own (package record names them).
type cmdJSON map[string]any

// str returns the string field named key, "" when absent.
func (r cmdJSON) str(key string) string {
	s, _ := r[key].(string)
	return s
}

// cmdCheckJSON runs caddy robots check --json and decodes its results.
func cmdCheckJSON(t *testing.T, args ...string) ([]cmdJSON, int, error) {
	t.Helper()
	out, status, err := cmdRun(t, append([]string{"check", "--json"}, args...)...)
	var results []cmdJSON
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r cmdJSON
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		results = append(results, r)
	}
	return results, status, err
}

// TestCheckURL checks --robots as a URL: fetched as the handler's url
// source fetches it (RFC 9309 §2.3.1), with the same outcomes.
func TestCheckURL(t *testing.T) {
	srv := cmdRobotsServer(t)
	tests := []struct {
		name, path, ua string
		extra          []string
		status         int
		verdict        string
		reason         string
		access         string
	}{
		{"available, named", "/ok/robots.txt", "GPTBot", nil, 1, "deny", "named_group", "available"},
		{"available, wildcard", "/ok/robots.txt", "ExampleCrawler/1.0", nil, 1, "deny", "wildcard_group", "available"},
		{"available, a tool passes", "/ok/robots.txt", "curl/8.5.0", nil, 0, "allow", "not_automated", "available"},
		{"500: unreachable, a tool passes", "/error/robots.txt", "curl/8.5.0", nil, 0, "allow", "not_automated", "unreachable"},
		{"500: unreachable, --wildcard automated binds a tool", "/error/robots.txt", "curl/8.5.0", []string{"--wildcard", "automated"}, 1, "deny", "unreachable", "unreachable"},
		{"redirected", "/moved/robots.txt", "GPTBot", nil, 1, "deny", "named_group", "available"},
		{"404: unavailable, all allowed", "/missing/robots.txt", "GPTBot", nil, 0, "allow", "unavailable", "unavailable"},
		{"500: unreachable, crawler denied", "/error/robots.txt", "GPTBot", nil, 1, "deny", "unreachable", "unreachable"},
		{"500: unreachable, browser passes", "/error/robots.txt", cmdChrome, nil, 0, "allow", "not_automated", "unreachable"},
		{"500 with --unreachable allow", "/error/robots.txt", "GPTBot", []string{"--unreachable", "allow"}, 0, "allow", "unavailable", "unreachable"},
		{"429: unreachable", "/busy/robots.txt", "GPTBot", nil, 1, "deny", "unreachable", "unreachable"},
		{"HTML page: unreachable", "/html/robots.txt", "GPTBot", nil, 1, "deny", "unreachable", "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--robots", srv.URL + tt.path, "--ua", tt.ua, "/private/x"}, tt.extra...)
			results, status, err := cmdCheckJSON(t, args...)
			if status != tt.status || err != nil || len(results) != 1 {
				t.Fatalf("check %q: status %d, error %v, %d results; want %d, no error, 1 result", args, status, err, len(results), tt.status)
			}
			r := results[0]
			verdict, reason, access, source := r.str(record.Verdict), r.str(record.Reason), r.str(record.RobotsAccess), r.str(record.RobotsSource)
			if verdict != tt.verdict || reason != tt.reason || access != tt.access || source != srv.URL+tt.path {
				t.Errorf("check %q = %s, %s, access %s, source %s; want %s, %s, access %s, source %s", args,
					verdict, reason, access, source, tt.verdict, tt.reason, tt.access, srv.URL+tt.path)
			}
		})
	}

	t.Run("text names the failure", func(t *testing.T) {
		out, status, _ := cmdRun(t, "check", "--robots", srv.URL+"/error/robots.txt", "--ua", "GPTBot", "/")
		if status != exitFindings || !strings.Contains(out, "(unreachable: fetching "+srv.URL+"/error/robots.txt: status 500") ||
			!strings.Contains(out, "unreachable: robots.txt is unreachable: complete disallow for crawlers") {
			t.Errorf("check on a 500: status %d, output:\n%s", status, out)
		}
	})

	t.Run("no response is an input error", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		url := closed.URL + "/robots.txt"
		closed.Close()
		out, status, err := cmdRun(t, "check", "--robots", url, "--ua", "GPTBot", "/")
		if status != exitUsage || err == nil || !strings.Contains(err.Error(), "unreachable, no HTTP response") || out != "" {
			t.Errorf("check on a closed port: status %d, error %v, output %q; want %d and an error", status, err, out, exitUsage)
		}
	})
}

// TestCheckTexts checks that every reason, and every sign the classifier
// reports, has a sentence of its own in the text output, so that a reason
// or a sign added to enforce shows here as a failure, not as a bare name.
func TestCheckTexts(t *testing.T) {
	snap := &robotstxt.Snapshot{Access: robotstxt.AccessAvailable}
	seen := map[string]enforce.Reason{}
	for r := range enforce.Reason(enforce.NumReasons) {
		dec := enforce.Decision{Reason: r, Token: "GPTBot", Snapshot: snap,
			Classification: agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedCatalogue}}
		text := checkReasonText(&dec, enforce.Policy{}, "")
		if text == r.String() || len(text) < 15 {
			t.Errorf("checkReasonText(%s) = %q, want a sentence", r, text)
		}
		if prev, dup := seen[text]; dup {
			t.Errorf("checkReasonText(%s) = checkReasonText(%s) = %q", r, prev, text)
		}
		seen[text] = r
	}
	signs := []struct {
		c    agent.Classification
		want string // in the text
	}{
		{agent.Classification{Class: agent.ClassBrowser}, "browser: "},
		{agent.Classification{Class: agent.ClassAutomated, Automation: agent.AutomatedNoUserAgent}, "automated, not a crawler: no User-Agent"},
		{agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedCatalogue, Token: "GPTBot", Category: agent.CategoryAI}, "crawler: the catalogue lists GPTBot among AI"},
		{agent.Classification{Class: agent.ClassAutomated, Automation: agent.AutomatedCatalogue, Token: "curl", Category: agent.CategoryTool}, "automated, not a crawler: the catalogue lists curl among HTTP"},
		{agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedKeyword, Token: "MJ12bot"}, "crawler: the word MJ12bot names a crawler"},
		{agent.Classification{Class: agent.ClassAutomated, Automation: agent.AutomatedKeyword, Token: "UptimeBot"}, "automated, not a crawler: the word UptimeBot names a monitor"},
		{agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedParser}, "crawler: github.com/mssola/useragent"},
		{agent.Classification{Class: agent.ClassAutomated, Automation: agent.AutomatedShape}, "automated, not a crawler: the header is not shaped like a browser's"},
		{agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedLink}, "crawler: the header gives a URL"},
		{agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedTooLong}, "crawler: the header is longer than the 1024 octets"},
		{agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedRanges}, "crawler: the address is in a crawler operator's published range list"},
	}
	for _, s := range signs {
		if got := checkClassText(s.c); !strings.HasPrefix(got, s.want) && !strings.Contains(got, s.want) {
			t.Errorf("checkClassText(%s, %s) = %q, want %q in it", s.c.Class, s.c.Automation, got, s.want)
		}
	}
}

// TestCheckMessagesAreTheDirectives checks that check reads its flags with
// the handler's own code: each bad value gets the message the directive's
// option gets for it, with the flag in place of the option's name.
func TestCheckMessagesAreTheDirectives(t *testing.T) {
	for _, tt := range []struct {
		flag, value, option string
		set                 func(h *caddymodule.Handler, value string)
	}{
		{"--wildcard", "some", "wildcard", func(h *caddymodule.Handler, v string) { h.Wildcard = v }},
		{"--unreachable", "maybe", "unreachable", func(h *caddymodule.Handler, v string) { h.Unreachable = v }},
		{"--origin", "folded", "origin", func(h *caddymodule.Handler, v string) { h.Origin = v }},
		{"--allow-agents", "My Bot", "allow_agents", func(h *caddymodule.Handler, v string) { h.AllowAgents = []string{v} }},
		{"--escalated", "ban", "violators", func(h *caddymodule.Handler, v string) { h.Violators = &caddymodule.RepeatViolators{Mode: v} }},
		{"--forged", "allow", "verify forged", func(h *caddymodule.Handler, v string) { h.Verify = &caddymodule.Verify{Forged: v} }},
		{"--undeclared", "always", "verify undeclared", func(h *caddymodule.Handler, v string) { h.Verify = &caddymodule.Verify{Undeclared: v} }},
		{"--verify-builtin", "maybe", "verify builtin", func(h *caddymodule.Handler, v string) { h.Verify = &caddymodule.Verify{Builtin: v} }},
		{"--resolver", "dns.example", "verify resolver", func(h *caddymodule.Handler, v string) { h.Verify = &caddymodule.Verify{Resolver: v} }},
	} {
		var h caddymodule.Handler
		tt.set(&h, tt.value)
		_, herr := h.Settings()
		if herr == nil {
			t.Fatalf("%s %q: the handler takes it, want an error", tt.option, tt.value)
		}
		_, directive, _ := strings.Cut(herr.Error(), "robots_enforce: ")
		want := tt.flag + strings.TrimPrefix(directive, tt.option)
		args := []string{"check", "--robots", cmdDemo, "--ua", "GPTBot", tt.flag, tt.value, "/"}
		if strings.HasPrefix(tt.option, "verify") {
			args = append(args, "--ip", "192.0.2.1")
		}
		_, status, err := cmdRun(t, args...)
		if status != exitUsage || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("check %s %q: status %d, error %v; want %d and the directive's message %q", tt.flag, tt.value, status, err, exitUsage, want)
		}
	}
}
