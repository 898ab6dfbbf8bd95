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
type googleGroup []googleRule

type googleRule struct {
	segs     []string // literal segments between "*", in Google's form
	anchored bool     // a final "$"
	priority int      // octet length of the escaped pattern, "*" and "$" included
	allow    bool
}

// newGoogleGroup returns g's rules in Google's form, or nil when no
// pattern of g holds a "%": then each pattern's Google form is its
// canonical form, which g matches already.
func newGoogleGroup(g *rules.Group) googleGroup {
	rs := g.Rules()
	escaped := false
	for _, r := range rs {
		escaped = escaped || strings.IndexByte(r.Pattern, '%') >= 0
	}
	if !escaped {
		return nil
	}
	out := make(googleGroup, 0, len(rs))
	for _, r := range rs {
		p := googleEscape(r.Pattern)
		gr := googleRule{priority: len(p), allow: r.Allow}
		if strings.HasSuffix(p, "$") {
			gr.anchored, p = true, p[:len(p)-1]
		}
		for i, part := range strings.Split(p, "*") {
			if i == 0 || part != "" {
				gr.segs = append(gr.segs, part)
			}
		}
		if strings.HasSuffix(p, "*") {
			gr.anchored = false
		}
		out = append(out, gr)
	}
	return out
}

// googleEscape returns a pattern as Google's parser stores it: octets
// outside US-ASCII percent-encoded, the hex digits of existing escapes
// upper-cased, everything else as written.
func googleEscape(p string) string {
	const hex = "0123456789ABCDEF"
	n := len(p)
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			n += 2
		}
	}
	var b strings.Builder
	b.Grow(n) // held for as long as the index: no room to spare
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
func (gg googleGroup) allows(path string) bool {
	best, allowed := -1, true
	for i := range gg {
		r := &gg[i]
		if r.priority < best || r.priority == best && !r.allow || !r.match(path) {
			continue
		}
		best, allowed = r.priority, r.allow
	}
	return allowed
}

// match places each segment at its leftmost place after the previous one,
// which is enough with "*" as the only operator (see rules.Pattern).
func (r *googleRule) match(path string) bool {
	if !strings.HasPrefix(path, r.segs[0]) {
		return false
	}
	pos := len(r.segs[0])
	last := len(r.segs) - 1
	for i := 1; i <= last; i++ {
		if i == last && r.anchored {
			return len(path)-pos >= len(r.segs[i]) && strings.HasSuffix(path, r.segs[i])
		}
		j := strings.Index(path[pos:], r.segs[i])
		if j < 0 {
			return false
		}
		pos += j + len(r.segs[i])
	}
	return !r.anchored || pos == len(path)
}

// googleAllows reports whether Google's reading of g allows target, the
// request target as sent. The google form of g is looked up in idx, built
// with the snapshot, or made here for a snapshot without one.
func googleAllows(idx *GroupIndex, g *rules.Group, target string) bool {
	var gg googleGroup
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
