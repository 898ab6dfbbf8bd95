package robotstxt

import (
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Google's reference reading of a request, for evidence.
//
// This profile reads percent-encoding as RFC 9309 §2.2.2 asks: a path's
// and a pattern's encoded unreserved octets are decoded, and hex digits
// compare case-insensitively, so "/%7Estaff/x" falls under "Disallow:
// /~staff/". Google's robots.cc, and the crawlers built on it, compare the
// path as the crawler sent it with patterns whose own hex digits are
// upper-cased and whose octets outside US-ASCII are escaped: "/%7Estaff/x"
// is not under "/~staff/", nor "/caf%c3%a9/x" under "/caf%C3%A9/". Both
// readings conform (the RFC leaves a crawler its URL's spelling), and a
// crawler that obeys Google's may fetch what this profile disallows. So
// a denial is evidence of a violation only when both readings disallow
// the request as sent (see package enforce); where they differ it is
// protective. Everything else about matching ("*", a final "$", the
// longest match, allow winning a tie) is the same in both.

// googleGroup is a group's rules in Google's form, for the groups whose
// patterns hold an escape, where the two readings can differ on any path.
// The patterns are written one after another into one string, and each
// rule locates its own: a rule costs its pattern and 16 octets, where a
// string and a slice of segments for each cost three times as much (the
// 500 KiB synthetic file's index held 1.4 MB, more than its parsed file;
// it holds 0.6 MB).
type googleGroup struct {
	text  string // the patterns, in Google's form, without a final "$"
	rules []googleRule
}

type googleRule struct {
	off, n   uint32 // the pattern in text
	priority uint32 // octet length of the escaped pattern, "*" and "$" included
	// first is the length of the pattern's first segment, which a path
	// starts with or the rule does not match: most rules fail there.
	// Checked first, it keeps the compact form within an eighth of the
	// speed of a slice of segments (BenchmarkGoogleAllows, on the
	// synthetic file's 10,749 rules: 305 against 271 µs for four paths;
	// three times slower without it). A pattern is at most three times
	// MaxLineLength octets.
	first    uint16
	anchored bool // a final "$" after anything but "*"
	allow    bool
}

// newGoogleGroup returns g's rules in Google's form, or nil when no
// pattern of g holds a "%": then each pattern's Google form is its
// canonical form, which g matches already.
func newGoogleGroup(g *rules.Group) *googleGroup {
	rs := g.Rules()
	escaped := false
	for _, r := range rs {
		escaped = escaped || strings.IndexByte(r.Pattern, '%') >= 0
	}
	if !escaped {
		return nil
	}
	size := 0
	for _, r := range rs {
		size += googleEscapedLen(r.Pattern)
	}
	var text strings.Builder
	text.Grow(size) // held for as long as the index: no room to spare
	gg := &googleGroup{rules: make([]googleRule, 0, len(rs))}
	for _, r := range rs {
		p := googleEscape(r.Pattern)
		gr := googleRule{priority: uint32(len(p)), allow: r.Allow}
		if strings.HasSuffix(p, "$") {
			gr.anchored, p = true, p[:len(p)-1]
		}
		if strings.HasSuffix(p, "*") {
			gr.anchored = false
		}
		gr.off, gr.n = uint32(text.Len()), uint32(len(p))
		if star := strings.IndexByte(p, '*'); star >= 0 {
			gr.first = uint16(star)
		} else {
			gr.first = uint16(len(p))
		}
		text.WriteString(p)
		gg.rules = append(gg.rules, gr)
	}
	gg.text = text.String()
	return gg
}

// googleEscapedLen returns the length of googleEscape(p).
func googleEscapedLen(p string) int {
	n := len(p)
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			n += 2
		}
	}
	return n
}

// googleEscape returns a pattern as Google's parser stores it: octets
// outside US-ASCII percent-encoded, the hex digits of existing escapes
// upper-cased, everything else as written.
func googleEscape(p string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(googleEscapedLen(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 0x80:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			b.WriteByte('%')
			b.WriteByte(upperASCII(p[i+1]))
			b.WriteByte(upperASCII(p[i+2]))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// allows reports whether Google's reading allows path: the longest
// matching pattern decides, allow winning a tie; no match allows.
func (gg *googleGroup) allows(path string) bool {
	best, allowed := -1, true
	for i := range gg.rules {
		r := &gg.rules[i]
		if int(r.priority) < best || int(r.priority) == best && !r.allow || !r.match(gg.text, path) {
			continue
		}
		best, allowed = int(r.priority), r.allow
	}
	return allowed
}

// match places each segment between "*" at its leftmost place after the
// previous one, which is enough with "*" as the only operator (see
// rules.Pattern); an anchored pattern's last segment ends the path.
func (r *googleRule) match(text, path string) bool {
	p := text[r.off : r.off+r.n]
	if !strings.HasPrefix(path, p[:r.first]) {
		return false
	}
	pos, star := int(r.first), int(r.first) < len(p)
	var rest string
	if star {
		rest = p[r.first+1:]
	}
	for star {
		var seg string
		seg, rest, star = strings.Cut(rest, "*")
		switch {
		case seg == "":
		case !star && r.anchored: // the last segment: where it is, the path ends
			return len(path)-pos >= len(seg) && strings.HasSuffix(path, seg)
		default:
			j := strings.Index(path[pos:], seg)
			if j < 0 {
				return false
			}
			pos += j + len(seg)
		}
	}
	return !r.anchored || pos == len(path)
}

// googleAllows reports whether Google's reading of g allows target, the
// request target as sent. The google form of g is looked up in idx, built
// with the snapshot, or made here for a snapshot without one.
func googleAllows(idx *GroupIndex, g *rules.Group, target string) bool {
	var gg *googleGroup
	if idx != nil {
		gg = idx.google[g]
	} else {
		gg = newGoogleGroup(g)
	}
	if gg == nil {
		// Patterns compare in canonical form either way; only the path's
		// spelling can differ, and it is matched as sent.
		return g.DecideCanonical(target).Allowed
	}
	return gg.allows(target)
}
