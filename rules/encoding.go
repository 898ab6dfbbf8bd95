package rules

// Percent-encoding normalisation (RFC 9309 §2.2.2).
//
// Both a rule's path pattern and the request target are brought into one
// canonical form before they are compared:
//
//   - a percent-encoded unreserved character (RFC 3986 §2.3: ALPHA, DIGIT,
//     "-", ".", "_", "~") is decoded: "/%61bc" reads as "/abc";
//   - any other percent-encoding keeps its encoding, with upper-case hex
//     digits: "%2f" reads as "%2F", and "%2F" never equals "/";
//   - an octet outside US-ASCII is percent-encoded: "/café" reads as
//     "/caf%C3%A9";
//   - everything else is kept as written.
//
// For matching, "%2A" and "%24" are further read as a literal "*" and "$"
// (RFC 9309 §2.2.3, Table 6): in a pattern this is how a webmaster writes
// those characters without their special meaning, and in a target both the
// encoded and the bare spelling then compare equal.
//
// Deviation from the RFC text: the RFC also asks that octets "in the reserved
// range" be percent-encoded, and its example encodes "https://foo.bar" inside
// a query. Encoding "/", "?" or "=" would make ordinary paths stop matching
// ordinary rules, so, like Google's parser, reserved characters are compared
// as they are written.

import (
	"encoding/binary"
	"strings"
)

const upperHex = "0123456789ABCDEF"

// unhex returns the value of the hex digit c, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// isUnreserved reports whether c is an RFC 3986 unreserved character.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// escapeAt reports whether s[i:] starts with a percent-encoded octet and
// returns that octet.
func escapeAt(s string, i int) (byte, bool) {
	if i+2 >= len(s) || s[i] != '%' {
		return 0, false
	}
	hi, lo := unhex(s[i+1]), unhex(s[i+2])
	if hi < 0 || lo < 0 {
		return 0, false
	}
	return byte(hi<<4 | lo), true
}

// isCanonical reports whether s is already in canonical (and, with special,
// matching) form, so that the common case needs no copy.
func isCanonical(s string, special bool) bool {
	if !isASCII(s) {
		return false
	}
	for i := strings.IndexByte(s, '%'); i >= 0; {
		if b, ok := escapeAt(s, i); ok && (isUnreserved(b) || special && (b == '*' || b == '$') ||
			s[i+1] != upperHex[b>>4] || s[i+2] != upperHex[b&0xf]) {
			return false
		}
		next := strings.IndexByte(s[i+1:], '%')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return true
}

// isASCII reports whether s has no octet above 0x7F, eight octets at a time:
// targets can be long, and this runs on every decision.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if binary.LittleEndian.Uint64([]byte(s[i:i+8]))&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// appendCanonical appends s to dst in canonical form. With special set,
// "%2A" and "%24" are decoded to "*" and "$" as well (matching form).
// Runs of octets that need no change are copied whole: most of a path.
func appendCanonical(dst []byte, s string, special bool) []byte {
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '%' && s[i] < 0x80 {
			i++
		}
		dst = append(dst, s[:i]...)
		if i == len(s) {
			break
		}
		c := s[i]
		switch b, ok := escapeAt(s, i); {
		case c >= 0x80:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&0xf])
			i++
		case !ok:
			dst = append(dst, c)
			i++
		case isUnreserved(b) || special && (b == '*' || b == '$'):
			dst = append(dst, b)
			i += 3
		default:
			dst = append(dst, '%', upperHex[b>>4], upperHex[b&0xf])
			i += 3
		}
		s = s[i:]
	}
	return dst
}

// canonical returns s in canonical form, without copying when it already is.
func canonical(s string, special bool) string {
	if isCanonical(s, special) {
		return s
	}
	return string(appendCanonical(make([]byte, 0, len(s)+8), s, special))
}

// canonicalLen returns len(canonical(s, special)), without writing it.
func canonicalLen(s string, special bool) int {
	if isCanonical(s, special) {
		return len(s)
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch b, ok := escapeAt(s, i); {
		case c >= 0x80:
			n += 3
			i++
		case !ok:
			n++
			i++
		case isUnreserved(b) || special && (b == '*' || b == '$'):
			n++
			i += 3
		default:
			n += 3
			i += 3
		}
	}
	return n
}
