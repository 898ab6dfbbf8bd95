package rules

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// floatingBrute is floatIndex.best by trying every pattern the index
// holds.
func floatingBrute(m *matcher, path string) int32 {
	best := int32(len(m.pats))
	for _, e := range m.floating.entries {
		if e.rank < best && m.match(e.rank, path) {
			best = e.rank
		}
	}
	return best
}

// floatingGroup returns a group of n floating rules ("/*" and a literal
// after it) whose keys start with one of starts, a few of them anchored,
// and the literals.
func floatingGroup(tb testing.TB, n int, starts string) (*Group, []string) {
	tb.Helper()
	var sb strings.Builder
	var literals []string
	sb.WriteString("user-agent: *\n")
	for i := range n {
		lit := fmt.Sprintf("%cx%02d", starts[i%len(starts)], i)
		kind, end := "disallow", ""
		if i%3 == 0 {
			kind = "allow"
		}
		if i%4 == 0 {
			end = "$"
		}
		fmt.Fprintf(&sb, "%s: /*%s%s\n", kind, lit, end)
		literals = append(literals, lit)
	}
	g := Parse([]byte(sb.String())).Wildcard()
	if len(g.m.floating.entries) != n {
		tb.Fatalf("floating index holds %d rules, want %d", len(g.m.floating.entries), n)
	}
	return g, literals
}

// TestFloatingIndex checks that the floating index finds what trying every
// rule it holds finds, the most specific match or none, on paths that hold
// the rules' literals anywhere, the first and last positions included, for
// keys that start with one octet, a few, delimiters, or many.
func TestFloatingIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, starts := range []string{"a", "/?.", "abc/", "abcdefghijklmnopqrstuvwxyz"} {
		g, literals := floatingGroup(t, 60, starts)
		const alphabet = "abcdefxyz0123456789/?."
		for i := range 3000 {
			b := []byte{'/'}
			for range rng.IntN(40) {
				b = append(b, alphabet[rng.IntN(len(alphabet))])
			}
			for range i % 3 { // some literals, anywhere, the end included
				at := rng.IntN(len(b) + 1)
				b = append(b[:at:at], append([]byte(literals[rng.IntN(len(literals))]), b[at:]...)...)
			}
			path := string(b)
			got := int32(len(g.m.pats))
			g.m.floating.best(g.m, path, -1, &got)
			if want := floatingBrute(g.m, path); got != want {
				t.Fatalf("starts %q: best(%q) = rank %d, trying every rule finds %d", starts, path, got, want)
			}
		}
	}
}

// TestFloatingKeyAtEnds checks that a key is found where a path starts and
// where it ends, the first and last positions a search visits.
func TestFloatingKeyAtEnds(t *testing.T) {
	r := Parse([]byte("user-agent: *\ndisallow: *abcd\ndisallow: /*.pdf$\ndisallow: */start\n"))
	for _, tt := range []struct {
		target string
		want   bool
	}{
		{"/abcd", false},
		{"/xabcd", false},
		{"/x.pdf", false},
		{"/abc", true},
		{"/x.pd", true},
		{"/x.pdfx", true},
		{"/start", false},
		{"/x/start", false},
		{"/star", true},
	} {
		if got := r.Allowed("x", tt.target); got != tt.want {
			t.Errorf("[RFC 9309 §2.2.3] Allowed(x, %q) = %v, want %v", tt.target, got, tt.want)
		}
	}
}

// TestDecideCorpusReference checks every decision the benchmarks ask of
// the real files (their own rules' paths, deep, encoded and long targets)
// against refDecide, which tries every rule of the group.
func TestDecideCorpusReference(t *testing.T) {
	n := 0
	for _, f := range loadCorpus(t) {
		if len(f.body) > 64<<10 {
			continue // the reference is quadratic
		}
		r := Parse(f.body)
		agents, paths := corpusMix(r)
		for _, g := range r.Groups() { // every group, not only the benchmarks'
			for _, a := range g.Agents {
				if a.Token != "" {
					for _, p := range pathMix(r, a.Token) {
						agents, paths = append(agents, a.Token), append(paths, p)
					}
				}
			}
		}
		for i, agent := range agents {
			n++
			if got, want := r.Decide(agent, paths[i]).Allowed, refDecide(r.GroupFor(agent), paths[i]); got != want {
				t.Errorf("%s: Decide(%q, %q).Allowed = %v, reference says %v", f.name, agent, paths[i], got, want)
			}
		}
	}
	if n < 1000 {
		t.Errorf("%d decisions checked, want at least 1000: is the corpus complete?", n)
	}
}
