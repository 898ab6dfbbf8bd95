package rules

import (
	"fmt"
	"strings"
	"testing"
)

// usageBenchFiles are robots.txt files with usage preferences: the
// examples of draft-ietf-aipref-attach-05 and of this package, a group
// with a Content-Usage rule for each of 100 directories, some with
// wildcards, and the same with Cloudflare's Content-Signal line, whose
// answer combines with the Content-Usage one.
func usageBenchFiles() map[string]string {
	var dirs strings.Builder
	dirs.WriteString("User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=n, search=y\n")
	for i := range 100 {
		fmt.Fprintf(&dirs, "Content-Usage: /section-%d/ train-ai=%s\n", i, []string{"y", "n"}[i%2])
		if i%10 == 0 {
			fmt.Fprintf(&dirs, "Content-Usage: /*/archive-%d/*.pdf$ search=n\n", i)
		}
	}
	signal := strings.Replace(dirs.String(), "User-agent: *\n", "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\n", 1)
	return map[string]string{"attach": attachExample, "seed": seedExample, "dirs=100": dirs.String(),
		"signal": "User-agent: *\nContent-Signal: search=yes,ai-train=no\nAllow: /\n", "signal+dirs=100": signal}
}

var usageBenchPaths = []string{"/", "/research/paper.html", "/ai-ok/test", "/section-42/a/b.html",
	"/x/archive-30/report.pdf", "/blog/" + strings.Repeat("post-", 40) + "?q=1"}

// BenchmarkUsageCanonical: one Content-Usage lookup per op on a canonical
// target, as a handler makes beside Group.DecideCanonical. Target:
// 0 allocs/op.
func BenchmarkUsageCanonical(b *testing.B) {
	for name, body := range usageBenchFiles() {
		g := Parse([]byte(body)).Wildcard()
		var canon []string
		for _, p := range usageBenchPaths {
			canon = append(canon, canonicalTargetString(p))
		}
		b.Run("file="+name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				g.UsageCanonical(canon[i])
				if i++; i == len(canon) {
					i = 0
				}
			}
		})
	}
}
