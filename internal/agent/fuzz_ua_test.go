package agent

import (
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
)

// FuzzTokenize checks properties of Tokenize on any header: it does not
// panic, keeps at most MaxCandidates candidates, each a non-empty
// [A-Za-z_-] run that appears in the header as a whole run (never part of a
// longer one), each once, and gives the same answer twice; and the
// classification of the header is one of the classes, with a token from
// the header, the same twice.
func FuzzTokenize(f *testing.F) {
	seeds := []string{
		// Real crawlers and browsers.
		testua.GPTBot, testua.Googlebot, testua.GooglebotMob, testua.Bingbot, testua.Bytespider, testua.CCBot, testua.Facebook,
		testua.Slurp, testua.ClaudeBot, testua.PerplexityBot, testua.Amazonbot, testua.Applebot,
		testua.Chrome, testua.Firefox, testua.Safari, testua.IE11,
		"curl/8.4.0",
		"Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 [FBAN/EMA;FBLC/en_US;FBAV/400.0.0.11.90;]",
		// Hostile: unbalanced and deeply nested parentheses, quoted-pairs,
		// NULs, invalid UTF-8, a header ten times the limit.
		"((((((((((((((((Foo",
		"))))))Foo((((",
		strings.Repeat("(", 5000) + "Googlebot" + strings.Repeat(")", 5000),
		`Foo (a\(b\\; c\) Bar\`,
		"Foo\x00Bar\x00(Baz\x00)",
		"\xff\xfeGooglebot\xc3\x28 (\xe2\x82 Bot)",
		strings.Repeat("Googlebot/2.1 ", 10<<10/14),
		strings.Repeat("a", 10<<10),
		strings.Repeat("Ab; ", 3000),
		"http://www.example.com/ user@example.com www.example.com +https://x",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ua string) {
		tok := Tokenize(ua)
		if n := tok.Len(); n < 0 || n > MaxCandidates {
			t.Fatalf("Tokenize(%q): Len() = %d, want 0 to %d", ua, n, MaxCandidates)
		}
		read := tok.UserAgent()
		if len(read) > MaxUserAgentLength || !strings.HasPrefix(ua, read) {
			t.Fatalf("Tokenize(%q): UserAgent() = %q, want a prefix of at most %d octets", ua, read, MaxUserAgentLength)
		}
		seen := map[string]bool{}
		for i := range tok.Len() {
			c := tok.At(i)
			if !isToken(c) {
				t.Fatalf("Tokenize(%q): candidate %d = %q, not a non-empty [A-Za-z_-] run", ua, i, c)
			}
			if !isWholeRun(read, c) {
				t.Fatalf("Tokenize(%q): candidate %q is not a whole run of the header", ua, c)
			}
			if h := uint16(tokenHash(foldHead(c), len(c)) >> 48); tok.cands[tok.slot(i)].hash != h {
				t.Fatalf("Tokenize(%q): candidate %q has hash %#x, want %#x", ua, c, tok.cands[tok.slot(i)].hash, h)
			}
			if k := strings.ToLower(c); seen[k] {
				t.Fatalf("Tokenize(%q): candidate %q twice", ua, c)
			} else {
				seen[k] = true
			}
		}
		c := NewClassifier(4)
		class := c.Classify(&tok)
		if class.Class > ClassAutomated || class.Token != "" && !strings.Contains(read, class.Token) {
			t.Fatalf("Tokenize(%q): Classify = %+v, not a class with a token of the header", ua, class)
		}
		again := Tokenize(ua)
		if c.Classify(&again) != class {
			t.Fatalf("Tokenize(%q): Classify not deterministic: %+v then %+v", ua, class, c.Classify(&again))
		}
		if again.Len() != tok.Len() {
			t.Fatalf("Tokenize(%q) is not deterministic: %d then %d candidates", ua, tok.Len(), again.Len())
		}
		for i := range tok.Len() {
			if tok.At(i) != again.At(i) || tok.Generic(i) != again.Generic(i) {
				t.Fatalf("Tokenize(%q) is not deterministic at %d: %q then %q", ua, i, tok.At(i), again.At(i))
			}
		}
	})
}

// isWholeRun reports whether c occurs in s with no token character on
// either side.
func isWholeRun(s, c string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], c)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(c)
		if (i == 0 || !isTokenChar(s[i-1])) && (end == len(s) || !isTokenChar(s[end])) {
			return true
		}
		off = i + 1
	}
}
