package audit

import (
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// What one robots.txt version says of a request: the audit's reading of
// a version's text, for the merged re-judgement (rejudge.go) and for the
// evidence's rule lines. The handler judged the request when it wrote the
// record; the audit reads a version again only for the versions the
// handler did not judge it against (those served on another instance),
// and to quote, for each version, the line that decides.
//
// It reads the text with package rules, as the handler does, for the
// record's product token: the group naming it, else the "*" group. What
// the audit cannot know of the handler's judgement it does not guess:
//
//   - whether the "*" group binds the client (the handler's wildcard
//     policy): known when the record's own decision came from it (reason
//     wildcard_group); otherwise a denial by the "*" group is unknown;
//   - Google's reading of the request (see package enforce): it agrees
//     with RFC 9309's unless the target or a pattern of the group holds a
//     percent-encoding or an octet outside US-ASCII; there it is unknown.
//
// An unknown reading is given the benefit of the doubt: it counts as
// allowing, as the handler counts a version it no longer knows.

// knowledge is what is known of one reading of one version.
type knowledge uint8

const (
	knowUnknown knowledge = iota
	knowAllows
	knowDenies
)

// allows reports whether the reading allows, or may.
func (k knowledge) allows() bool { return k != knowDenies }

// String names the knowledge as reports do.
func (k knowledge) String() string {
	switch k {
	case knowAllows:
		return "allow"
	case knowDenies:
		return "deny"
	}
	return "unknown"
}

// textJudgement is what a version's text says of a request.
type textJudgement struct {
	rfc, google knowledge
	verdict     rules.Verdict
	// wildcard tells that the "*" group applied; none that no group did.
	wildcard, none bool
}

// judgeText reads a request by agent for target under the version vt;
// bound tells that the "*" group is known to bind the client.
func judgeText(vt *VersionText, agent, target string, bound bool) textJudgement {
	var g *rules.Group
	if agent != "" {
		g = vt.Robots.Group(agent)
	}
	j := textJudgement{}
	if g == nil {
		g, j.wildcard = vt.Robots.Wildcard(), true
	}
	if g == nil {
		j.none, j.rfc, j.google = true, knowAllows, knowAllows
		return j
	}
	j.verdict = g.Decide(target)
	switch {
	case j.verdict.Allowed:
		j.rfc = knowAllows
	case j.wildcard && !bound:
		j.rfc = knowUnknown
	default:
		j.rfc = knowDenies
	}
	j.google = j.rfc
	if j.rfc == knowDenies && !(plainText(target) && plainGroup(g)) {
		j.google = knowUnknown
	}
	return j
}

// plainText reports whether s holds no percent-encoding and no octet
// outside US-ASCII: where both readings compare alike.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// plainGroup reports whether every pattern of g is plain text.
func plainGroup(g *rules.Group) bool {
	for _, r := range g.Rules() {
		if !plainText(r.Pattern) {
			return false
		}
	}
	return true
}

// bindsWildcard reports whether a record's decision shows that the "*"
// group binds its client.
func bindsWildcard(reason []byte) bool {
	return strings.EqualFold(string(reason), "wildcard_group")
}
