package enforce

import (
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// judge decides target under g by every reading, as the handler does, and
// returns whether it is allowed and which reading denied it.
func judge(t *testing.T, g *rules.Group, target string) (bool, Reading) {
	t.Helper()
	var rd Readings
	if !rd.Build(target) {
		return true, AsSent
	}
	for i := 0; i < rd.Len(); i++ {
		b, kind := rd.At(i)
		if !g.DecideCanonical(b).Allowed {
			return false, kind
		}
	}
	return true, AsSent
}

// TestBypassSpellings checks that no spelling of a disallowed path escapes
// the rule, and names the reading that catches each.
func TestBypassSpellings(t *testing.T) {
	r := rules.Parse([]byte("user-agent: *\ndisallow: /private/\ndisallow: /secret\n"))
	g := r.Wildcard()
	cases := []struct {
		target string
		want   bool
		by     Reading
	}{
		{"/private/x", false, AsSent},
		{"/%70rivate/x", false, AsSent}, // RFC 9309 §2.2.2 decodes unreserved octets
		{"//private/x", false, Cleaned},
		{"/./private/x", false, Cleaned},
		{"/pub/../private/x", false, Cleaned},
		{"/pub/%2e%2e/private/x", false, Cleaned},
		{"/pub/%2E%2E/private/x", false, Cleaned},
		{"/pub/..%2Fprivate/x", false, Decoded},
		{"/private%2Fx", false, Decoded},
		{"/private;a=b/x", false, Decoded},
		{"/private\\x", false, Decoded},
		{"/pub\\..\\private/x", false, Decoded},
		{"/pub/..%5Cprivate/x", false, Decoded},
		{"/pub/%252e%252e/private/x", false, Decoded}, // double encoding
		{"/../../private/x", false, Cleaned},          // ".." stops at the root
		{"http://example.com/private/x", false, AsSent},
		{"http://example.com//private/x?q=1", false, Cleaned},
		{"/secret", false, AsSent},
		{"/secret?x=1#frag", false, AsSent},
		// Allowed paths stay allowed under every reading.
		{"/public/x", true, AsSent},
		{"/public/private/x", true, AsSent},
		{"/privateer", true, AsSent},
		{"/pub/%2e%2e", true, AsSent},
		{"/a?next=/private/x", true, AsSent}, // a query is never decoded into the path
		// No path applies: pass.
		{"*", true, AsSent},
		{"", true, AsSent},
		{"example.com:443", true, AsSent},
		{"/robots.txt", true, AsSent},
	}
	for _, c := range cases {
		got, by := judge(t, g, c.target)
		if got != c.want || !got && by != c.by {
			t.Errorf("judge(%q) = %v by %v, want %v by %v", c.target, got, by, c.want, c.by)
		}
	}
}

// TestReadingsDistinct checks the readings themselves and that equal ones
// are kept once.
func TestReadingsDistinct(t *testing.T) {
	cases := []struct {
		target string
		want   []string
	}{
		{"/a/b?c=d", []string{"/a/b?c=d"}},
		{"/a//b/./c/../d?x=%2F", []string{"/a//b/./c/../d?x=%2F", "/a/b/d?x=%2F"}},
		{"/a%2Fb", []string{"/a%2Fb", "/a/b"}},
		{"/caf%C3%A9/", []string{"/caf%C3%A9/"}},
		{"/café/x/..", []string{"/caf%C3%A9/x/..", "/caf%C3%A9/"}},
		{"http://h?q", []string{"/?q"}},
		{"http://h", []string{"/"}},
		{"/a/.", []string{"/a/.", "/a/"}},
		{"/a/b/", []string{"/a/b/"}},
	}
	for _, c := range cases {
		var rd Readings
		if !rd.Build(c.target) {
			t.Errorf("Build(%q) = false", c.target)
			continue
		}
		var got []string
		for i := 0; i < rd.Len(); i++ {
			b, _ := rd.At(i)
			got = append(got, string(b))
		}
		if strings.Join(got, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("Build(%q) readings = %q, want %q", c.target, got, c.want)
		}
	}
}

// TestReadingsLongTarget checks a target longer than the stack buffers.
func TestReadingsLongTarget(t *testing.T) {
	long := "/x/" + strings.Repeat("a", 4*readingBufSize) + "/../private/y"
	g := rules.Parse([]byte("user-agent: *\ndisallow: /x/private/\n")).Wildcard()
	if ok, by := judge(t, g, long); ok || by != Cleaned {
		t.Errorf("judge(long) = %v by %v, want false by %v", ok, by, Cleaned)
	}
}

func FuzzReadings(f *testing.F) {
	for _, s := range []string{"/", "/a/../b", "//x//y/./z", "/%2e%2E/%252e", "\\..\\", "/a;b=c/d?e#f",
		"http://h/p?q", "*", "", "/%", "/%%%", "/a/b?c=/../d;e", "/a?b#c", "/x/.y", "/x/y.", "/caf\xc3\xa9", "/..%2f..%2f..%2fetc", strings.Repeat("/..", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		var rd, copied Readings
		built := rd.Build(target)
		// The uncopied fast path must read a target exactly as the
		// general one does.
		if copiedBuilt := copied.build(target); built != copiedBuilt || !sameReadings(&rd, &copied) {
			t.Fatalf("Build(%q) = %v %q, general path %v %q", target, built, allReadings(&rd), copiedBuilt, allReadings(&copied))
		}
		if !built {
			return
		}
		for i := 0; i < rd.Len(); i++ {
			b, kind := rd.At(i)
			if len(b) == 0 || b[0] != '/' {
				t.Fatalf("Build(%q): reading %v = %q does not start with /", target, kind, b)
			}
			if kind == Decoded && hasDotDotSegment(string(b)) {
				t.Fatalf("Build(%q): decoded reading %q keeps a dot segment in its path", target, b)
			}
		}
	})
}

func sameReadings(a, b *Readings) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := 0; i < a.Len(); i++ {
		ab, ak := a.At(i)
		bb, bk := b.At(i)
		if string(ab) != string(bb) || ak != bk {
			return false
		}
	}
	return true
}

func allReadings(rd *Readings) []string {
	var out []string
	for i := 0; i < rd.Len(); i++ {
		b, kind := rd.At(i)
		out = append(out, kind.String()+"="+string(b))
	}
	return out
}

// hasDotDotSegment reports whether a reading has a ".." segment before its
// first segment holding a "?": the query is kept as sent, and a decoded
// "%3F" may put a "?" in the path.
func hasDotDotSegment(reading string) bool {
	for seg := range strings.SplitSeq(reading, "/") {
		if strings.Contains(seg, "?") {
			return false
		}
		if seg == ".." {
			return true
		}
	}
	return false
}
