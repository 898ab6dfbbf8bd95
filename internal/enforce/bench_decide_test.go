package enforce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
)

// benchUserAgents mixes real crawler and browser headers, none over 512
// octets.
var benchUserAgents = []string{
	testua.GPTBot, testua.Googlebot, testua.GooglebotMob, testua.Bingbot, testua.Bytespider, testua.CCBot, testua.ClaudeBot,
	testua.PerplexityBot, testua.Amazonbot, testua.Applebot, testua.Chrome, testua.Firefox, testua.Safari, uaCurl,
}

// benchTargets mixes ordinary, deep, encoded, dotted and long-query targets.
var benchTargets = []string{
	"/", "/private/report.pdf", "/search?q=robots&page=2", "/a/b/c/d/e/f/g/h/index.html",
	"/caf%C3%A9/%7Euser/docs", "/pub/../admin/", "/wp-admin/admin-ajax.php",
	"/search?q=" + strings.Repeat("crawler+", 40),
}

// BenchmarkDecision: a whole decision per op (tokenising the header,
// classifying it with a warm cache, choosing groups, building every reading
// of the target and matching each), per corpus file. Target: median ≤ 400 ns
// and 0 allocs/op.
func BenchmarkDecision(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "robots", "*.txt"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no robots.txt files in ../testdata/robots: %v", err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{Body: string(body)})
		if err != nil {
			b.Fatal(err)
		}
		snap := src.Snapshot(b.Context(), "example.com")
		d := NewDecider(Policy{}, nil)
		var reqs []Query
		for _, ua := range benchUserAgents {
			for _, target := range benchTargets {
				reqs = append(reqs, Query{Target: target, UserAgent: ua})
			}
		}
		var rd Readings
		for _, r := range reqs { // warm the classifier's cache
			d.Decide(snap, r, &rd)
		}
		b.Run("file="+strings.TrimSuffix(filepath.Base(f), ".txt"), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				d.Decide(snap, reqs[i], &rd)
				if i++; i == len(reqs) {
					i = 0
				}
			}
		})
	}
}
