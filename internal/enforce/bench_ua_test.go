package enforce

import (
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// benchUAs are real headers of crawlers, fetchers and browsers, each under
// 512 octets.
var benchUAs = []struct{ name, ua string }{
	{"googlebot_mobile", testua.GooglebotMob},
	{"gptbot", testua.GPTBot},
	{"claudebot", testua.ClaudeBot},
	{"amazonbot", testua.Amazonbot},
	{"bytespider", testua.Bytespider},
	{"ccbot", testua.CCBot},
	{"curl", "curl/8.4.0"},
	{"chrome_windows", testua.Chrome},
	{"firefox_linux", testua.Firefox},
	{"safari_mac", testua.Safari},
	{"chrome_android", "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36"},
	{"safari_iphone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"},
	{"facebook_inapp", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/459.0.0.45.108;FBBV/593093488;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.4.1;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/595137455]"},
}

// benchRobots is a robots.txt of the common shape: a few search engines, the
// AI crawlers of ai.robots.txt, and a "*" group.
var benchRobots = []byte(`User-agent: Googlebot
User-agent: bingbot
Disallow: /search
Allow: /search/about

User-agent: GPTBot
User-agent: ClaudeBot
User-agent: CCBot
User-agent: Bytespider
User-agent: PerplexityBot
User-agent: Amazonbot
User-agent: anthropic-ai
User-agent: Google-Extended
User-agent: Applebot-Extended
User-agent: meta-externalagent
User-agent: cohere-ai
User-agent: Diffbot
User-agent: omgili
User-agent: YouBot
User-agent: Timpibot
User-agent: ImagesiftBot
User-agent: FacebookBot
User-agent: ChatGPT-User
User-agent: OAI-SearchBot
User-agent: Claude-Web
Disallow: /

User-agent: *
Disallow: /private/
Disallow: /*?session=
`)

func BenchmarkTokenize(b *testing.B) {
	for _, u := range benchUAs {
		b.Run(u.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(u.ua)))
			for b.Loop() {
				_ = Tokenize(u.ua)
			}
		})
	}
}

func BenchmarkChooseGroups(b *testing.B) {
	r := rules.Parse(benchRobots)
	x := NewGroupIndex(r)
	for _, u := range benchUAs {
		tok := Tokenize(u.ua)
		b.Run("map/"+u.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ChooseGroups(r, &tok)
			}
		})
		b.Run("index/"+u.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = x.Choose(&tok)
			}
		})
	}
}

func BenchmarkClassifyWarm(b *testing.B) {
	c := NewClassifier(0)
	for _, u := range benchUAs {
		tok := Tokenize(u.ua)
		c.Classify(&tok)
		b.Run(u.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.Classify(&tok)
			}
		})
	}
}

// BenchmarkWhoIsAsking measures the whole of this part of a decision: the
// header tokenized, the groups chosen, the client classified (warm cache).
func BenchmarkWhoIsAsking(b *testing.B) {
	x := NewGroupIndex(rules.Parse(benchRobots))
	c := NewClassifier(0)
	whoIsAsking := func(ua string) bool {
		tok := Tokenize(ua)
		m := x.Choose(&tok)
		automated := c.Classify(&tok).Automated() // always, as audit records want it
		return m.Named() || automated
	}
	for _, u := range benchUAs {
		whoIsAsking(u.ua) // warm the cache
	}
	for _, u := range benchUAs {
		b.Run(u.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				whoIsAsking(u.ua)
			}
		})
	}
	b.Run("mixed", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			whoIsAsking(benchUAs[i].ua)
			i++
			if i == len(benchUAs) {
				i = 0
			}
		}
	})
}
