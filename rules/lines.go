package rules

import "strings"

// MaxLineLength is the number of octets of a line that are read; the rest of
// a longer line is dropped. Google's parser keeps 2083×8−1 octets (eight
// times the longest URL some browsers accept, less its terminating NUL), and
// an enforcer must read a file the way the largest crawler reads it
// (Google-compatible; RFC 9309 sets no line limit).
const MaxLineLength = 2083*8 - 1

// utf8BOM is the UTF-8 byte order mark. A leading BOM, or any prefix of
// one, is skipped (Google-compatible; RFC 9309 §2.2 says the file is UTF-8).
const utf8BOM = "\xEF\xBB\xBF"

// forEachLine calls fn for each line of body, numbered from 1, with
// whether it was longer than MaxLineLength and cut there. CR, LF and CRLF
// each end a line (RFC 9309 §2.2 names CR, LF and CRLF as EOL). The last
// line is passed even when it is empty or has no line ending, as Google's
// parser does, so line numbers agree with it. It returns the number of BOM
// octets skipped.
func forEachLine(body string, fn func(num int, text string, cut bool)) (bom int) {
	for bom < len(utf8BOM) && bom < len(body) && body[bom] == utf8BOM[bom] {
		bom++
	}
	body = body[bom:]
	// The next LF, found once for all the lines before it: searching
	// for CR or LF at each line, with strings.IndexAny, reads the file an
	// octet at a time, where strings.IndexByte reads words.
	lf := strings.IndexByte(body, '\n')
	for num := 1; ; num++ {
		end := lf
		if end < 0 {
			end = len(body)
		}
		if cr := strings.IndexByte(body[:end], '\r'); cr >= 0 {
			end = cr
		}
		text := body[:end]
		if len(text) > MaxLineLength {
			fn(num, text[:MaxLineLength], true)
		} else {
			fn(num, text, false)
		}
		if end == len(body) {
			return bom
		}
		if body[end] == '\r' && end+1 < len(body) && body[end+1] == '\n' {
			end++
		}
		body = body[end+1:]
		if lf >= 0 { // else there is no LF left
			if lf -= end + 1; lf < 0 {
				lf = strings.IndexByte(body, '\n')
			}
		}
	}
}

// isSpace reports whether c is ASCII white space, as robots.txt parsers
// trim it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// splitRecord splits a line into a key and a value (RFC 9309 §2.2:
// key ":" value, a "#" starting a comment). It returns ok=false for a line
// that holds no record. Like Google's parser, when there is no colon a single
// run of white space between exactly two words takes its place; noColon
// reports that (Google-compatible).
func splitRecord(text string) (k, v string, noColon, ok bool) {
	if i := strings.IndexByte(text, '#'); i >= 0 {
		text = text[:i]
	}
	text = trimSpace(text)
	sep := strings.IndexByte(text, ':')
	if sep < 0 {
		sep = strings.IndexAny(text, " \t")
		if sep < 0 || strings.ContainsAny(trimSpace(text[sep:]), " \t") {
			return "", "", false, false
		}
		noColon = true
	}
	k = trimSpace(text[:sep])
	if k == "" {
		return "", "", false, false
	}
	return k, trimSpace(text[sep+1:]), noColon, true
}
