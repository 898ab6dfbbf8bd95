package agent

import "strings"

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
	// comments counts the comments opened at depth 0 so far; links and
	// firstLinks the URLs and e-mail addresses passed over, outside and
	// inside the first comment.
	comments, links, firstLinks int

	// The word next read last, as offsets into s: it starts at start, its
	// leading [A-Za-z_-] run ends at runEnd (start when it has none), its
	// product name at nameEnd (its first "/", or its end), and it ends at
	// end. from and fromDepth are the scanner's i and depth before it was
	// read: a scanner set to them reads it again.
	start, runEnd, nameEnd, end int
	from, fromDepth             int

	// The piece nextPiece read last: a product name or a version, as
	// offsets into s. Its candidate is s[pstart:prun] (empty when it starts
	// with no letter), and the name or version itself s[pstart:pend].
	pstart, prun, pend int
	// version says the piece is a version; seg is where the next version
	// of the word is looked for.
	version bool
	seg     int
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
	sc.from, sc.fromDepth = i, depth
	for i < len(s) {
		c := s[i]
		if byteClass[c]&classDelim != 0 {
			switch c {
			case '(':
				if depth == 0 {
					sc.comments++
				}
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
		runEnd, nameEnd, at := i, -1, -1
		skip := false // a URL
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
				if at < 0 {
					at = i
				}
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
		// An e-mail address has a domain name after its "@", a letter
		// then a dot: not "android@119" or "th-TH@calendar=gregorian".
		if at >= 0 && at+1 < i && isLetter(s[at+1]) && strings.IndexByte(s[at+1:i], '.') >= 0 {
			skip = true
		}
		if skip || runEnd-start == 3 && isWWW(s[start:runEnd], s[runEnd:]) {
			if depth > 0 && sc.comments == 1 {
				sc.firstLinks++
			} else {
				sc.links++
			}
			continue
		}
		sc.start, sc.runEnd, sc.nameEnd, sc.end = start, runEnd, nameEnd, i
		sc.i, sc.depth = i, depth
		return true
	}
	sc.i, sc.depth = len(s), depth
	return false
}

// nextPiece reads the next piece of the header that may yield a candidate:
// a word's product name, then each of its versions, the parts after a "/"
// (RFC 9110 §10.1.5: product = token ["/" product-version]), so that
// "Ask Jeeves/Teoma" yields "Teoma" and "Node/simplecrawler" yields
// "simplecrawler". Versions that start with a digit are version numbers
// and are passed over, and a word whose name holds a "." reads as a host
// and a path ("help.yahoo.com/help/us") and yields no versions. It reports
// whether there was a piece.
func (sc *scanner) nextPiece() bool {
	s := sc.s
	for sc.seg < sc.end {
		// sc.seg is at a "/": the next version runs to the next one.
		start := sc.seg + 1
		end := start
		for end < sc.end && s[end] != '/' {
			end++
		}
		sc.seg = end
		if start == end || !isLetter(s[start]) && s[start] != '_' && s[start] != '-' {
			continue // a version number, which names nothing
		}
		run := start
		for run < end && byteClass[s[run]]&classToken != 0 {
			run++
		}
		sc.pstart, sc.prun, sc.pend, sc.version = start, run, end, true
		return true
	}
	if !sc.next() {
		return false
	}
	sc.pstart, sc.prun, sc.pend, sc.version = sc.start, sc.runEnd, sc.nameEnd, false
	sc.seg = sc.nameEnd
	if sc.seg < sc.end && strings.IndexByte(s[sc.start:sc.nameEnd], '.') >= 0 {
		sc.seg = sc.end // a host, not a product
	}
	return true
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
