package enforce

import (
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Real User-Agent headers, as their operators document them.
const (
	uaGPTBot        = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	uaGooglebot     = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaGooglebotMob  = "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaBingbot       = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36"
	uaBytespider    = "Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.0.0 Safari/537.36"
	uaCCBot         = "CCBot/2.0 (https://commoncrawl.org/faq/)"
	uaFacebook      = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
	uaSlurp         = "Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)"
	uaClaudeBot     = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	uaPerplexityBot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)"
	// Amazon's page writes the comment's comma as a quoted-pair.
	uaAmazonbot = `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_10_1) AppleWebKit/600.2.5 (KHTML\, like Gecko) Version/8.0.2 Safari/600.2.5 (Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)`
	uaApplebot  = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)"

	uaChrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	uaFirefox = "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"
	uaSafari  = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15"
	uaIE11    = "Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; SLCC2; .NET CLR 2.0.50727)"
)

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
		{"GPTBot", uaGPTBot, []string{"gptbot"}},
		{"Googlebot desktop", uaGooglebot, []string{"googlebot"}},
		{"Googlebot smartphone", uaGooglebotMob, []string{"googlebot"}},
		{"bingbot", uaBingbot, []string{"bingbot"}},
		{"Bytespider", uaBytespider, []string{"bytespider"}},
		{"CCBot", uaCCBot, []string{"ccbot"}},
		{"facebookexternalhit", uaFacebook, []string{"facebookexternalhit"}},
		{"Slurp", uaSlurp, []string{"slurp"}},
		{"ClaudeBot", uaClaudeBot, []string{"claudebot"}},
		{"PerplexityBot", uaPerplexityBot, []string{"perplexitybot"}},
		{"Amazonbot", uaAmazonbot, []string{"amazonbot"}},
		{"Applebot", uaApplebot, []string{"applebot"}},
		{"case-insensitive", "GPTBOT/1.0", []string{"gptbot"}},
		{"Chrome", uaChrome, nil},
		{"Firefox", uaFirefox, nil},
		{"Safari", uaSafari, nil},
		// Never a substring inside a word.
		{"LCC is not SLCC2", uaIE11, nil},
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
		tok := Tokenize(tt.ua)
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
		{uaGPTBot, "/a", false},
		{uaGPTBot, "/b", true},
		{uaGooglebot, "/a", true},
		{uaGooglebot, "/b", false},
		// Both names: held to both groups.
		{"Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.2)", "/a", false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.2)", "/b", false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.2)", "/c", true},
		{"GPTBot/1.2 Googlebot/2.1", "/b", false},
	}
	for _, tt := range tests {
		tok := Tokenize(tt.ua)
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
		{"own group wins over Mozilla", r, uaGPTBot, []string{"gptbot"}, false},
		{"browser falls back to Mozilla", r, uaChrome, []string{"mozilla"}, true},
		{"crawler with no group falls back", r, uaClaudeBot, []string{"mozilla"}, true},
		{"no generic group", rules.Parse([]byte(crawlerRobots)), uaChrome, nil, false},
		{
			"several generic groups",
			rules.Parse([]byte("User-agent: Safari\nDisallow: /s\n\nUser-agent: Chrome\nDisallow: /c\n")),
			uaChrome, []string{"chrome", "safari"}, true,
		},
	}
	for _, tt := range tests {
		tok := Tokenize(tt.ua)
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
	tok := Tokenize(ua.String())
	m := NewGroupIndex(r).Choose(&tok)
	if m.Len() != MaxGroups || !m.Dropped() {
		t.Errorf("Choose(%q) kept %d groups, dropped %v; want %d, true", ua.String(), m.Len(), m.Dropped(), MaxGroups)
	}
}

func TestChooseGroupsNil(t *testing.T) {
	tok := Tokenize(uaGPTBot)
	if m := ChooseGroups(nil, &tok); m.Named() {
		t.Errorf("ChooseGroups(nil, %q).Named() = true, want false", uaGPTBot)
	}
	if m := NewGroupIndex(nil).Choose(&tok); m.Named() {
		t.Errorf("NewGroupIndex(nil).Choose(%q).Named() = true, want false", uaGPTBot)
	}
	r := rules.Parse(nil)
	if m := ChooseGroups(r, &tok); m.Named() {
		t.Errorf("ChooseGroups(empty robots.txt, %q).Named() = true, want false", uaGPTBot)
	}
}

func TestChooseGroupsAllocs(t *testing.T) {
	r := rules.Parse([]byte(crawlerRobots))
	x := NewGroupIndex(r)
	for _, ua := range []string{uaGooglebotMob, uaChrome, "GPTBOT/1.0"} {
		tok := Tokenize(ua)
		if n := testing.AllocsPerRun(100, func() { _ = ChooseGroups(r, &tok) }); n != 0 {
			t.Errorf("ChooseGroups(%q) allocates %v times, want 0", ua, n)
		}
		if n := testing.AllocsPerRun(100, func() { _ = x.Choose(&tok) }); n != 0 {
			t.Errorf("GroupIndex.Choose(%q) allocates %v times, want 0", ua, n)
		}
	}
}
