package rules

import "sync"

// Paths read without regard to case. RFC 9309 §2.2.2 compares paths
// case-sensitively, as URIs are (RFC 3986 §6.2.2.1), and so does this
// package everywhere but here. Some origins do not: IIS, and servers on
// file systems that fold case (Windows, macOS by default), serve
// /PRIVATE/x as /private/x, so that "Disallow: /private/" would close one
// spelling of the page and not the other. For such an origin, a caller
// also matches the path folded (FoldPath) against the group folded
// (Group.Folded), and denies what either disallows.

// folding is the lazily built folded twin of a Group.
type folding struct {
	once   sync.Once
	folded *Group
}

// Folded returns g with the ASCII letters of its patterns in lower case,
// for matching a path folded with FoldPath: every spelling of a path that
// differs from another only in the case of its letters gets the verdict
// of the group's most specific rule for any of them, read as a
// case-insensitive origin reads both. It is built once, on first use, and
// is safe for concurrent use.
func (g *Group) Folded() *Group {
	g.fold.once.Do(func() {
		f := &Group{line: g.line, kind: g.kind, crawlDelay: g.crawlDelay, rules: g.rules}
		for _, c := range g.compiled { // in rank order already: folding keeps lengths
			f.compiled = append(f.compiled, compileRule(c.rule, toLowerASCII(c.text)))
		}
		var rest []int32
		f.floating, rest = newFloatIndex(f.compiled)
		f.byPrefix = newPrefixIndex(f.compiled, rest)
		f.setVerdicts()
		g.fold.folded = f
	})
	return g.fold.folded
}

// FoldPath appends to dst the canonical path p (see AppendCanonicalTarget)
// with its ASCII letters in lower case, but for the hex digits of its
// percent-encoded octets, which canonical form writes in upper case.
func FoldPath(dst, p []byte) []byte {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p):
			dst = append(dst, c, p[i+1], p[i+2])
			i += 2
		case 'A' <= c && c <= 'Z':
			dst = append(dst, c+'a'-'A')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
