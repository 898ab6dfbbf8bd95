package enforce

// A scanner reads the words of a User-Agent header one at a time, by the
// grammar that Tokens describes. Its whole state is where it stands and how
// deep in comments, so that a reading can stop at a word and another resume
// there later: Tokens keeps the candidates of a header's first words and
// the place of the first word it did not keep, and the group choice and the
// classifier read the rest from there, so that every word within
// MaxUserAgentLength counts, however many there are.
type scanner struct {
	s     string // the part of the header read: at most MaxUserAgentLength octets
	cut   bool   // the limit cut the last word of s, which is then not read
	i     int    // where the next word is looked for
	depth int    // comment nesting at i

	// The word next read last, as offsets into s: it starts at start, its
	// leading [A-Za-z_-] run ends at runEnd (start when it has none), its
	// product name at nameEnd (its first "/", or its end), and it ends at
	// end.
	start, runEnd, nameEnd, end int
}

// newScanner returns a scanner at the start of the header ua.
func newScanner(ua string) scanner {
	if len(ua) <= MaxUserAgentLength {
		return scanner{s: ua}
	}
	// A word that the limit cuts in two is dropped, since its start could
	// name a different token than the whole.
	return scanner{s: ua[:MaxUserAgentLength], cut: byteClass[ua[MaxUserAgentLength]]&classDelim == 0}
}

// next reads the next word that is not a URL or an e-mail address, and
// reports whether there was one. It runs in time linear in the octets it
// passes.
func (sc *scanner) next() bool {
	s, i, depth := sc.s, sc.i, sc.depth
	for i < len(s) {
		c := s[i]
		if byteClass[c]&classDelim != 0 {
			switch c {
			case '(':
				depth++
			case ')':
				if depth > 0 {
					depth--
				}
			}
			i++
			continue
		}
		start := i
		for i < len(s) && byteClass[s[i]]&classToken != 0 {
			i++
		}
		runEnd, nameEnd := i, -1
		skip := false // a URL or an e-mail address
		for i < len(s) {
			c := s[i]
			k := byteClass[c]
			if k&(classDelim|classSpecial) == 0 {
				i++
				continue
			}
			if k&classDelim != 0 {
				if c == '+' && skip {
					i++ // a URL or an address may hold "+"
					continue
				}
				break
			}
			switch c {
			case '/':
				if nameEnd < 0 {
					nameEnd = i
				}
			case '@':
				skip = true
			case ':':
				skip = skip || i+2 < len(s) && s[i+1] == '/' && s[i+2] == '/'
			case '\\':
				if depth > 0 {
					i++ // a quoted-pair: the next octet is literal, even a delimiter
				}
			}
			i++
		}
		if i > len(s) {
			i = len(s) // a backslash was the last octet
		}
		if sc.cut && i == len(s) {
			break // the limit cut this word
		}
		if nameEnd < 0 {
			nameEnd = i
		}
		if skip || runEnd-start == 3 && isWWW(s[start:runEnd], s[runEnd:]) {
			continue
		}
		sc.start, sc.runEnd, sc.nameEnd, sc.end = start, runEnd, nameEnd, i
		sc.i, sc.depth = i, depth
		return true
	}
	sc.i, sc.depth = len(s), depth
	return false
}

// isWWW reports whether a word whose token run is run, followed by rest, is
// a host name starting "www.".
func isWWW(run, rest string) bool {
	return len(run) == 3 && run[0]|0x20 == 'w' && run[1]|0x20 == 'w' && run[2]|0x20 == 'w' &&
		len(rest) > 0 && rest[0] == '.'
}

// Byte classes for the scanner.
const (
	classToken   = 1 << iota // [A-Za-z_-]: part of a product token
	classDelim               // ends a word: white space, controls, ( ) ; , [ ] +
	classSpecial             // means something inside a word: / @ : \
)

var byteClass = func() (c [256]uint8) {
	for b := range 256 {
		switch {
		case isTokenChar(byte(b)):
			c[b] = classToken
		case b <= ' ' || b == 0x7f || b == '(' || b == ')' || b == ';' || b == ',' || b == '[' || b == ']' || b == '+':
			c[b] = classDelim
		case b == '/' || b == '@' || b == ':' || b == '\\':
			c[b] = classSpecial
		}
	}
	return c
}()
