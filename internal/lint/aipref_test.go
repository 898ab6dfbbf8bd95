package lint

import (
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// TestAIPREF checks the findings on AI usage preferences: the parser's
// diagnostics of Content-Usage lines (draft-ietf-aipref-attach-05 §3,
// draft-ietf-aipref-vocab-08 §6) and of Content-Signal lines
// (contentsignals.org), groups that only state a preference, and
// Content-Signal and Content-Usage lines that disagree.
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
		{"vocabulary -08", "User-agent: *\nDisallow: /x\nContent-Usage: ai-use=n, train-ai=y, search=y\n", nil},
		{"empty", "User-agent: *\nDisallow: /x\nContent-Usage: /a/\n", []string{"3 usage-empty"}},
		// A preference line does not end a run of user-agent lines
		// (docs/rfc9309.md, Deviations): one group, with a warning.
		{"between agents", "User-agent: GPTBot\nContent-Usage: train-ai=n\nUser-agent: CCBot\nDisallow: /\n",
			[]string{"3 usage-between-agents"}},
		{"between agents, blank lines", "User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nContent-Signal: ai-train=no\n\nUser-agent: CCBot\nDisallow: /\n",
			[]string{"5 content-signal", "7 usage-between-agents"}},
		{"only a preference", "User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nContent-Usage: train-ai=n\n",
			[]string{"4 no-rules"}},
		{"only a signal", "User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nContent-Signal: ai-train=no\n\nUser-agent: CCBot\nDisallow: /x\nUser-agent: Other\n",
			[]string{"5 content-signal", "7 usage-between-agents", "9 no-rules"}}, // GPTBot shares CCBot's rules
		{"only a preference, rules elsewhere", "User-agent: GPTBot\nDisallow: /x\n\nUser-agent: GPTBot\nContent-Usage: train-ai=n\n",
			[]string{"4 merged-groups"}},
		{"only a preference, empty disallow", "User-agent: GPTBot\nDisallow:\nContent-Usage: train-ai=n\n", nil},
		{"only a preference, for everyone", "User-agent: *\nContent-Usage: train-ai=n\n", nil},
		{"content-signal", "User-Agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n", []string{"2 content-signal"}},
		{"content-signal outside a group", "Content-Signal: search=yes\nUser-agent: *\nDisallow: /x\n", []string{"1 signal-outside-group"}},
		{"cloudflare managed", "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n",
			[]string{"2 signal-use", "2 content-signal"}},
		{"signal mistakes", "User-agent: *\nContent-Signal: ai_train=no, search=y, ai-input=no, ai-input=yes, search\nAllow: /\n",
			[]string{"2 signal-malformed", "2 signal-unknown-key", "2 signal-bad-value", "2 signal-repeated", "2 content-signal"}},
		{"signal says nothing", "User-agent: *\nContent-Signal:\nAllow: /\n", []string{"2 signal-empty", "2 content-signal"}},
		// Content-Signal against Content-Usage (vocab-08 §5.1).
		{"agree", "User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=no\nContent-Usage: train-ai=n, search=y\n", []string{"3 content-signal"}},
		{"disagree", "User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /research/ train-ai=y\n",
			[]string{"3 content-signal", "3 usage-conflict"}},
		{"disagree, narrower signal", "User-agent: *\nAllow: /\nContent-Usage: ai-use=y, search=n\nContent-Signal: /a/ ai-input=no, search=yes\n",
			[]string{"4 content-signal", "4 usage-conflict", "4 usage-conflict"}},
		{"different paths", "User-agent: *\nAllow: /\nContent-Signal: /a/ ai-train=no\nContent-Usage: /b/ train-ai=y\n", []string{"3 content-signal"}},
		{"different groups", "User-agent: *\nAllow: /\nContent-Signal: ai-train=no\n\nUser-agent: A\nAllow: /\nContent-Usage: train-ai=y\n", []string{"3 content-signal"}},
		{"merged groups", "User-agent: A\nAllow: /\nContent-Signal: ai-train=no\n\nUser-agent: A\nContent-Usage: train-ai=y\n",
			[]string{"3 content-signal", "3 usage-conflict", "5 merged-groups"}},
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
// preference-only group frees, how a Content-Signal line is read and the
// Content-Usage line that says the same, and what disagrees with what.
func TestAIPREFMessages(t *testing.T) {
	tests := []struct {
		body, code string
		want, not  string
	}{
		{"User-agent: *\nDisallow: /p/\n\nUser-agent: GPTBot\nUser-agent: CCBot\nContent-Usage: train-ai=n\n", CodeNoRules,
			`the group naming GPTBot and CCBot states a usage preference but has no allow or disallow line: GPTBot and CCBot may fetch everything, and the "*" group's rules do not apply to them`, ""},
		{"User-agent: GPTBot\nContent-Usage: train-ai=n\n", CodeNoRules, "GPTBot may fetch everything; a usage preference", `"*"`},
		{"User-agent: GPTBot\nContent-Signal: ai-train=no\n", CodeNoRules, "GPTBot may fetch everything; a usage preference", `"*"`},
		{"User-Agent: *\nContent-Signal: search=yes, ai-train=no, ai-input=no\nAllow: /\n", CodeContentSignal,
			`read as the usage preference "train-ai=n, ai-use=n, search=y"`, ""},
		{"User-Agent: *\nContent-Signal: search=yes, ai-train=no, ai-input=no\nAllow: /\n", CodeContentSignal,
			`"Content-Usage: train-ai=n, ai-use=n, search=y" says the same to them`, ""},
		{"User-Agent: *\nContent-Signal: /blog/ ai-train=yes\nAllow: /\n", CodeContentSignal, `"Content-Usage: /blog/ train-ai=y" says the same`, ""},
		{"User-Agent: *\nContent-Signal: search=maybe, ai-train=no\nAllow: /\n", CodeContentSignal, `"Content-Usage: train-ai=n"`, "search="},
		{"User-Agent: *\nContent-Signal: search=yes\nContent-Usage: / search=y\nAllow: /\n", CodeContentSignal, `read as the usage preference "search=y"`, "says the same"},
		{"User-Agent: *\nContent-Signal: use=full\nAllow: /\n", CodeContentSignal, "adds no preference to responses", ""},
		{"User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /research/ train-ai=y\n", CodeUsageConflict,
			"Content-Signal ai-train=no and the Content-Usage line 4's train-ai=y disagree under /research/: the two combine, and n wins", ""},
		{"User-agent: *\nAllow: /\nContent-Usage: ai-use=y\nContent-Signal: /a/ ai-input=no\n", CodeUsageConflict,
			"Content-Signal ai-input=no and the Content-Usage line 3's ai-use=y disagree under /a/", ""},
	}
	for _, tt := range tests {
		i := slices.IndexFunc(Check([]byte(tt.body), Options{}), func(f Finding) bool { return f.Code == tt.code })
		if i < 0 {
			t.Errorf("Check(%q): no %s finding", tt.body, tt.code)
			continue
		}
		f := Check([]byte(tt.body), Options{})[i]
		if want := map[string]rules.Severity{CodeContentSignal: rules.Info, CodeUsageConflict: rules.Warning, CodeNoRules: rules.Warning}[tt.code]; f.Severity != want {
			t.Errorf("Check(%q): %s is %v, want %v", tt.body, tt.code, f.Severity, want)
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
