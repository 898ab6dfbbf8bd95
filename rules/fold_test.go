package rules

import (
	"strings"
	"testing"
)

// TestTokensFoldASCIIOnly checks that product tokens compare ignoring ASCII
// case and nothing else (RFC 9309 §2.2.1: a token is [A-Za-z_-]), for
// short agents and long ones: U+212A KELVIN SIGN is not "k", though
// Unicode lower-cases it so.
func TestTokensFoldASCIIOnly(t *testing.T) {
	const kelvin = "\u212A"
	long := strings.Repeat("x", 70)
	body := "User-agent: kbot\nDisallow: /\n\nUser-agent: kbot" + long + "\nDisallow: /\n"
	r := Parse([]byte(body))
	tests := []struct {
		agent string
		want  bool // a group names it
	}{
		{"kbot", true},
		{"KBOT", true},
		{"kbot" + long, true},
		{"KBOT" + strings.ToUpper(long), true},
		{kelvin + "bot", false},
		{kelvin + "BOT", false},
		{kelvin + "bot" + long, false},
		{kelvin + "BOT" + strings.ToUpper(long), false},
	}
	for _, tt := range tests {
		if got := r.Group(tt.agent) != nil; got != tt.want {
			t.Errorf("[RFC 9309 §2.2.1] Group(%+q) found = %v, want %v", tt.agent, got, tt.want)
		}
		if got := !r.Allowed(tt.agent, "/x"); got != tt.want {
			t.Errorf("[RFC 9309 §2.2.1] Allowed(%+q, /x) = %v, want %v", tt.agent, !got, !tt.want)
		}
	}
}

// TestKeysFoldASCIIOnly checks that keys compare ignoring ASCII case and
// nothing else (RFC 9309 §2.2): U+017F LONG S, which Unicode folds to "s",
// does not spell "sitemap" or "host".
func TestKeysFoldASCIIOnly(t *testing.T) {
	tests := []struct {
		line string
		want string // diagnostic code, or "" for a known key
	}{
		{"SITEMAP: https://example.com/s.xml", ""},
		{"Host: example.com", ""},
		{"\u017Fitemap: https://example.com/s.xml", CodeUnknownKey},
		{"Ho\u017Ft: example.com", CodeUnknownKey},
		{"Crawl-Delay: 1", ""},
		{"Vi\u017Fit-time: 0100-0500", CodeUnknownKey},
	}
	for _, tt := range tests {
		r := Parse([]byte("User-agent: *\n" + tt.line + "\n"))
		got := ""
		if d := findDiag(r, CodeUnknownKey); d != nil {
			got = d.Code
		}
		if got != tt.want {
			t.Errorf("[RFC 9309 §2.2] %+q: diagnostic %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestGroupLookupAllocs checks that looking up a token in mixed case
// allocates nothing, however long the token.
func TestGroupLookupAllocs(t *testing.T) {
	r := Parse([]byte("User-agent: GPTBot\nDisallow: /\n"))
	long := "GPTBot" + strings.Repeat("X", 100)
	for _, agent := range []string{"GPTBot", long} {
		if n := testing.AllocsPerRun(100, func() { r.Group(agent) }); n != 0 {
			t.Errorf("Group(%.10q…) allocates %v times, want 0", agent, n)
		}
	}
}
