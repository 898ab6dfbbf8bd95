package rules

// The compact form. A parsed file keeps no copy of its body and no string
// of its own for each pattern, value or message: every string it holds is
// written once into one backing string (Robots.text), and its tables hold
// offsets into it. Patterns, user-agent values and record keys are written
// once however often the file repeats them, as files that give a dozen
// crawlers the same rules do. Comments, white space and keys are not kept
// at all. See docs/performance.md for what a file holds.

// A span locates a string in a backing text.
type span struct {
	off, n uint32
}

// in returns the string s locates in text.
func (s span) in(text string) string { return text[s.off : s.off+s.n] }

// maxParsedSize bounds Options.MaxSize, so that every offset into the
// backing text fits 32 bits: the text holds at most four octets for each
// octet read (a pattern as written, and again in matching form, three
// octets for each octet it encodes; anything else once at most).
const maxParsedSize = 256 << 20

// A textBuilder writes the backing text while a file is parsed.
type textBuilder struct {
	buf  []byte
	seen map[string]uint32 // the strings written with intern, by offset
}

// add writes s and returns where it is.
func (b *textBuilder) add(s string) span {
	at := span{off: uint32(len(b.buf)), n: uint32(len(s))}
	b.buf = append(b.buf, s...)
	return at
}

// intern returns where s is, writing it only if it was not written with
// intern before.
func (b *textBuilder) intern(s string) span {
	if off, ok := b.seen[s]; ok {
		return span{off: off, n: uint32(len(s))}
	}
	if b.seen == nil {
		b.seen = map[string]uint32{}
	}
	at := b.add(s)
	b.seen[s] = at.off
	return at
}

// String returns the text written, in a string of its own size.
func (b *textBuilder) String() string { return string(b.buf) }
