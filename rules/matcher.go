package rules

// A matcher finds, among a group's patterns ranked most specific first,
// the first that matches a path (RFC 9309 §2.2.2: the longest pattern
// wins). It holds only the patterns, by rank, and two indexes of them
// (index.go, floating.go): what a rank means, allow or disallow and which
// line, is its group's. Groups whose patterns rank alike share one
// matcher, as the groups of a file that gives a dozen crawlers the same
// rules do.
type matcher struct {
	text     string // the text the patterns are compiled into
	pats     []cpat // by rank
	byPrefix prefixIndex
	floating *floatIndex // nil when no pattern floats
}

// newMatcher indexes the patterns, given by rank, compiled into text.
func newMatcher(text string, pats []cpat) *matcher {
	m := &matcher{text: text, pats: pats}
	var rest []int32
	m.floating, rest = newFloatIndex(m)
	m.byPrefix = newPrefixIndex(m, rest)
	return m
}

// pattern returns the compiled text of rank, its separator, and whether it
// is anchored.
func (m *matcher) pattern(rank int32) (text string, sep byte, anchored bool) {
	c := m.pats[rank]
	return c.in(m.text), c.sep(), c.flags&patAnchored != 0
}

// match reports whether path matches rank.
func (m *matcher) match(rank int32, path string) bool {
	text, sep, anchored := m.pattern(rank)
	return matchPattern(text, sep, anchored, path)
}

// matchAfterKey reports whether path, which starts with rank's first
// segment, keyLen octets long, matches rank, which has one more segment
// (restLast) or more (restMatch).
func (m *matcher) matchAfterKey(rank int32, rest restKind, keyLen uint32, path string) bool {
	text, sep, anchored := m.pattern(rank)
	if rest == restLast {
		return matchLast(text[keyLen+1:], anchored, path, int(keyLen))
	}
	return matchFrom(text[keyLen+1:], sep, anchored, path, int(keyLen))
}

// best returns the rank of the most specific pattern that matches path,
// or len(m.pats) when none does.
func (m *matcher) best(path string) int32 {
	best := int32(len(m.pats))
	m.byPrefix.best(m, path, -1, &best)
	if m.floating != nil {
		m.floating.best(m, path, -1, &best)
	}
	return best
}

// bestAfter lowers *best to the first rank past after whose pattern
// matches path. Content-Usage lookups use it to find, past the most
// specific pattern, the others as specific (see usageIndex.lookup).
func (m *matcher) bestAfter(path string, after int32, best *int32) {
	m.byPrefix.best(m, path, after, best)
	if m.floating != nil {
		m.floating.best(m, path, after, best)
	}
}
