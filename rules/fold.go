package rules

// ASCII case folding. Product tokens are ASCII letters, "-" and "_" (RFC
// 9309 §2.2.1), and keys are ASCII words (RFC 9309 §2.2), so both compare
// case-insensitively by ASCII rules alone. Unicode folding would let a
// non-ASCII spelling name an ASCII token: strings.ToLower turns U+212A
// KELVIN SIGN into "k" and strings.EqualFold matches U+017F LONG S with
// "s", so "\u212Abot" would name the group of "kbot".

// lowerASCII returns the ASCII lower-case of c.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasUpperASCII reports whether s holds an ASCII upper-case letter.
func hasUpperASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// appendLowerASCII appends s to dst with ASCII letters in lower case and
// every other octet as it is.
func appendLowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, lowerASCII(s[i]))
	}
	return dst
}

// toLowerASCII returns s with ASCII letters in lower case, without a copy
// when there is none in upper case.
func toLowerASCII(s string) string {
	if !hasUpperASCII(s) {
		return s
	}
	return string(appendLowerASCII(make([]byte, 0, len(s)), s))
}

// equalFoldASCII reports whether s and t are equal, ignoring the case of
// ASCII letters only.
func equalFoldASCII(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(s[i]) != lowerASCII(t[i]) {
			return false
		}
	}
	return true
}
