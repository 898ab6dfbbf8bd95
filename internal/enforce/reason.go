package enforce

// Reason tells what decided a Decision.
type Reason uint8

const (
	// ReasonNamedGroup: a group naming the client's product token decided.
	ReasonNamedGroup Reason = iota
	// ReasonWildcardGroup: the "*" group decided, the client being bound by
	// it under the WildcardPolicy.
	ReasonWildcardGroup
	// ReasonNoGroup: no group names the client and there is no "*" group.
	ReasonNoGroup
	// ReasonNotAutomated: no group names the client, and the "*" group (or
	// an unreachable robots.txt) does not bind it under the WildcardPolicy.
	ReasonNotAutomated
	// ReasonRobotsTxt: the target is /robots.txt, always allowed (RFC 9309
	// §2.2.2).
	ReasonRobotsTxt
	// ReasonUnreachable: robots.txt could not be fetched and no copy is
	// known: complete disallow for crawlers (RFC 9309 §2.3.1.4).
	ReasonUnreachable
	// ReasonUnavailable: robots.txt does not exist (4xx) or its policy says
	// allow: no rules apply (RFC 9309 §2.3.1.3).
	ReasonUnavailable
	// ReasonAllowListed: the client names a token of Policy.AllowAgents.
	ReasonAllowListed
	// ReasonNoPath: the target has no path a rule could apply to ("*",
	// authority-form).
	ReasonNoPath
	// ReasonUnreadableTarget: the target could not be read as the server
	// reads it (Request.Unreadable): disallowed for clients the rules bind.
	ReasonUnreadableTarget
	// ReasonInvalidHost: the request names no host whose robots.txt could
	// be known (RefusalInvalidHost): disallowed for clients the rules bind.
	ReasonInvalidHost
	// ReasonHostBudget: the host is new and the budget of first fetches is
	// spent (RefusalHostBudget): disallowed for clients the rules bind
	// until its robots.txt is fetched.
	ReasonHostBudget
	// ReasonForged: the client claimed a product token it failed to prove,
	// and the caller refuses such clients outright. Decide never gives it.
	ReasonForged
	// ReasonEscalated: the crawler was recorded with a violation, and the
	// operator blocks such crawlers for a while (EscalateBlock): a request
	// its group allows is denied all the same. Decide never gives it.
	ReasonEscalated

	// NumReasons is the number of reasons: they run from 0 to NumReasons-1.
	NumReasons = int(ReasonEscalated) + 1
)

var decisionReasonNames = [...]string{
	ReasonNamedGroup:       "named_group",
	ReasonWildcardGroup:    "wildcard_group",
	ReasonNoGroup:          "no_group",
	ReasonNotAutomated:     "not_automated",
	ReasonRobotsTxt:        "robots_txt",
	ReasonUnreachable:      "unreachable",
	ReasonUnavailable:      "unavailable",
	ReasonAllowListed:      "allow_listed",
	ReasonNoPath:           "no_path",
	ReasonUnreadableTarget: "unreadable_target",
	ReasonInvalidHost:      "invalid_host",
	ReasonHostBudget:       "host_budget",
	ReasonForged:           "forged",
	ReasonEscalated:        "escalated",
}

// String returns the reason's stable name, as used in compliance records.
func (r Reason) String() string {
	if int(r) < len(decisionReasonNames) {
		return decisionReasonNames[r]
	}
	return "reason(?)"
}
