package robotstxt

import (
	"os"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// BenchmarkGoogleAllows times Google's reading of the 500 KiB synthetic
// file's "*" group, whose patterns hold escapes, on a few paths: the
// compact form this package keeps, and the slice of segments it replaced
// (form=segmented, see google_test.go), for comparison.
func BenchmarkGoogleAllows(b *testing.B) {
	body, err := os.ReadFile("../../testdata/robots/synthetic-500k.txt")
	if err != nil {
		b.Fatal(err)
	}
	g := rules.Parse(body).Wildcard()
	gg, ref := newGoogleGroup(g), newSegmented(g)
	paths := []string{"/", "/a/b/c/d.html", "/caf%C3%A9/x", "/search?q=foo&page=2"}
	b.Run("form=compact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range paths {
				gg.allows(p)
			}
		}
	})
	b.Run("form=segmented", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range paths {
				ref.allows(p)
			}
		}
	})
}
