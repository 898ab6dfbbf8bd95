package robotstxt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// segmented is Google's reading as it was first written here, each
// rule's pattern split into a slice of segments: the reference the
// compact googleGroup is checked against.
type segmented []segRule

type segRule struct {
	segs     []string
	anchored bool
	priority int
	allow    bool
}

func newSegmented(g *rules.Group) segmented {
	var out segmented
	for _, r := range g.Rules() {
		p := googleEscape(r.Pattern)
		var rule segRule
		rule.priority, rule.allow = len(p), r.Allow
		if strings.HasSuffix(p, "$") {
			rule.anchored, p = true, p[:len(p)-1]
		}
		for i, part := range strings.Split(p, "*") {
			if i == 0 || part != "" {
				rule.segs = append(rule.segs, part)
			}
		}
		if strings.HasSuffix(p, "*") {
			rule.anchored = false
		}
		out = append(out, rule)
	}
	return out
}

func (sg segmented) allows(path string) bool {
	best, allowed := -1, true
	for _, r := range sg {
		match := func() bool {
			if !strings.HasPrefix(path, r.segs[0]) {
				return false
			}
			pos, last := len(r.segs[0]), len(r.segs)-1
			for i := 1; i <= last; i++ {
				if i == last && r.anchored {
					return len(path)-pos >= len(r.segs[i]) && strings.HasSuffix(path, r.segs[i])
				}
				j := strings.Index(path[pos:], r.segs[i])
				if j < 0 {
					return false
				}
				pos += j + len(r.segs[i])
			}
			return !r.anchored || pos == len(path)
		}
		if r.priority < best || r.priority == best && !r.allow || !match() {
			continue
		}
		best, allowed = r.priority, r.allow
	}
	return allowed
}

// TestGoogleReading checks Google's reading on escapes, where it differs
// from this profile's: the path as sent against patterns whose hex digits
// are upper-cased and whose octets past US-ASCII are escaped.
func TestGoogleReading(t *testing.T) {
	r := rules.Parse([]byte("User-agent: *\nDisallow: /~staff/\nDisallow: /caf%c3%a9/\nDisallow: /a*%41*z$\nAllow: /caf%C3%A9/open\nDisallow: /x*\nDisallow: /d%41b*b$\n"))
	g := r.Wildcard()
	gg := newGoogleGroup(g)
	if gg == nil {
		t.Fatal("no Google form for a group with escapes")
	}
	for _, tt := range []struct {
		path  string
		allow bool
	}{
		{"/~staff/x", false}, {"/%7Estaff/x", true}, // Google compares the path as sent
		{"/caf%C3%A9/menu", false}, {"/caf%c3%a9/menu", true}, {"/café/menu", true},
		{"/caf%C3%A9/open", true}, {"/aq%41qz", false}, {"/aq%41qz/", true}, {"/a%41z", false},
		{"/x", false}, {"/y", true},
		{"/d%41bxb", false}, {"/d%41b", true}, // the last segment after the first, not within it
	} {
		if got := gg.allows(tt.path); got != tt.allow {
			t.Errorf("Google's reading allows %q: %v, want %v", tt.path, got, tt.allow)
		}
	}
}

// TestGoogleGroupDifferential checks the compact Google form against the
// form it replaced, on every group of the files of ../../testdata/robots
// with an escape, and on made patterns, for paths made from the patterns
// themselves and at random.
func TestGoogleGroupDifferential(t *testing.T) {
	var files [][]byte
	for _, f := range loadRobotsCorpus(t) {
		files = append(files, f.body)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"/", "a", "b", "%41", "%c3%a9", "é", "*", "$", "x", "?", "="}
	var made strings.Builder
	made.WriteString("User-agent: *\n")
	for range 300 {
		var p strings.Builder
		p.WriteString("/%")
		for range 1 + rng.IntN(6) {
			p.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		fmt.Fprintf(&made, "%s: %s\n", []string{"Allow", "Disallow"}[rng.IntN(2)], p.String())
	}
	files = append(files, []byte(made.String()))
	groups := 0
	for _, body := range files {
		r := rules.Parse(body)
		for _, g := range append([]*rules.Group{r.Wildcard()}, groupsOf(r)...) {
			if g == nil {
				continue
			}
			gg := newGoogleGroup(g)
			if gg == nil {
				continue
			}
			groups++
			ref := newSegmented(g)
			var paths []string
			rs := g.Rules()
			for _, i := range rng.Perm(len(rs))[:min(len(rs), 300)] {
				rule := rs[i]
				e := googleEscape(rule.Pattern)
				p := strings.NewReplacer("*", "q", "$", "").Replace(e)
				paths = append(paths, p, p+"z", p[:len(p)/2], strings.ToLower(p), strings.NewReplacer("*", "", "$", "").Replace(e))
			}
			for range 200 {
				var p strings.Builder
				p.WriteString("/")
				for range rng.IntN(8) {
					p.WriteString(strings.Trim(alphabet[rng.IntN(len(alphabet))], "*$"))
				}
				paths = append(paths, p.String())
			}
			for _, path := range paths {
				if got, want := gg.allows(path), ref.allows(path); got != want {
					t.Errorf("group of line %d: allows(%q) = %v, the segmented form says %v", g.Line(), path, got, want)
				}
			}
		}
	}
	if groups < 3 {
		t.Errorf("%d groups with escapes checked, want some from testdata/robots and the made file", groups)
	}
}

// groupsOf returns the named groups of r.
func groupsOf(r *rules.Robots) []*rules.Group {
	var out []*rules.Group
	for _, tok := range r.Tokens() {
		out = append(out, r.Group(tok))
	}
	return out
}
