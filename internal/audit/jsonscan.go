package audit

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// The records are read with a small JSON scanner rather than
// encoding/json: a record has some thirty top-level fields, of which the
// audit needs about twenty, and a log holds millions of records. The scanner checks
// the whole line against the JSON grammar (RFC 8259), keeps the values it
// needs as slices of the line (unescaping only strings that hold escapes),
// and skips the rest without allocating.

// Errors of the scanner; a line that fails with either is skipped.
var (
	// errTruncated: the line ended inside the object.
	errTruncated = errors.New("truncated JSON")
	// errMalformed: the line breaks the JSON grammar.
	errMalformed = errors.New("malformed JSON")
)

// maxNesting bounds how deeply the values the audit skips may nest, so that
// a hostile line of brackets cannot exhaust the stack: records nest no
// deeper than an array of strings, and encoding/json allows 10,000 levels.
const maxNesting = 10000

// scanner reads one JSON text from a line.
type scanner struct {
	buf []byte
	pos int
	// scratch holds unescaped strings; slices of it stay valid until reset
	// (a new backing array leaves old slices intact).
	scratch []byte
	// stack is skipValue's, kept to save its allocation.
	stack []byte
}

func (s *scanner) reset(line []byte) {
	s.buf, s.pos, s.scratch = line, 0, s.scratch[:0]
}

// fail returns errTruncated at the end of the line, else errMalformed.
func (s *scanner) fail() error {
	if s.pos >= len(s.buf) {
		return errTruncated
	}
	return errMalformed
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.pos < len(s.buf) {
		return s.buf[s.pos]
	}
	return 0
}

// expect consumes c after white space.
func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.fail()
	}
	s.pos++
	return nil
}

// str reads a string at the current position (after its opening quote has
// been seen by peek) and returns its value: a slice of the line when it
// holds no escape, else of scratch.
func (s *scanner) str() ([]byte, error) {
	s.pos++ // the opening quote
	start := s.pos
	for s.pos < len(s.buf) {
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.buf[start : s.pos-1], nil
		case c == '\\':
			return s.strEscaped(start)
		case c < 0x20:
			return nil, errMalformed
		}
		s.pos++
	}
	return nil, errTruncated
}

// strEscaped finishes a string that holds an escape, unescaping it into
// scratch. Invalid UTF-8 is kept as it is, and an unpaired surrogate
// becomes U+FFFD, as encoding/json does.
func (s *scanner) strEscaped(start int) ([]byte, error) {
	from := len(s.scratch)
	s.scratch = append(s.scratch, s.buf[start:s.pos]...)
	for s.pos < len(s.buf) {
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.scratch[from:len(s.scratch):len(s.scratch)], nil
		case c < 0x20:
			return nil, errMalformed
		case c != '\\':
			s.scratch = append(s.scratch, c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.buf) {
			return nil, errTruncated
		}
		e := s.buf[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			s.scratch = append(s.scratch, e)
		case 'b':
			s.scratch = append(s.scratch, '\b')
		case 'f':
			s.scratch = append(s.scratch, '\f')
		case 'n':
			s.scratch = append(s.scratch, '\n')
		case 'r':
			s.scratch = append(s.scratch, '\r')
		case 't':
			s.scratch = append(s.scratch, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				r = s.lowSurrogate(r)
			}
			s.scratch = utf8.AppendRune(s.scratch, r)
		default:
			return nil, errMalformed
		}
	}
	return nil, errTruncated
}

// lowSurrogate combines the high surrogate r with a \u escape of a low
// surrogate that follows it, consuming that escape; anything else leaves
// the position alone and makes r U+FFFD.
func (s *scanner) lowSurrogate(r rune) rune {
	save := s.pos
	if s.pos+1 < len(s.buf) && s.buf[s.pos] == '\\' && s.buf[s.pos+1] == 'u' {
		s.pos += 2
		if r2, err := s.hex4(); err == nil {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec
			}
		}
	}
	s.pos = save
	return utf8.RuneError
}

// hex4 reads the four hex digits of a \u escape.
func (s *scanner) hex4() (rune, error) {
	if s.pos+4 > len(s.buf) {
		for ; s.pos < len(s.buf); s.pos++ {
			if unhex(s.buf[s.pos]) < 0 {
				return 0, errMalformed
			}
		}
		return 0, errTruncated
	}
	var r rune
	for _, c := range s.buf[s.pos : s.pos+4] {
		d := unhex(c)
		if d < 0 {
			return 0, errMalformed
		}
		r = r<<4 | d
	}
	s.pos += 4
	return r, nil
}

func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// number reads a number at the current position and returns its text.
func (s *scanner) number() ([]byte, error) {
	start := s.pos
	if s.pos < len(s.buf) && s.buf[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos >= len(s.buf):
		return nil, errTruncated
	case s.buf[s.pos] == '0':
		s.pos++
	case isDigit(s.buf[s.pos]):
		s.digits()
	default:
		return nil, errMalformed
	}
	if s.pos < len(s.buf) && s.buf[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return nil, s.fail()
		}
	}
	if s.pos < len(s.buf) && (s.buf[s.pos] == 'e' || s.buf[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.buf) && (s.buf[s.pos] == '+' || s.buf[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return nil, s.fail()
		}
	}
	return s.buf[start:s.pos], nil
}

// digits consumes a run of decimal digits and returns its length.
func (s *scanner) digits() int {
	start := s.pos
	for s.pos < len(s.buf) && isDigit(s.buf[s.pos]) {
		s.pos++
	}
	return s.pos - start
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// literal consumes true, false or null, and returns which (null reads as
// an absent field).
func (s *scanner) literal() (tri, error) {
	var text string
	var val tri
	switch s.buf[s.pos] {
	case 't':
		text, val = "true", triTrue
	case 'f':
		text, val = "false", triFalse
	case 'n':
		text, val = "null", triAbsent
	default:
		return 0, errMalformed
	}
	rest := s.buf[s.pos:]
	n := min(len(rest), len(text))
	if string(rest[:n]) != text[:n] {
		return 0, errMalformed
	}
	s.pos += n
	if n < len(text) {
		return 0, errTruncated
	}
	return val, nil
}

// skipValue consumes any value, nested ones included.
func (s *scanner) skipValue() error {
	stack := s.stack[:0] // the closers of the open containers
	defer func() { s.stack = stack[:0] }()
	for {
		switch c := s.peek(); c {
		case '"':
			if _, err := s.str(); err != nil {
				return err
			}
		case '{', '[':
			if len(stack) >= maxNesting {
				return errMalformed
			}
			s.pos++
			closer := c + 2 // '}' or ']'
			if s.peek() == closer {
				s.pos++
				break // an empty container
			}
			stack = append(stack, closer)
			if c == '{' {
				if _, err := s.key(); err != nil {
					return err
				}
			}
			continue // the first member's value
		case 't', 'f', 'n':
			if _, err := s.literal(); err != nil {
				return err
			}
		case 0:
			return s.fail()
		default:
			if _, err := s.number(); err != nil {
				return err
			}
		}
		// After a complete value: close containers, or go on to the next
		// member.
		for {
			if len(stack) == 0 {
				return nil
			}
			c, top := s.peek(), stack[len(stack)-1]
			if c == top {
				s.pos++
				stack = stack[:len(stack)-1]
				continue
			}
			if c != ',' {
				return s.fail()
			}
			s.pos++
			if top == '}' {
				if _, err := s.key(); err != nil {
					return err
				}
			}
			break
		}
	}
}

// key reads an object member's key and the colon after it.
func (s *scanner) key() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.fail()
	}
	k, err := s.str()
	if err != nil {
		return nil, err
	}
	return k, s.expect(':')
}
