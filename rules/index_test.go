package rules

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPrefixIndexLongest checks that the prefix index finds, for any path,
// the longest key that is a prefix of it, as a scan of every key does, with
// keys and paths around the eight octets the binary search compares as
// integers first: shorter, as long, longer, equal there and differing
// after, and octets past 0x7F and 0x00, which sort at the ends.
func TestPrefixIndexLongest(t *testing.T) {
	const alphabet = "/ab\x00\xff"
	rng := rand.New(rand.NewPCG(3, 4))
	word := func(max int) string {
		b := make([]byte, rng.IntN(max+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 40 {
		var sb strings.Builder
		sb.WriteString("user-agent: *\n")
		keys := map[string]bool{}
		for range 1 + rng.IntN(30) {
			k := "/" + word(12)
			keys[canonical(k, true)] = true
			fmt.Fprintf(&sb, "disallow: %s\n", k)
		}
		g := Parse([]byte(sb.String())).Wildcard()
		x := &g.m.byPrefix
		if len(x.keys) != len(keys) {
			t.Fatalf("index has %d keys, want %d", len(x.keys), len(keys))
		}
		var indexed []string
		for i := range x.keys {
			indexed = append(indexed, x.key(g.m.text, int32(i)))
		}
		for range 200 {
			path := "/" + word(14)
			if rng.IntN(2) == 0 { // a key and more
				path = indexed[rng.IntN(len(indexed))] + word(4)
			}
			want := ""
			found := false
			for k := range keys {
				if strings.HasPrefix(path, k) && (!found || len(k) > len(want)) {
					want, found = k, true
				}
			}
			i := x.longest(g.m.text, path)
			switch {
			case !found && i >= 0:
				t.Fatalf("keys %q: longest(%q) = %q, want none", indexed, path, indexed[i])
			case found && (i < 0 || indexed[i] != want):
				got := "none"
				if i >= 0 {
					got = fmt.Sprintf("%q", indexed[i])
				}
				t.Fatalf("keys %q: longest(%q) = %s, want %q", indexed, path, got, want)
			}
		}
	}
}

// TestPrefixRuleEnds checks the three kinds of rule a key files (RFC 9309
// §2.2.3): the key alone matches every path it starts, the key and "$"
// only the key itself, and a key followed by more pattern what that adds.
func TestPrefixRuleEnds(t *testing.T) {
	r := Parse([]byte("user-agent: *\nallow: /a\ndisallow: /a$\ndisallow: /b/c*d\ndisallow: /b/c$\n"))
	for _, tt := range []struct {
		target string
		want   bool
	}{
		{"/a", false},
		{"/ab", true},
		{"/a?", true},
		{"/b/c", false},
		{"/b/cd", false},
		{"/b/cx", true},
		{"/b/c/d", false},
	} {
		if got := r.Allowed("x", tt.target); got != tt.want {
			t.Errorf("[RFC 9309 §2.2.3] Allowed(x, %q) = %v, want %v", tt.target, got, tt.want)
		}
	}
}
