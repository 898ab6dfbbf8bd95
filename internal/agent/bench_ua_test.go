package agent

import (
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
)

func BenchmarkTokenize(b *testing.B) {
	for _, u := range testua.Headers {
		b.Run(u.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(u.UA)))
			for b.Loop() {
				_ = Tokenize(u.UA)
			}
		})
	}
}

func BenchmarkClassifyWarm(b *testing.B) {
	c := NewClassifier(0)
	for _, u := range testua.Headers {
		tok := Tokenize(u.UA)
		c.Classify(&tok)
		b.Run(u.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.Classify(&tok)
			}
		})
	}
}
