package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// The benchmarks here measure the targets of the rules package over the
// real files in ../testdata/robots. Run them by hand (see README.md,
// "Performance"); CI runs them only as tests, once each.

// benchAgents are the product tokens decisions are asked for: two that most
// files name, and one that falls to the "*" group.
var benchAgents = []string{"Googlebot", "GPTBot", "SomeCrawler"}

type corpusFile struct {
	name string
	body []byte
}

func loadCorpus(tb testing.TB) []corpusFile {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "robots", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no robots.txt files in ../testdata/robots: %v", err)
	}
	var out []corpusFile
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, corpusFile{strings.TrimSuffix(filepath.Base(f), ".txt"), b})
	}
	return out
}

// canonicalTargetString returns the part of target rules are matched
// against, as Decide reads it, in canonical form.
func canonicalTargetString(target string) string {
	return string(appendCanonicalTarget(nil, target))
}

// concretePath turns a rule's pattern into a path it matches.
func concretePath(pattern string) string {
	p := strings.TrimSuffix(pattern, "$")
	p = strings.ReplaceAll(p, "*", "x")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// pathMix returns the paths decisions are asked for on a file: paths its
// rules allow and disallow, the root, a deep path, a percent-encoded one and
// one with a long query.
func pathMix(r *Robots, agent string) []string {
	mix := []string{
		"/",
		"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/index.html",
		"/caf%C3%A9/%7Euser/docs%2Fa/%E3%83%84?x=%41",
		"/search?q=" + strings.Repeat("robots+txt+", 40) + "&page=2",
	}
	if g := r.GroupFor(agent); g != nil {
		var allow, disallow int
		for _, rule := range g.Rules() {
			switch {
			case rule.Allow && allow < 2:
				allow++
			case !rule.Allow && disallow < 2:
				disallow++
			default:
				continue
			}
			mix = append(mix, concretePath(rule.Pattern), concretePath(rule.Pattern)+"/more/path.html")
		}
	}
	return mix
}

// corpusMix returns the agents and paths decisions are asked for on a file,
// as two lists of the same length: every benchmark agent with its path mix.
func corpusMix(r *Robots) (agents, paths []string) {
	for _, a := range benchAgents {
		for _, p := range pathMix(r, a) {
			agents, paths = append(agents, a), append(paths, p)
		}
	}
	return agents, paths
}

// BenchmarkDecide: one decision per op, cycling through agents and the
// path mix, per corpus file. Target: median ≤ 150 ns, slowest ≤ 2 µs,
// 0 allocs/op.
func BenchmarkDecide(b *testing.B) {
	for _, f := range loadCorpus(b) {
		r := Parse(f.body)
		agents, paths := corpusMix(r)
		b.Run("file="+f.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Decide(agents[i], paths[i])
				if i++; i == len(paths) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkTemoto is BenchmarkDecide with github.com/temoto/robotstxt, for
// comparison: same files, agents and paths.
func BenchmarkTemoto(b *testing.B) {
	for _, f := range loadCorpus(b) {
		theirs, err := robotstxt.FromBytes(f.body)
		if err != nil {
			b.Logf("temoto cannot parse %s: %v", f.name, err)
			continue
		}
		agents, paths := corpusMix(Parse(f.body))
		b.Run("file="+f.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				theirs.TestAgent(paths[i], agents[i])
				if i++; i == len(paths) {
					i = 0
				}
			}
		})
	}
}

// groupOfSize returns a robots.txt with one "*" group holding the first n
// rules of the synthetic file's "*" group (about 10,000 rules, wildcards,
// anchors, encodings and queries mixed as in the whole file).
func groupOfSize(tb testing.TB, n int) (*Robots, []string) {
	body, err := os.ReadFile(filepath.Join("..", "testdata", "robots", "synthetic-500k.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	all := Parse(body).Wildcard().Rules()
	if len(all) < n {
		tb.Fatalf("synthetic file's * group has %d rules, want at least %d", len(all), n)
	}
	var sb strings.Builder
	sb.WriteString("user-agent: *\n")
	for _, rule := range all[:n] {
		kind := "disallow"
		if rule.Allow {
			kind = "allow"
		}
		fmt.Fprintf(&sb, "%s: %s\n", kind, rule.Pattern)
	}
	// The same paths for every size: built from the first rules, which
	// every size holds, plus the fixed mix.
	paths := pathMix(Parse([]byte("user-agent: *\n"+strings.SplitN(sb.String(), "\n", 12)[1])), "x")
	for _, rule := range all[:10] {
		paths = append(paths, concretePath(rule.Pattern), concretePath(rule.Pattern)+"?q=1")
	}
	return Parse([]byte(sb.String())), paths
}

// BenchmarkGroupSize: the cost of a decision as a group grows from 10 to
// 10,000 rules. Target: 10,000 rules cost at most 3× what 10 rules cost.
func BenchmarkGroupSize(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		r, paths := groupOfSize(b, n)
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Decide("AnyBot", paths[i])
				if i++; i == len(paths) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkPathological: patterns built to make a backtracking matcher take
// exponential or quadratic time, against a 16 KiB path. Target: microseconds.
func BenchmarkPathological(b *testing.B) {
	path := "/" + strings.Repeat("a", 16<<10)
	cases := map[string]string{
		"stars=2000":       strings.Repeat("*", 2000),
		"star-a=1000":      "/" + strings.Repeat("*a", 1000) + "b",
		"star-a-anchored":  "/" + strings.Repeat("a*", 1000) + "b$",
		"star-long-needle": "/*" + strings.Repeat("a", 8<<10) + "b",
	}
	for name, pattern := range cases {
		r := Parse([]byte("user-agent: *\ndisallow: " + pattern + "\n"))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Decide("AnyBot", path)
			}
		})
	}
}

// BenchmarkParse: parse throughput, everything a decision needs built,
// per corpus file and for the whole corpus at once (file=corpus), and
// temoto's for the same.
func BenchmarkParse(b *testing.B) {
	run := func(name string, set []corpusFile) {
		size := 0
		for _, f := range set {
			size += len(f.body)
		}
		b.Run("file="+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, f := range set {
					Parse(f.body)
				}
			}
		})
		b.Run("temoto/file="+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, f := range set {
					robotstxt.FromBytes(f.body)
				}
			}
		})
	}
	files := loadCorpus(b)
	run("corpus", files)
	for _, f := range files {
		run(f.name, []corpusFile{f})
	}
}

// BenchmarkDecideCanonical: BenchmarkDecide's decisions through the path
// the enforce package takes, Group.DecideCanonical, with the group found
// and the target made canonical beforehand. Target: 0 allocs/op, and no
// slower for the usage preferences that Decide gained.
func BenchmarkDecideCanonical(b *testing.B) {
	for _, f := range loadCorpus(b) {
		r := Parse(f.body)
		agents, paths := corpusMix(r)
		groups, canon := make([]*Group, len(agents)), make([]string, len(paths))
		for i := range agents {
			groups[i], canon[i] = r.GroupFor(agents[i]), canonicalTargetString(paths[i])
		}
		b.Run("file="+f.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if g := groups[i]; g != nil {
					g.DecideCanonical(canon[i])
				}
				if i++; i == len(paths) {
					i = 0
				}
			}
		})
	}
}
