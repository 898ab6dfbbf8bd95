package caddymodule

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// TestSettings checks what each option's words become: the values the
// core and the request path are given, with the defaults of options left
// out.
func TestSettings(t *testing.T) {
	for _, tt := range []struct {
		name  string
		h     Handler
		check func(s *Settings) string // "" when s is right, else what is wrong
	}{
		{"defaults", Handler{}, func(s *Settings) string {
			switch {
			case s.mode != modeEnforce || !s.Judge.Enforce:
				return "want enforce mode"
			case s.source != sourceUpstream || s.Store == nil || s.File != nil || s.Inline != nil || s.FixedKey != "":
				return "want the upstream source, asked per site"
			case s.usage != usageHeader || !s.Judge.Usage || s.serve != serveEnforced:
				return "want content_usage header and serve_robots enforced"
			case s.Judge.Policy.Wildcard != agent.WildcardCrawlers || s.Judge.Policy.CaseInsensitive || len(s.Judge.Policy.AllowAgents) != 0:
				return "want the default policy"
			case s.Store.Unreachable != robotstxt.UnreachableDisallow:
				return "want unreachable deny"
			case !s.Verify || s.Judge.IdentityPolicy != (enforce.IdentityPolicy{}) || s.Judge.Undeclared:
				return "want verification on with its default policies"
			case s.Judge.Escalation != enforce.EscalateOff || s.Judge.LogAllowed:
				return "want no escalation and no allowed requests recorded"
			}
			return ""
		}},
		{"every word", Handler{
			Mode: "log", Wildcard: "bots", Unreachable: "allow", ContentUsage: "override", ServeRobots: "origin",
			Origin: "case_insensitive", LogAllowed: true, AllowAgents: []string{"Pingdom"},
			Source:    &Source{Kind: "url", URL: "http://robots.internal/robots.txt"},
			Verify:    &Verify{Forged: "deny", Pending: "wildcard", Undeclared: "bind"},
			Violators: &RepeatViolators{Mode: "block", For: caddy.Duration(time.Hour)},
			NewHosts:  &NewHosts{Count: 5, Per: caddy.Duration(time.Minute)},
		}, func(s *Settings) string {
			switch {
			case s.mode != modeLog || s.Judge.Enforce:
				return "want log mode"
			case s.usage != usageOverride || s.serve != serveOrigin:
				return "want content_usage override and serve_robots origin"
			case s.Judge.Policy.Wildcard != agent.WildcardAutomated || !s.Judge.Policy.CaseInsensitive || len(s.Judge.Policy.AllowAgents) != 1:
				return "want wildcard automated, case-insensitive, Pingdom allowed"
			case s.source != sourceURL || s.Store.URL != "http://robots.internal/robots.txt" || s.Store.Scheme != "http" || !s.Store.KeepBody:
				return "want the url source over http, its body kept"
			case s.FixedKey != robotstxt.URLHost("http://robots.internal/robots.txt"):
				return "want the url's host as the key"
			case s.Store.Unreachable != robotstxt.UnreachableAllow || s.Store.NewHosts != 5 || s.Store.NewHostsPer != time.Minute:
				return "want unreachable allow and new_hosts 5 per 1m"
			case s.Judge.IdentityPolicy != (enforce.IdentityPolicy{Forged: enforce.ForgedDeny, PendingWildcard: true}) || !s.Judge.Undeclared:
				return "want forged deny, pending wildcard, undeclared bind"
			case s.Judge.Escalation != enforce.EscalateBlock || s.Judge.EscalationFor != time.Hour || !s.Judge.LogAllowed:
				return "want violators block for 1h and allowed requests recorded"
			}
			return ""
		}},
		{"file source", Handler{Source: &Source{Kind: "file", Path: "../testdata/demo/robots.txt"}, MaxSize: 1 << 20}, func(s *Settings) string {
			if s.source != sourceFile || s.File == nil || s.File.Path != "../testdata/demo/robots.txt" || s.File.MaxSize != 1<<20 || s.FixedKey != "file" || s.Store != nil {
				return "want the file source, its max_size, keyed file"
			}
			return ""
		}},
		{"inline source", Handler{Source: &Source{Kind: "inline", Text: "User-agent: *\nDisallow: /x\n"}}, func(s *Settings) string {
			if s.source != sourceInline || s.Inline == nil || s.Inline.Body != "User-agent: *\nDisallow: /x\n" || s.FixedKey != "inline" {
				return "want the inline source, keyed inline"
			}
			return ""
		}},
		{"verify off", Handler{Verify: &Verify{Off: true}}, func(s *Settings) string {
			if s.Verify || s.Judge.Undeclared {
				return "want verification off"
			}
			return ""
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.h
			s, err := tt.h.Settings()
			if err != nil {
				t.Fatalf("Settings() = %v", err)
			}
			if msg := tt.check(s); msg != "" {
				t.Errorf("Settings() = %+v: %s", s, msg)
			}
			if tt.h.Mode != before.Mode || tt.h.Source != before.Source || tt.h.Status != before.Status {
				t.Errorf("Settings() changed the handler: %+v, was %+v", tt.h, before)
			}
		})
	}
}

// TestSettingsErrors checks that Settings reports every problem at once,
// each an *OptionError naming its option, and its message beginning with
// that option.
func TestSettingsErrors(t *testing.T) {
	h := Handler{Mode: "block", ContentUsage: "strip", Source: &Source{Kind: "file"},
		Verify: &Verify{Forged: "allow", Resolver: "dns"}, Violators: &RepeatViolators{Mode: "ban"}}
	_, err := h.Settings()
	if err == nil {
		t.Fatal("Settings() = nil error, want five problems")
	}
	want := map[string]bool{"mode": true, "content_usage": true, "source": true, "verify forged": true, "verify resolver": true, "violators": true}
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				walk(inner)
			}
			return
		}
		var oe *OptionError
		if !errors.As(e, &oe) {
			t.Errorf("Settings(): %q is not an *OptionError", e)
			return
		}
		if e != oe {
			walk(errors.Unwrap(e))
			return
		}
		if !want[oe.Option] {
			t.Errorf("Settings(): a problem with %q (%v), which is not wrong or was named twice", oe.Option, oe)
		}
		delete(want, oe.Option)
		first, _, _ := strings.Cut(oe.Option, " ")
		if !strings.HasPrefix(oe.Error(), first) {
			t.Errorf("Settings(): %q does not begin with its option %q", oe, oe.Option)
		}
	}
	walk(err)
	for option := range want {
		t.Errorf("Settings() = %v: no problem named %q", err, option)
	}
}

// TestVocabularies checks that each option's words name the core's values
// as the core names them, where it does, so that a word means one thing
// in the configuration, the records and the commands.
func TestVocabularies(t *testing.T) {
	for _, w := range forgedWords {
		if w.value.String() != w.name {
			t.Errorf("forged %q stands for %v", w.name, w.value)
		}
	}
	for _, w := range escalationWords {
		if w.value.String() != w.name {
			t.Errorf("violators %q stands for %v", w.name, w.value)
		}
	}
	if got := modeWords.list(); got != "enforce or log" {
		t.Errorf("modeWords.list() = %q, want %q", got, "enforce or log")
	}
	if got := sourceWords.list(); got != "upstream, file, url or inline" {
		t.Errorf("sourceWords.list() = %q", got)
	}
	for _, v := range []sourceKind{sourceUpstream, sourceFile, sourceURL, sourceInline} {
		if got, err := sourceWords.read("source", v.String()); err != nil || got != v {
			t.Errorf("sourceWords.read(%q) = %v, %v; want %v", v.String(), got, err, v)
		}
	}
	if _, err := usageWords.read("content_usage", "Header"); err == nil {
		t.Error(`usageWords.read("Header") = nil error: words are compared exactly`)
	}
}
