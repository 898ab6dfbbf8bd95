package robotstxt

import (
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Real User-Agent headers, as their operators document them.

const crawlerRobots = `
User-agent: GPTBot
Disallow: /gptbot

User-agent: Googlebot
Disallow: /googlebot

User-agent: bingbot
Disallow: /bingbot

User-agent: Bytespider
Disallow: /bytespider

User-agent: CCBot
Disallow: /ccbot

User-agent: facebookexternalhit
Disallow: /facebook

User-agent: Slurp
Disallow: /slurp

User-agent: ClaudeBot
Disallow: /claudebot

User-agent: PerplexityBot
Disallow: /perplexitybot

User-agent: Amazonbot
Disallow: /amazonbot

User-agent: Applebot
Disallow: /applebot

User-agent: LCC
User-agent: Code
Disallow: /ai

User-agent: *
Disallow: /private
`

// matched returns the tokens of m's groups, lower-cased.
func matched(m *Match) []string {
	var out []string
	for i := range m.Len() {
		out = append(out, strings.ToLower(m.Token(i)))
	}
	return out
}

func TestChooseGroups(t *testing.T) {
	r := rules.Parse([]byte(crawlerRobots))
	x := NewGroupIndex(r)
	tests := []struct {
		name string
		ua   string
		want []string // matched tokens, lower case
	}{
		{"GPTBot", testua.GPTBot, []string{"gptbot"}},
		{"Googlebot desktop", testua.Googlebot, []string{"googlebot"}},
		{"Googlebot smartphone", testua.GooglebotMob, []string{"googlebot"}},
		{"bingbot", testua.Bingbot, []string{"bingbot"}},
		{"Bytespider", testua.Bytespider, []string{"bytespider"}},
		{"CCBot", testua.CCBot, []string{"ccbot"}},
		{"facebookexternalhit", testua.Facebook, []string{"facebookexternalhit"}},
		{"Slurp", testua.Slurp, []string{"slurp"}},
		{"ClaudeBot", testua.ClaudeBot, []string{"claudebot"}},
		{"PerplexityBot", testua.PerplexityBot, []string{"perplexitybot"}},
		{"Amazonbot", testua.Amazonbot, []string{"amazonbot"}},
		{"Applebot", testua.Applebot, []string{"applebot"}},
		{"case-insensitive", "GPTBOT/1.0", []string{"gptbot"}},
		{"Chrome", testua.Chrome, nil},
		{"Firefox", testua.Firefox, nil},
		{"Safari", testua.Safari, nil},
		// Never a substring inside a word.
		{"LCC is not SLCC2", testua.IE11, nil},
		{"Code is not opencode", "opencode/0.3.1 (linux; x64)", nil},
		{"Code is not Claude-Code", "Claude-Code/1.0.0 (+https://docs.anthropic.com/)", nil},
		{"Code is not codebot", "Mozilla/5.0 (compatible; codebot/1.0; Unicode decode)", nil},
		{"Code is not CodeGPT", "CodeGPT/2.1", nil},
		{"Code is Code", "Mozilla/5.0 (Macintosh) AppleWebKit/537.36 (KHTML, like Gecko) Code/1.90.0 Chrome/122.0.0.0 Electron/29.4.0 Safari/537.36", []string{"code"}},
		{"Googlebot in a URL only", "Foo/1.0 (+http://www.google.com/Googlebot)", nil},
		{"two names, one group", "Mozilla/5.0 (compatible; LCC/1.0; Code/2.0)", []string{"lcc"}},
		{"two groups", "Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.2)", []string{"googlebot", "gptbot"}},
	}
	for _, tt := range tests {
		tok := agent.Tokenize(tt.ua)
		m := ChooseGroups(r, &tok)
		if got := matched(&m); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ChooseGroups(%q) = %q, want %q", tt.name, tt.ua, got, tt.want)
		}
		if m.Named() != (len(tt.want) > 0) {
			t.Errorf("%s: Named() = %v, want %v", tt.name, m.Named(), len(tt.want) > 0)
		}
		for i := range m.Len() {
			if want := r.Group(m.Token(i)); m.Group(i) != want {
				t.Errorf("%s: Group(%d) is not the group of %q", tt.name, i, m.Token(i))
			}
		}
		if xm := x.Choose(&tok); xm != m {
			t.Errorf("%s: GroupIndex.Choose(%q) = %q, want ChooseGroups' %q", tt.name, tt.ua, matched(&xm), matched(&m))
		}
	}
}

// allowedByAll decides target against every group of m, as the caller does
// under the conservative rule.
func allowedByAll(m *Match, target string) bool {
	path := string(rules.AppendCanonical(nil, target))
	for i := range m.Len() {
		if !m.Group(i).DecideCanonical(path).Allowed {
			return false
		}
	}
	return true
}

func TestConservativeRule(t *testing.T) {
	r := rules.Parse([]byte("User-agent: GPTBot\nDisallow: /a\n\nUser-agent: Googlebot\nDisallow: /b\n"))
	tests := []struct {
		ua     string
		target string
		want   bool
	}{
		{testua.GPTBot, "/a", false},
		{testua.GPTBot, "/b", true},
		{testua.Googlebot, "/a", true},
		{testua.Googlebot, "/b", false},
		// Both names: held to both groups.
		{"Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.2)", "/a", false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.2)", "/b", false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.2)", "/c", true},
		{"GPTBot/1.2 Googlebot/2.1", "/b", false},
	}
	for _, tt := range tests {
		tok := agent.Tokenize(tt.ua)
		m := ChooseGroups(r, &tok)
		if got := allowedByAll(&m, tt.target); got != tt.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.ua, tt.target, got, tt.want)
		}
	}
}

func TestGenericCandidates(t *testing.T) {
	const robots = "User-agent: Mozilla\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /gpt\n"
	r := rules.Parse([]byte(robots))
	tests := []struct {
		name    string
		robots  *rules.Robots
		ua      string
		want    []string
		generic bool
	}{
		{"own group wins over Mozilla", r, testua.GPTBot, []string{"gptbot"}, false},
		{"browser falls back to Mozilla", r, testua.Chrome, []string{"mozilla"}, true},
		{"crawler with no group falls back", r, testua.ClaudeBot, []string{"mozilla"}, true},
		{"no generic group", rules.Parse([]byte(crawlerRobots)), testua.Chrome, nil, false},
		{
			"several generic groups",
			rules.Parse([]byte("User-agent: Safari\nDisallow: /s\n\nUser-agent: Chrome\nDisallow: /c\n")),
			testua.Chrome, []string{"chrome", "safari"}, true,
		},
	}
	for _, tt := range tests {
		tok := agent.Tokenize(tt.ua)
		m := ChooseGroups(tt.robots, &tok)
		if got := matched(&m); !slices.Equal(got, tt.want) || m.Generic() != tt.generic {
			t.Errorf("%s: ChooseGroups(%q) = %q generic %v, want %q generic %v",
				tt.name, tt.ua, got, m.Generic(), tt.want, tt.generic)
		}
	}
}

func TestMaxGroups(t *testing.T) {
	var robots, ua strings.Builder
	for i := range MaxGroups + 2 {
		name := "Bot" + string(rune('A'+i))
		robots.WriteString("User-agent: " + name + "\nDisallow: /" + name + "\n\n")
		ua.WriteString(name + "/1.0 ")
	}
	r := rules.Parse([]byte(robots.String()))
	tok := agent.Tokenize(ua.String())
	m := NewGroupIndex(r).Choose(&tok)
	if m.Len() != MaxGroups || !m.Dropped() {
		t.Errorf("Choose(%q) kept %d groups, dropped %v; want %d, true", ua.String(), m.Len(), m.Dropped(), MaxGroups)
	}
}

func TestChooseGroupsNil(t *testing.T) {
	tok := agent.Tokenize(testua.GPTBot)
	if m := ChooseGroups(nil, &tok); m.Named() {
		t.Errorf("ChooseGroups(nil, %q).Named() = true, want false", testua.GPTBot)
	}
	if m := NewGroupIndex(nil).Choose(&tok); m.Named() {
		t.Errorf("NewGroupIndex(nil).Choose(%q).Named() = true, want false", testua.GPTBot)
	}
	r := rules.Parse(nil)
	if m := ChooseGroups(r, &tok); m.Named() {
		t.Errorf("ChooseGroups(empty robots.txt, %q).Named() = true, want false", testua.GPTBot)
	}
}

func TestChooseGroupsAllocs(t *testing.T) {
	r := rules.Parse([]byte(crawlerRobots))
	x := NewGroupIndex(r)
	for _, ua := range []string{testua.GooglebotMob, testua.Chrome, "GPTBOT/1.0"} {
		tok := agent.Tokenize(ua)
		if n := testing.AllocsPerRun(100, func() { _ = ChooseGroups(r, &tok) }); n != 0 {
			t.Errorf("ChooseGroups(%q) allocates %v times, want 0", ua, n)
		}
		if n := testing.AllocsPerRun(100, func() { _ = x.Choose(&tok) }); n != 0 {
			t.Errorf("GroupIndex.Choose(%q) allocates %v times, want 0", ua, n)
		}
	}
}

// TestVersionNamesGroup checks that a product's version names a group as
// a product name does, and so does a word joined by "+" (see
// agent.Tokenize).
func TestVersionNamesGroup(t *testing.T) {
	r := rules.Parse([]byte("User-agent: Teoma\nDisallow: /t\n\nUser-agent: simplecrawler\nDisallow: /s\n\nUser-agent: PiplBot\nDisallow: /p\n"))
	for ua, want := range map[string]string{
		"Mozilla/2.0 (compatible; Ask Jeeves/Teoma; +http://sp.ask.com/docs/about/tech_crawling.html)": "teoma",
		"Node/simplecrawler 1.1.9 (https://github.com/simplecrawler/simplecrawler)":                    "simplecrawler",
		"Mozilla/5.0+(compatible;+PiplBot;+http://www.pipl.com/bot/)":                                  "piplbot",
	} {
		tok := agent.Tokenize(ua)
		if m := NewGroupIndex(r).Choose(&tok); !slices.Equal(matched(&m), []string{want}) {
			t.Errorf("groups of %q = %q, want [%s]", ua, matched(&m), want)
		}
	}
}
