package lint

import (
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// TestAIPREF checks the findings on AI usage preferences: the parser's
// diagnostics of Content-Usage lines (draft-ietf-aipref-attach-05 §3,
// draft-ietf-aipref-vocab-07 §6), groups that only state a preference,
// and Cloudflare's Content-Signal records.
func TestAIPREF(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"clean", "User-agent: *\nAllow: /\nContent-Usage: train-ai=n, search=y\nContent-Usage: /research/ train-ai=y\n", nil},
		{"attach-05 §3.4 example", "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\n" +
			"User-Agent: ExampleBot\nAllow: /\nContent-Usage: train-ai=y\n", nil},
		{"outside a group", "Content-Usage: train-ai=n\nUser-agent: *\nDisallow: /x\n", []string{"1 usage-outside-group"}},
		{"malformed", "User-agent: *\nDisallow: /x\nContent-Usage: train-ai=n;\n", []string{"3 usage-malformed"}},
		{"vocabulary", "User-agent: *\nDisallow: /x\nContent-Usage: ai-train=n, search=yes\n", []string{"3 usage-unknown-key", "3 usage-bad-value"}},
		{"empty", "User-agent: *\nDisallow: /x\nContent-Usage: /a/\n", []string{"3 usage-empty"}},
		{"ends a group", "User-agent: GPTBot\nContent-Usage: train-ai=n\nUser-agent: CCBot\nDisallow: /\n",
			[]string{"1 no-rules", "3 usage-ends-group"}},
		{"only a preference", "User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nContent-Usage: train-ai=n\n\nUser-agent: CCBot\nDisallow: /\n",
			[]string{"4 no-rules", "7 usage-ends-group"}}, // blank lines do not end a group either
		{"only a preference, rules elsewhere", "User-agent: GPTBot\nDisallow: /x\n\nUser-agent: GPTBot\nContent-Usage: train-ai=n\n",
			[]string{"4 merged-groups"}},
		{"only a preference, empty disallow", "User-agent: GPTBot\nDisallow:\nContent-Usage: train-ai=n\n", nil},
		{"only a preference, for everyone", "User-agent: *\nContent-Usage: train-ai=n\n", nil},
		{"content-signal", "User-Agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n", []string{"2 content-signal"}},
		{"content-signal outside a group", "Content-Signal: search=yes\nUser-agent: *\nDisallow: /x\n", []string{"1 content-signal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := findings(tt.body); !slices.Equal(got, tt.want) {
				t.Errorf("Check(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

// TestAIPREFMessages checks what the AIPREF findings say: whom a
// preference-only group frees, and the Content-Usage line a Content-Signal
// record maps to, when there is one.
func TestAIPREFMessages(t *testing.T) {
	tests := []struct {
		body, code string
		want, not  string
	}{
		{"User-agent: *\nDisallow: /p/\n\nUser-agent: GPTBot\nUser-agent: CCBot\nContent-Usage: train-ai=n\n", CodeNoRules,
			`the group naming GPTBot and CCBot has content-usage rules but no allow or disallow line: GPTBot and CCBot may fetch everything, and the "*" group's rules do not apply to them`, ""},
		{"User-agent: GPTBot\nContent-Usage: train-ai=n\n", CodeNoRules, "GPTBot may fetch everything; a usage preference", `"*"`},
		{"User-Agent: *\nContent-Signal: search=yes, ai-train=no, ai-input=no\nAllow: /\n", CodeContentSignal,
			`"Content-Usage: train-ai=n, search=y"`, ""},
		{"User-Agent: *\nContent-Signal: ai-train=yes\nAllow: /\n", CodeContentSignal, `"Content-Usage: train-ai=y"`, ""},
		{"User-Agent: *\nContent-Signal: ai-input=no\nAllow: /\n", CodeContentSignal, "kept, not read", "Content-Usage:"},
		{"User-Agent: *\nContent-Signal: search=maybe, ai-train=no\nAllow: /\n", CodeContentSignal, "kept, not read", "Content-Usage:"},
		{"User-Agent: *\nContent-Signal: search=yes\nContent-Usage: search=y\nAllow: /\n", CodeContentSignal, "kept, not read", "Content-Usage:"},
		{"Content-Signal: search=yes\nUser-Agent: *\nAllow: /\n", CodeContentSignal, "kept, not read", "Content-Usage:"},
	}
	for _, tt := range tests {
		i := slices.IndexFunc(Check([]byte(tt.body), Options{}), func(f Finding) bool { return f.Code == tt.code })
		if i < 0 {
			t.Errorf("Check(%q): no %s finding", tt.body, tt.code)
			continue
		}
		f := Check([]byte(tt.body), Options{})[i]
		if f.Severity != rules.Info && tt.code == CodeContentSignal {
			t.Errorf("Check(%q): %s is %v, want info", tt.body, tt.code, f.Severity)
		}
		if !strings.Contains(f.Message, tt.want) || tt.not != "" && strings.Contains(f.Message, tt.not) {
			t.Errorf("Check(%q) %s says %q, want %q in it and not %q", tt.body, tt.code, f.Message, tt.want, tt.not)
		}
	}
}

// TestCheckOptions checks the parse limit (RFC 9309 §2.5) and how a
// finding prints.
func TestCheckOptions(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /a\nDisallow: /b\n")
	if got := Check(body, Options{MaxSize: 20}); len(got) == 0 || got[0].Code != rules.CodeSizeLimit {
		t.Errorf("Check with MaxSize 20 = %v, want a %s finding", got, rules.CodeSizeLimit)
	}
	if got := Check(body, Options{}); len(got) != 0 {
		t.Errorf("Check with the default size = %v, want nothing", got)
	}
	f := Finding{Line: 3, Severity: rules.Warning, Code: CodeNoRules, Message: "m"}
	if f.String() != "line 3: warning: m" || (Finding{Severity: rules.Error, Message: "m"}).String() != "error: m" {
		t.Errorf("Finding.String() = %q and %q", f.String(), Finding{Severity: rules.Error, Message: "m"}.String())
	}
}
