package rules

import "fmt"

// A Verdict says whether a target may be fetched, and why.
type Verdict struct {
	Allowed bool
	Reason  Reason
	// Rule is the deciding rule when Reason is ReasonRule; otherwise its
	// Line is 0.
	Rule Rule
	// GroupLine is the line of the first user-agent line of the group the
	// deciding rule came from; when no rule matched, of the first group
	// that applied. 0 when no group applied.
	GroupLine int
	// Group tells whether a named group or the "*" group applied.
	Group GroupKind
	// Usage is the usage preference the group's Content-Usage rules attach
	// to the target (draft-ietf-aipref-attach-05 §3), filled by Decide
	// when the target is allowed: no preference applies to what may not be
	// fetched. Group.DecideCanonical leaves it empty (see
	// Group.UsageCanonical).
	Usage Usage
}

// Reason tells what decided a Verdict.
type Reason uint8

const (
	// ReasonRule: a rule matched; Verdict.Rule is the most specific one.
	ReasonRule Reason = iota
	// ReasonNoRule: a group applied, but none of its rules matched, so the
	// target is allowed (RFC 9309 §2.2.2).
	ReasonNoRule
	// ReasonNoGroup: no group names the agent and there is no "*" group,
	// so the target is allowed.
	ReasonNoGroup
	// ReasonRobotsTxt: the target is /robots.txt, which is always allowed
	// (RFC 9309 §2.2.2).
	ReasonRobotsTxt
)

var reasonNames = [...]string{
	ReasonRule:      "rule",
	ReasonNoRule:    "no_matching_rule",
	ReasonNoGroup:   "no_group",
	ReasonRobotsTxt: "robots_txt",
}

// String returns the reason's stable name: "rule", "no_matching_rule",
// "no_group" or "robots_txt".
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// GroupKind tells which kind of group applied.
type GroupKind uint8

const (
	// NoGroup: no group applied.
	NoGroup GroupKind = iota
	// NamedGroup: a group naming the agent's product token.
	NamedGroup
	// WildcardGroup: the "*" group.
	WildcardGroup
)

// String returns "none", "named" or "wildcard".
func (k GroupKind) String() string {
	switch k {
	case NoGroup:
		return "none"
	case NamedGroup:
		return "named"
	case WildcardGroup:
		return "wildcard"
	}
	return fmt.Sprintf("group_kind(%d)", uint8(k))
}

// robotsTxtVerdict is the answer for /robots.txt itself.
var robotsTxtVerdict = Verdict{Allowed: true, Reason: ReasonRobotsTxt}
