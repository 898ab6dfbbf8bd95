// Package words writes the figures and record-derived text of an audit for
// people to read: counts with thousands separators, plurals, and text
// from a log made safe to print. The audit's notes and its rendered
// reports use it, so that both say a thing the same way.
package words

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// None is shown for an empty value.
const None = "(none)"

// Clean makes record-derived text safe to print on a terminal: control
// characters and invalid UTF-8 are shown as Go escapes, so that a request
// target cannot move the cursor or change colours; "" becomes None.
func Clean(s string) string {
	if s == "" {
		return None
	}
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// Commas writes n with thousands separators.
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Plural writes a count and a noun, with an s unless the count is 1.
func Plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return Commas(n) + " " + noun + "s"
}

// InputName names an input in text: "standard input" for "-".
func InputName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return Clean(name)
}

// PluralVerb writes a count with the singular or plural phrase after it:
// "1 row shows", "2 rows show".
func PluralVerb(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Commas(n) + " " + many
}
