package rules

// Paths read without regard to case. RFC 9309 §2.2.2 compares paths
// case-sensitively, as URIs are (RFC 3986 §6.2.2.1), and so does this
// package everywhere but here. Some origins do not: IIS, and servers on
// file systems that fold case (Windows, macOS by default), serve
// /PRIVATE/x as /private/x, so that "Disallow: /private/" would close one
// spelling of the page and not the other. For such an origin, a caller
// also matches the path folded (FoldPath) against the group folded
// (Group.Folded), and denies what either disallows.

// Folded returns g with the ASCII letters of its patterns in lower case,
// for matching a path folded with FoldPath: every spelling of a path that
// differs from another only in the case of its letters gets the verdict
// of the group's most specific rule for any of them, read as a
// case-insensitive origin reads both. It is built on first use (by one
// caller, when several race), and is safe for concurrent use.
func (g *Group) Folded() *Group {
	if f := g.fold.Load(); f != nil {
		return f
	}
	// The patterns folded keep their ranks: folding keeps lengths. They
	// are compiled into a text of the twin's own.
	var b textBuilder
	pats := make([]cpat, g.ranks.n)
	for rank, ri := range g.ranks.of(g.r.ranks) {
		text := g.r.rules[ri&^rankDir].pat.in(g.r.text)
		if ri&rankDir != 0 {
			dir, _ := indexPageDirectory(text)
			text = dir + "$"
		}
		text = toLowerASCII(text)
		pats[rank] = compilePattern(&b, text, b.add(text))
	}
	f := &Group{r: g.r, m: newMatcher(b.String(), pats), ranks: g.ranks, src: g.src, line: g.line, kind: g.kind}
	if !g.fold.CompareAndSwap(nil, f) {
		return g.fold.Load()
	}
	return f
}

// FoldPath appends to dst the canonical path p (see AppendCanonical) with
// its ASCII letters in lower case, but for the hex digits of its
// percent-encoded octets, which canonical form writes in upper case.
func FoldPath(dst []byte, p string) []byte {
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
