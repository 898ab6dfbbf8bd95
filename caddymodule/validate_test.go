package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// unitValidHandler is a configuration as Provision leaves it: Validate
// runs after defaults are set.
func unitValidHandler() Handler {
	return Handler{Mode: "enforce", Status: 403}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(h *Handler)
		want   string // a substring of the error; "" for none
	}{
		{"defaults", func(h *Handler) {}, ""},
		{"log mode", func(h *Handler) { h.Mode = "log" }, ""},
		{"every option", func(h *Handler) {
			h.Mode, h.Status, h.Body = "log", 451, "no"
			h.Wildcard, h.Unreachable = "all", "allow"
			h.Refresh, h.FetchTimeout = caddy.Duration(24*time.Hour), caddy.Duration(time.Second)
			h.MaxSize, h.MaxHosts = 500<<10, 1
			h.AllowAgents = []string{"UptimeRobot", "my-monitor", "other_check"}
			h.LogAllowed = true
		}, ""},
		{"status 400", func(h *Handler) { h.Status = 400 }, ""},
		{"status 599", func(h *Handler) { h.Status = 599 }, ""},
		{"unreachable deny", func(h *Handler) { h.Unreachable = "deny" }, ""},
		{"source upstream", func(h *Handler) { h.Source = &Source{Kind: "upstream"} }, ""},
		{"source of no kind", func(h *Handler) { h.Source = &Source{} }, ""},
		{"source file", func(h *Handler) { h.Source = &Source{Kind: "file", Path: "../testdata/demo/robots.txt"} }, ""},
		{"source file missing", func(h *Handler) { h.Source = &Source{Kind: "file", Path: "no/such/robots.txt"} }, "source file: stat no/such/robots.txt"},
		{"max_size too large", func(h *Handler) { h.MaxSize = 1 << 30 }, "max_size 1073741824: want at most"},
		{"bad wildcard", func(h *Handler) { h.Wildcard = "everyone" }, `wildcard policy "everyone"`},
		{"bad content_usage", func(h *Handler) { h.ContentUsage = "strip" }, `content_usage "strip": want header, off or override`},
		{"bad serve_robots", func(h *Handler) { h.ServeRobots = "both" }, `serve_robots "both": want enforced or origin`},
		{"bad verify forged", func(h *Handler) { h.Verify = &Verify{Forged: "block"} }, `verify forged "block": want wildcard, deny or ignore`},
		{"source url https", func(h *Handler) { h.Source = &Source{Kind: "url", URL: "https://example.com/robots.txt"} }, ""},
		{"source url http", func(h *Handler) { h.Source = &Source{Kind: "url", URL: "http://127.0.0.1:8080/robots.txt"} }, ""},
		{"source inline", func(h *Handler) { h.Source = &Source{Kind: "inline", Text: "User-agent: *\n"} }, ""},

		{"no mode", func(h *Handler) { h.Mode = "" }, `mode "": want enforce or log`},
		{"bad mode", func(h *Handler) { h.Mode = "block" }, `mode "block": want enforce or log`},
		{"no status", func(h *Handler) { h.Status = 0 }, "status 0: want an error status, 400 to 599"},
		{"status 399", func(h *Handler) { h.Status = 399 }, "status 399: want an error status, 400 to 599"},
		{"status 200", func(h *Handler) { h.Status = 200 }, "status 200: want an error status"},
		{"status 600", func(h *Handler) { h.Status = 600 }, "status 600: want an error status, 400 to 599"},
		{"bad unreachable", func(h *Handler) { h.Unreachable = "keep" }, `unreachable "keep": want deny or allow`},
		{"refresh over a day", func(h *Handler) { h.Refresh = caddy.Duration(25 * time.Hour) }, "refresh 25h0m0s: want between 1m0s and 24h0m0s"},
		{"negative refresh", func(h *Handler) { h.Refresh = caddy.Duration(-time.Second) }, "refresh -1s: want between 1m0s and 24h0m0s"},
		{"refresh under a minute", func(h *Handler) { h.Refresh = caddy.Duration(time.Second) }, "refresh 1s: want between 1m0s and 24h0m0s"},
		{"max_size under 500 KiB", func(h *Handler) { h.MaxSize = 500<<10 - 1 }, "max_size 511999: want at least 512000 octets"},
		{"negative max_size", func(h *Handler) { h.MaxSize = -1 }, "max_size -1: want at least 512000 octets"},
		{"negative fetch_timeout", func(h *Handler) { h.FetchTimeout = caddy.Duration(-time.Second) }, "fetch_timeout -1s: want between 100ms and 1m0s"},
		{"fetch_timeout 1ns", func(h *Handler) { h.FetchTimeout = caddy.Duration(time.Nanosecond) }, "fetch_timeout 1ns: want between 100ms and 1m0s"},
		{"fetch_timeout an hour", func(h *Handler) { h.FetchTimeout = caddy.Duration(time.Hour) }, "fetch_timeout 1h0m0s: want between 100ms and 1m0s"},
		{"negative max_hosts", func(h *Handler) { h.MaxHosts = -1 }, "max_hosts -1: want between 1 and 1000000"},
		{"huge max_hosts", func(h *Handler) { h.MaxHosts = 999999999999 }, "max_hosts 999999999999: want between 1 and 1000000"},
		{"max_memory at the least", func(h *Handler) { h.MaxMemory = 64 << 20 }, ""},
		{"max_memory under 64 MiB", func(h *Handler) { h.MaxMemory = 64<<20 - 1 }, "max_memory 67108863: want between 67108864 (64 MiB"},
		{"max_memory past 1 TiB", func(h *Handler) { h.MaxMemory = 1<<40 + 1 }, "max_memory 1099511627777: want between"},
		{"new_hosts without a period", func(h *Handler) { h.NewHosts = &NewHosts{Count: 10} }, "new_hosts 10 per 0s: want a positive count and period"},
		{"source url with credentials", func(h *Handler) { h.Source = &Source{Kind: "url", URL: "https://user:pw@example.com/robots.txt"} }, "source url: credentials in the URL"},
		{"empty allow_agents token", func(h *Handler) { h.AllowAgents = []string{""} }, `allow_agents "": a product token is letters`},
		{"allow_agents with a version", func(h *Handler) { h.AllowAgents = []string{"Pingdom/1.0"} }, `allow_agents "Pingdom/1.0": a product token is letters`},
		{"allow_agents with a space", func(h *Handler) { h.AllowAgents = []string{"ok", "my monitor"} }, `allow_agents "my monitor": a product token is letters`},
		{"allow_agents with a digit", func(h *Handler) { h.AllowAgents = []string{"bot2"} }, `allow_agents "bot2": a product token is letters`},
		{"source file without a path", func(h *Handler) { h.Source = &Source{Kind: "file"} }, "source file: no path"},
		{"source url ftp", func(h *Handler) { h.Source = &Source{Kind: "url", URL: "ftp://example.com/robots.txt"} }, `source url "ftp://example.com/robots.txt": want an http or https URL`},
		{"source url without a scheme", func(h *Handler) { h.Source = &Source{Kind: "url", URL: "example.com/robots.txt"} }, `source url "example.com/robots.txt": want an http or https URL`},
		{"source url without a host", func(h *Handler) { h.Source = &Source{Kind: "url", URL: "https:///robots.txt"} }, `source url "https:///robots.txt": want an http or https URL`},
		{"source url empty", func(h *Handler) { h.Source = &Source{Kind: "url"} }, `source url "": want an http or https URL`},
		{"unknown source kind", func(h *Handler) { h.Source = &Source{Kind: "s3"} }, `source "s3": want upstream, file, url or inline`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := unitValidHandler()
			tt.change(&h)
			err := h.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Errorf("Validate() = nil, want an error containing %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("Validate() = %q, want it to contain %q", err, tt.want)
			case err != nil && !strings.HasPrefix(err.Error(), "robots_enforce: "):
				t.Errorf("Validate() = %q, want it to start with %q", err, "robots_enforce: ")
			}
		})
	}
}

// TestValidateReportsEveryProblem checks that one Validate call names each
// invalid option, so a configuration is fixed in one pass.
func TestValidateReportsEveryProblem(t *testing.T) {
	h := Handler{Mode: "block", Status: 302, Unreachable: "maybe", MaxHosts: -1, AllowAgents: []string{"a b"},
		Source: &Source{Kind: "file"}}
	err := h.Validate()
	if err == nil {
		t.Fatal("Validate() = nil, want errors")
	}
	for _, want := range []string{`mode "block"`, "status 302", `unreachable "maybe"`, "max_hosts", `allow_agents "a b"`, "source file: no path"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q, want it to mention %q", err, want)
		}
	}
}
