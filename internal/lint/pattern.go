package lint

import (
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// indexPage reports whether an allow pattern names a directory index
// page, which also allows the directory itself (see the rules package).
func indexPage(text string) bool {
	return strings.Contains(text[strings.LastIndexByte(text, '/')+1:], "index.htm")
}

// A pattern is a rule's pattern as the rules package compiles it for
// matching (the literal segments between "*" wildcards, in canonical form,
// the "$" anchor, and the pattern's length, which ranks it, RFC 9309
// §2.2.2), read for analysis.
type pattern struct {
	compiled rules.Pattern
	segs     []string // segs[0] may be empty; the others are not
	anchored bool
	length   int
}

// newPattern reads a pattern, or returns false for one it cannot read
// exactly: one that matches no path (it starts with neither "/" nor "*"),
// or one with an encoded "*" or "$" (%2A, %24), whose canonical form the
// rules package ranks differently from the form it matches.
func newPattern(text string) (pattern, bool) {
	if text == "" || text[0] != '/' && text[0] != '*' {
		return pattern{}, false
	}
	if u := strings.ToUpper(text); strings.Contains(u, "%2A") || strings.Contains(u, "%24") {
		return pattern{}, false
	}
	c := rules.CompilePattern(text)
	return pattern{compiled: c, segs: c.Segments(), anchored: c.Anchored(), length: c.Priority()}, true
}

// equal reports whether p and q match the same paths with the same rank.
func (p pattern) equal(q pattern) bool {
	return p.anchored == q.anchored && p.length == q.length && slices.Equal(p.segs, q.segs)
}

// matchesEverything reports whether p matches every path: "/", "/*", "*".
func (p pattern) matchesEverything() bool {
	return !p.anchored && len(p.segs) == 1 && (p.segs[0] == "/" || p.segs[0] == "")
}

// exact reports whether p matches one path only: "/a$".
func (p pattern) exact() bool { return p.anchored && len(p.segs) == 1 }

// match reports whether p matches path, a path in canonical form, as the
// matcher does.
func (p pattern) match(path string) bool { return p.compiled.Match(path) }

// covers reports whether p matches every path q matches. The test is
// sufficient, not necessary: an exact q is matched against p; otherwise p's
// first segment must start q's, each of p's later segments must lie, in
// order, within one of q's literal segments (which every path q matches
// holds, in order), and p's "$" needs q's "$" and p's last segment at the
// end of q's.
func (p pattern) covers(q pattern) bool {
	if q.exact() {
		return p.match(q.segs[0])
	}
	if p.anchored && (!q.anchored || len(p.segs) == 1) || !strings.HasPrefix(q.segs[0], p.segs[0]) {
		return false
	}
	free := len(p.segs) // p's segments that may lie anywhere after the first
	if p.anchored {
		free--
	}
	j, k := 0, len(p.segs[0]) // where in q's segments the search goes on
	for _, seg := range p.segs[1:free] {
		for {
			if i := strings.Index(q.segs[j][k:], seg); i >= 0 {
				k += i + len(seg)
				break
			}
			if j++; j == len(q.segs) {
				return false
			}
			k = 0
		}
	}
	if !p.anchored {
		return true
	}
	seg, qLast := p.segs[len(p.segs)-1], len(q.segs)-1
	return strings.HasSuffix(q.segs[qLast], seg) && (j < qLast || len(q.segs[qLast])-len(seg) >= k)
}
