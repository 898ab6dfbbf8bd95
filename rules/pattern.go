package rules

import (
	"slices"
	"strings"
)

// A Pattern is a rule's path pattern compiled for matching (RFC 9309 §2.2.2
// and §2.2.3). It is exported for tools that reason about rules, such as a
// linter, so that they read patterns exactly as the matcher does.
//
// The pattern text is split at each "*" wildcard into literal segments, held
// in matching form (see encoding.go). The first segment must start the path;
// every later segment must follow the previous one, anywhere after it. A "$"
// is special only as the last character of the pattern (as in Google's
// parser; the RFC does not say what "$" means elsewhere): it anchors the last
// segment to the end of the path. Anywhere else "$" is a literal octet.
//
// Because "*" matches any run of octets and there is no other operator,
// finding each segment at its leftmost possible place is enough: a later
// segment can only gain room from an earlier segment placed further left.
// Matching is therefore linear in the length of the path, with no
// backtracking, whatever the number of wildcards.
type Pattern struct {
	// segs holds the literal segments; segs[0] may be empty (the pattern
	// starts with "*"), every other segment is non-empty.
	segs []string
	// anchored is set when the pattern ends with "$" after a literal.
	anchored bool
	// priority is the octet length of the normalised pattern, "*" and "$"
	// included: the longest match wins (RFC 9309 §2.2.2).
	priority int
}

// CompilePattern compiles a pattern as written in robots.txt.
func CompilePattern(text string) Pattern {
	priority := len(canonical(text, false)) // of the pattern as written, "$" included
	anchored := strings.HasSuffix(text, "$")
	if anchored {
		text = text[:len(text)-1]
	}
	var segs []string
	for i, part := range strings.Split(text, "*") {
		if i > 0 && part == "" {
			continue // "**" is one wildcard; a trailing "*" adds nothing.
		}
		segs = append(segs, canonical(part, true))
	}
	if strings.HasSuffix(text, "*") {
		// "/a*" and "/a*$" both match every path that starts with "/a".
		anchored = false
	}
	return Pattern{segs: segs, anchored: anchored, priority: priority}
}

// Segments returns the literal segments between the pattern's wildcards, in
// matching form (see AppendCanonical); the first may be empty.
func (p *Pattern) Segments() []string { return slices.Clone(p.segs) }

// Anchored reports whether the last segment must end the path ("$").
func (p *Pattern) Anchored() bool { return p.anchored }

// Priority returns the octet length of the normalised pattern, by which the
// longest match wins.
func (p *Pattern) Priority() int { return p.priority }

// Match reports whether path, in the form AppendCanonicalTarget makes,
// matches the pattern.
func (p *Pattern) Match(path string) bool { return p.match(path) }

// prefix returns the literal text every matching path starts with.
func (p *Pattern) prefix() string { return p.segs[0] }

// matchRest reports whether path matches the pattern, given that path is
// already known to start with p.prefix().
func (p *Pattern) matchRest(path string) bool {
	pos := len(p.segs[0])
	last := len(p.segs) - 1
	if last == 0 {
		return !p.anchored || pos == len(path)
	}
	for _, seg := range p.segs[1:last] {
		i := strings.Index(path[pos:], seg)
		if i < 0 {
			return false
		}
		pos += i + len(seg)
	}
	seg := p.segs[last]
	if p.anchored {
		return len(path)-len(seg) >= pos && strings.HasSuffix(path, seg)
	}
	return strings.Contains(path[pos:], seg)
}

// match reports whether path, in matching form, matches the pattern.
func (p *Pattern) match(path string) bool {
	return strings.HasPrefix(path, p.segs[0]) && p.matchRest(path)
}
