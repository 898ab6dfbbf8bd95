package rules

import "testing"

// For a case-insensitive origin, a path folded is matched against the
// group folded: no spelling of a disallowed path escapes, whatever the
// case of the rule or of the request, and an Allow keeps its place.
func TestFolded(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /private/\nDisallow: /Reports/\nAllow: /private/Press/\nAllow: /docs/index.html\nDisallow: /docs/\n"))
	g := r.Wildcard().Folded()
	cases := []struct {
		target string
		allow  bool
	}{
		{"/PRIVATE/x", false},
		{"/Private/x", false},
		{"/reports/q3", false},
		{"/REPORTS/q3", false},
		{"/private/press/x", true}, // the Allow carve-out, folded too
		{"/PRIVATE/PRESS/x", true},
		{"/DOCS/", true}, // the directory an index page implies
		{"/DOCS/a", false},
		{"/public", true},
		{"/p%2Frivate/x", true}, // an encoded slash stays one: no rule matches it
	}
	for _, c := range cases {
		canon := canonicalTargetString(c.target)
		folded := string(FoldPath(nil, canon))
		if v := g.DecideCanonical(folded); v.Allowed != c.allow {
			t.Errorf("Folded().DecideCanonical(%q, as %q) = %v by %q, want %v", c.target, folded, v.Allowed, v.Rule.Pattern, c.allow)
		}
	}
	if got := string(FoldPath(nil, "/A%2Fb%C3%A9/X")); got != "/a%2Fb%C3%A9/x" {
		t.Errorf("FoldPath = %q, want the letters folded and the escapes' hex kept", got)
	}
	if g != r.Wildcard().Folded() {
		t.Error("Folded built twice")
	}
}

// TestFoldedConcurrent checks that callers racing to build a group's
// folded twin all get the one that is kept, and can decide with it.
func TestFoldedConcurrent(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /Private/\n"))
	g := r.Wildcard()
	const n = 8
	got := make(chan *Group, n)
	for range n {
		go func() {
			f := g.Folded()
			if f.DecideCanonical("/private/x").Allowed {
				t.Error("Folded().DecideCanonical(/private/x) allowed, want denied")
			}
			got <- f
		}()
	}
	first := <-got
	for range n - 1 {
		if f := <-got; f != first {
			t.Fatal("Folded returned two different groups to callers that raced")
		}
	}
	if g.Folded() != first {
		t.Error("Folded returned another group after the race")
	}
}
