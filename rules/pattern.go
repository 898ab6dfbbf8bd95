package rules

import "strings"

// A Pattern is a rule's path pattern compiled for matching (RFC 9309
// §2.2.2 and §2.2.3). It is exported for tools that reason about rules,
// such as a linter, so that they read patterns exactly as the matcher does.
//
// The pattern text is split at each "*" wildcard into literal segments, in
// matching form (see encoding.go). The first segment must start the path;
// every later segment must follow the previous one, anywhere after it. A
// "$" is special only as the last character of the pattern (as in Google's
// parser; the RFC does not say what "$" means elsewhere): it anchors the
// last segment to the end of the path. Anywhere else "$" is a literal
// octet.
//
// Because "*" matches any run of octets and there is no other operator,
// finding each segment at its leftmost possible place is enough: a later
// segment can only gain room from an earlier segment placed further left.
// Matching is therefore linear in the length of the path, with no
// backtracking, whatever the number of wildcards.
type Pattern struct {
	text     string // the compiled text
	sep      byte   // its separator: '*' or wildSep
	anchored bool
	// priority is the octet length of the normalised pattern, "*" and "$"
	// included: the longest match wins (RFC 9309 §2.2.2).
	priority int
}

// A compiled pattern is one string: the segments with a separator between
// them, and an anchored flag. Most patterns are written in matching form
// already; the pattern as written, less its "$" and any trailing "*", is
// then the compiled text, its "*"s the separators, and the compact form
// keeps no second copy of it. Any other pattern is written anew, its
// segments in matching form separated by wildSep: matching form is ASCII,
// so that octet is in no segment, while a "*" can be (an encoded "%2A").

// wildSep separates the segments of a pattern written anew.
const wildSep = 0xFF

// CompilePattern compiles a pattern as written in robots.txt.
func CompilePattern(text string) Pattern {
	body, anchored := patternBody(text)
	p := Pattern{text: body, sep: '*', anchored: anchored, priority: canonicalLen(text, false)}
	if !isCanonical(body, true) {
		p.text, p.sep = string(appendSegments(nil, body)), wildSep
	}
	return p
}

// patternBody returns a pattern as written without its "$" anchor and
// without trailing "*"s, and whether it is anchored: "/a*" and "/a*$" both
// match every path that starts with "/a".
func patternBody(text string) (body string, anchored bool) {
	body, anchored = strings.CutSuffix(text, "$")
	if trimmed := strings.TrimRight(body, "*"); len(trimmed) < len(body) {
		return trimmed, false
	}
	return body, anchored
}

// appendSegments appends the segments of a pattern body (see patternBody)
// in matching form, separated by wildSep: "**" is one wildcard.
func appendSegments(dst []byte, body string) []byte {
	for first := true; ; first = false {
		part, rest, more := strings.Cut(body, "*")
		if first || part != "" {
			if !first {
				dst = append(dst, wildSep)
			}
			dst = appendCanonical(dst, part, true)
		}
		if !more {
			return dst
		}
		body = rest
	}
}

// Segments returns the literal segments between the pattern's wildcards, in
// matching form (see AppendCanonical); the first may be empty.
func (p *Pattern) Segments() []string {
	segs := []string{firstSegment(p.text, p.sep)}
	for rest := p.text[len(segs[0]):]; rest != ""; {
		rest = rest[1:] // the separator
		seg := rest
		if end := strings.IndexByte(rest, p.sep); end >= 0 {
			seg, rest = rest[:end], rest[end:]
		} else {
			rest = ""
		}
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	return segs
}

// Anchored reports whether the last segment must end the path ("$").
func (p *Pattern) Anchored() bool { return p.anchored }

// Priority returns the octet length of the normalised pattern, by which the
// longest match wins.
func (p *Pattern) Priority() int { return p.priority }

// Match reports whether path, a path in the form AppendCanonical makes,
// matches the pattern.
func (p *Pattern) Match(path string) bool { return matchPattern(p.text, p.sep, p.anchored, path) }

// firstSegment returns the literal text every path a compiled pattern
// matches starts with.
func firstSegment(text string, sep byte) string {
	if i := strings.IndexByte(text, sep); i >= 0 {
		return text[:i]
	}
	return text
}

// matchPattern reports whether path matches the compiled pattern text.
func matchPattern(text string, sep byte, anchored bool, path string) bool {
	first := strings.IndexByte(text, sep)
	if first < 0 {
		return strings.HasPrefix(path, text) && (!anchored || len(path) == len(text))
	}
	return strings.HasPrefix(path, text[:first]) && matchFrom(text[first+1:], sep, anchored, path, first)
}

// matchFrom reports whether path[pos:] matches the segments rest, split
// by sep: each found at its leftmost place after the previous one, the
// last at the end of the path when anchored.
func matchFrom(rest string, sep byte, anchored bool, path string, pos int) bool {
	for {
		// Segments are short: a loop here costs less than a call to
		// strings.IndexByte for each (BenchmarkDecide on istockphoto.com's
		// file, whose patterns have up to five).
		i := 0
		for i < len(rest) && rest[i] != sep {
			i++
		}
		if i == len(rest) {
			break
		}
		seg := rest[:i]
		rest = rest[i+1:]
		at := strings.Index(path[pos:], seg)
		if at < 0 {
			return false
		}
		pos += at + len(seg)
	}
	return matchLast(rest, anchored, path, pos)
}

// matchLast reports whether path[pos:] holds seg, the last segment of a
// pattern: at its end when anchored.
func matchLast(seg string, anchored bool, path string, pos int) bool {
	if anchored {
		return len(path)-len(seg) >= pos && strings.HasSuffix(path, seg)
	}
	return strings.Contains(path[pos:], seg)
}

// A cpat is a compiled pattern in the compact form: where its text is in
// a matcher's text, and its flags.
type cpat struct {
	off   uint32
	n     uint16 // at most three octets for each of MaxLineLength
	flags uint8
}

const (
	patAnchored  uint8 = 1 << iota
	patRewritten       // written anew: its separator is wildSep
)

// sep returns the separator of c's segments.
func (c cpat) sep() byte {
	if c.flags&patRewritten != 0 {
		return wildSep
	}
	return '*'
}

// in returns c's text in the text it was compiled into.
func (c cpat) in(text string) string { return text[c.off : c.off+uint32(c.n)] }

// compilePattern writes the compiled form of a pattern as written: in
// place, when at locates the pattern in the text b holds and it is in
// matching form already, or anew at the end of b.
func compilePattern(b *textBuilder, text string, at span) cpat {
	body, anchored := patternBody(text)
	c := cpat{off: at.off, n: uint16(len(body))}
	if anchored {
		c.flags |= patAnchored
	}
	if !isCanonical(body, true) {
		start := len(b.buf)
		b.buf = appendSegments(b.buf, body)
		c.off, c.n = uint32(start), uint16(len(b.buf)-start)
		c.flags |= patRewritten
	}
	return c
}
