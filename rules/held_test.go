package rules

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

// heldTolerance and heldSlack bound how far HeldSize may be from what the
// runtime's heap figures say a parsed file holds: a fraction of the
// latter, or heldSlack octets for the smallest files. What it cannot know
// exactly is the tiny allocator's sharing of small blocks (which the race
// detector turns off: a file of 538 octets then holds 44 more).
const (
	heldTolerance = 0.05
	heldSlack     = 64
)

// measuredHeld returns the heap one parsed copy of body holds once prep
// (nil for none) has run on it, measured as heldBytes measures it.
func measuredHeld(body []byte, prep func(*Robots)) float64 {
	copies := min(64, max(1, (256<<10)/(len(body)+1)))
	keep := make([]*Robots, copies)
	warm := Parse(body)
	if prep != nil {
		prep(warm)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = Parse(body)
		if prep != nil {
			prep(keep[i])
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(copies)
}

// foldAll builds the folded twin of every group of r.
func foldAll(r *Robots) {
	for i := range r.groups {
		r.groups[i].Folded()
	}
}

// heldFiles are files made to hold much of what a typical file holds
// little of: many groups, usage preferences of both kinds with members
// outside the vocabulary, floating rules, records and diagnostics.
func heldFiles() []corpusFile {
	var tokens, usage, floating, records, diags strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&tokens, "User-agent: bot%c%c%c\nDisallow: /private/%d/\n\n", 'a'+i%26, 'a'+i/26%26, 'a'+i/676, i%50)
	}
	usage.WriteString("User-agent: *\nContent-Signal: search=yes, ai-train=no\n")
	for i := range 1500 {
		fmt.Fprintf(&usage, "Content-Usage: /p%d/ train-ai=n, x%d=y, ai-use=y\n", i, i%20)
		if i%10 == 0 {
			fmt.Fprintf(&usage, "Content-Signal: /p%d/ search=no, ai-input=yes\n", i)
		}
	}
	usage.WriteString("Disallow: /admin/\n")
	floating.WriteString("User-agent: *\n")
	for i := range 3000 {
		fmt.Fprintf(&floating, "Disallow: /*/print%d/\nAllow: /*.pdf%d$\n", i, i)
	}
	records.WriteString("User-agent: *\nDisallow: /a\n")
	for i := range 3000 {
		fmt.Fprintf(&records, "Sitemap: https://example.com/sitemaps/%d.xml\nHost: h%d\n", i, i)
	}
	for i := range 20000 {
		fmt.Fprintf(&diags, "x%d\n", i%10)
	}
	return []corpusFile{
		{"made/tokens", []byte(tokens.String())},
		{"made/usage", []byte(usage.String())},
		{"made/floating", []byte(floating.String())},
		{"made/records", []byte(records.String())},
		{"made/diagnostics", []byte(diags.String())},
	}
}

// TestHeldSizeCount checks HeldSize against the runtime's heap figures,
// within heldTolerance, over the files in ../testdata/robots and files
// made to hold what those hold little of, with and without their groups'
// folded twins.
func TestHeldSizeCount(t *testing.T) {
	files := append(loadCorpus(t), heldFiles()...)
	worst := 0.0
	for _, f := range files {
		for _, fold := range []bool{false, true} {
			var prep func(*Robots)
			if fold {
				prep = foldAll
			}
			measured := measuredHeld(f.body, prep)
			r := Parse(f.body)
			if prep != nil {
				prep(r)
			}
			counted := float64(r.HeldSize())
			off := (counted - measured) / measured
			worst = max(worst, math.Abs(off))
			t.Logf("%-24s folded=%-5v heap %9.0f, HeldSize %9.0f (%+.2f%%)", f.name, fold, measured, counted, 100*off)
			if math.Abs(off) > heldTolerance && math.Abs(counted-measured) > heldSlack {
				t.Errorf("%s (folded twins: %v): HeldSize() = %.0f, the heap says %.0f: %+.1f%%, want within %.0f%% or %d octets",
					f.name, fold, counted, measured, 100*off, 100*heldTolerance, heldSlack)
			}
		}
	}
	t.Logf("the most off: %.2f%%", 100*worst)
}

// TestDecisionsOnly checks that DecisionsOnly decides as the whole file
// does, for every token the file names and one it does not, on the paths
// of its own rules and others, by Decide and by each group's
// DecideCanonical, and that it holds less. With -v it prints what it
// saves on each file.
func TestDecisionsOnly(t *testing.T) {
	var whole, lean int
	for _, f := range append(loadCorpus(t), heldFiles()...) {
		r := Parse(f.body)
		d := r.DecisionsOnly()
		if d.DecisionsOnly() != d {
			t.Errorf("%s: DecisionsOnly of DecisionsOnly is a new copy", f.name)
		}
		agents := append(r.Tokens(), "*", "nosuchbot")
		for _, agent := range agents {
			for _, path := range pathMix(r, agent) {
				got, want := d.Decide(agent, path), r.Decide(agent, path)
				want.Usage = Usage{} // left out
				if got != want {
					t.Errorf("%s: DecisionsOnly().Decide(%q, %q) = %+v, want %+v", f.name, agent, path, got, want)
				}
				if g, w := d.GroupFor(agent), r.GroupFor(agent); (g == nil) != (w == nil) {
					t.Errorf("%s: DecisionsOnly().GroupFor(%q) = %v, want %v", f.name, agent, g, w)
				} else if g != nil {
					canon := canonicalTargetString(path)
					if got, want := g.DecideCanonical(canon), w.DecideCanonical(canon); got != want {
						t.Errorf("%s: DecideCanonical(%q) under %q = %+v, want %+v", f.name, canon, agent, got, want)
					}
					if g.HasUsage() {
						t.Errorf("%s: the group of %q keeps usage preferences", f.name, agent)
					}
				}
			}
		}
		if len(d.Groups()) != len(r.Groups()) || d.Records() != nil || d.Diagnostics() != nil {
			t.Errorf("%s: DecisionsOnly keeps %d groups of %d, %d records, %d diagnostics; want all groups and no records or diagnostics",
				f.name, len(d.Groups()), len(r.Groups()), len(d.Records()), len(d.Diagnostics()))
		}
		w, l := r.HeldSize(), d.HeldSize()
		if l > w {
			t.Errorf("%s: DecisionsOnly holds %d octets, more than the whole file's %d", f.name, l, w)
		}
		t.Logf("%-24s holds %8d, decisions only %8d (%.1f%% less)", f.name, w, l, 100*float64(w-l)/float64(w))
		if !strings.HasPrefix(f.name, "made/") {
			whole, lean = whole+w, lean+l
		}
	}
	t.Logf("testdata/robots: %d octets held, %d decisions only (%.1f%% less)", whole, lean, 100*float64(whole-lean)/float64(whole))
}

// BenchmarkHeldSize times HeldSize, which a host that bounds memory calls
// for each file it takes in: on the 500 KiB synthetic file and on the
// median file of ../testdata/robots, beside parsing them.
func BenchmarkHeldSize(b *testing.B) {
	for _, f := range loadCorpus(b) {
		if f.name != "synthetic-500k" && f.name != "nytimes.com" {
			continue
		}
		r := Parse(f.body)
		b.Run("file="+f.name+"/op=held", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.HeldSize()
			}
		})
		b.Run("file="+f.name+"/op=parse", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse(f.body)
			}
		})
	}
}
