package robotstxt

import (
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

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

func BenchmarkChooseGroups(b *testing.B) {
	r := rules.Parse(benchRobots)
	x := NewGroupIndex(r)
	for _, u := range testua.Headers {
		tok := agent.Tokenize(u.UA)
		b.Run("map/"+u.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ChooseGroups(r, &tok)
			}
		})
		b.Run("index/"+u.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = x.Choose(&tok)
			}
		})
	}
}

// BenchmarkWhoIsAsking measures the whole of this part of a decision: the
// header tokenized, the groups chosen, the client classified (warm cache).
func BenchmarkWhoIsAsking(b *testing.B) {
	x := NewGroupIndex(rules.Parse(benchRobots))
	c := agent.NewClassifier(0)
	whoIsAsking := func(ua string) bool {
		tok := agent.Tokenize(ua)
		m := x.Choose(&tok)
		automated := c.Classify(&tok).Automated() // always, as audit records want it
		return m.Named() || automated
	}
	for _, u := range testua.Headers {
		whoIsAsking(u.UA) // warm the cache
	}
	for _, u := range testua.Headers {
		b.Run(u.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				whoIsAsking(u.UA)
			}
		})
	}
	b.Run("mixed", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			whoIsAsking(testua.Headers[i].UA)
			i++
			if i == len(testua.Headers) {
				i = 0
			}
		}
	})
}
