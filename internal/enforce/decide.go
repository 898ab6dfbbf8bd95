package enforce

import (
	"strings"
	"sync/atomic"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Policy holds what an operator decides beyond robots.txt.
type Policy struct {
	// Wildcard says whom the "*" group binds; named groups always bind the
	// agents they name.
	Wildcard agent.WildcardPolicy
	// AllowAgents are product tokens never enforced (an operator's own
	// monitor, say), compared case-insensitively with the header's
	// candidate tokens.
	AllowAgents []string
	// CaseInsensitive says the origin reads paths without regard to case
	// (IIS, a file system that folds case): a path is also judged folded
	// (the Folded reading), so that no spelling of a disallowed path
	// escapes. RFC 9309 §2.2.2 matches case-sensitively, and so does
	// everything else here.
	CaseInsensitive bool
}

// A Decision says whether a request may pass, and why. It shares memory
// with the Readings it was made with (Path): copy what outlives them.
type Decision struct {
	Allowed bool
	Reason  Reason
	// Token is the product token the decision is about: the one that named
	// the deciding group, or, for the "*" group, the token that marked the
	// client as automated (or its first product name); "" when none.
	Token string
	// Named reports that a group naming the client's product token bound
	// it (Token names it).
	Named bool
	// Undeclared reports that the client's header named no crawler a group
	// names, and its address proved one (see decideUndeclared).
	Undeclared bool
	// Bound reports that robots.txt binds the client: a group names it,
	// or the WildcardPolicy holds it to the "*" group (and to complete
	// disallow when no robots.txt can be had). Decisions about clients
	// that are not bound are allowed whatever the file says.
	Bound bool
	// Classification says whether, and why, the client counts as automated.
	Classification agent.Classification
	// Verdict is the robots.txt verdict behind a named or "*" group
	// decision: the deciding rule, its line and its group's line.
	Verdict rules.Verdict
	// Group is the group whose verdict decided, or nil.
	Group *rules.Group
	// Reading is the reading of the target the verdict was made on (the one
	// that denied, when one did).
	Reading Reading
	// Path is the target as read (AsSent): path and query, normalised.
	Path string
	// Snapshot is the robots.txt version the decision was made against.
	Snapshot *robotstxt.Snapshot
}

// A Decider makes decisions. It is safe for concurrent use.
type Decider struct {
	policy     Policy
	classifier *agent.Classifier
	// headers holds each recent header's tokens and classification: a
	// crawler or a browser sends the same header request after request,
	// and looking it up costs a fraction of reading it again.
	headers agent.HeaderCache[readHeader]
}

// readHeader is what a Decider learns from one User-Agent header. Its
// strings are substrings of the cache's copy of the header.
type readHeader struct {
	tokens agent.Tokens
	class  agent.Classification
	// names are the product tokens the client is known by (see
	// clientNames), keys the same lower-case; agent names a client with
	// none, by a digest of its header (see agentDigest).
	names, keys []string
	agent       string
	// chosen is the header's last choice of groups (see chooseFor); nil
	// for a header read uncached.
	chosen *atomic.Pointer[robotstxt.Choice]
}

// MaxCachedHeaderLength is the length of the longest User-Agent header whose
// reading a Decider caches. Real headers fit (see MaxUserAgentLength); the
// cache copies each whole, which keeps its memory to ClassifierCacheSize
// times this at most.
const MaxCachedHeaderLength = 512

// NewDecider returns a Decider for a policy, classifying clients with c
// (nil means a new Classifier with the default cache size).
func NewDecider(p Policy, c *agent.Classifier) *Decider {
	if c == nil {
		c = agent.NewClassifier(agent.ClassifierCacheSize)
	}
	return &Decider{
		policy:     p,
		classifier: c,
		headers:    agent.NewHeaderCache[readHeader](agent.ClassifierCacheSize, MaxCachedHeaderLength),
	}
}

// readHeader returns the tokens and classification of a User-Agent header.
// The result must not be modified. A header too long to cache is read anew
// each time, into a value of its own: that costs those rare headers an
// allocation, and every other decision nothing.
func (d *Decider) readHeader(ua string) *readHeader {
	if len(ua) > MaxCachedHeaderLength {
		return d.readUncached(ua)
	}
	return d.headers.Get(ua, func(key string) readHeader {
		h := readHeader{tokens: agent.Tokenize(key), chosen: new(atomic.Pointer[robotstxt.Choice])}
		h.class = d.classifier.Classify(&h.tokens)
		h.nameClient(key)
		return h
	})
}

// readUncached reads a header too long to cache, into a value of its own.
func (d *Decider) readUncached(ua string) *readHeader {
	h := &readHeader{tokens: agent.Tokenize(ua)}
	h.class = d.classifier.Classify(&h.tokens)
	h.nameClient(ua)
	return h
}

// Decide decides q against snap. rd is scratch space the caller keeps;
// the Decision's Path points into it (or into q.Target). Decide is a pure
// function of the snapshot, the request and the policy (the classifier
// only caches); it logs nothing. For a warm classifier cache and targets
// and headers of ordinary size it does not allocate.
func (d *Decider) Decide(snap *robotstxt.Snapshot, q Query, rd *Readings) Decision {
	var dec Decision
	d.DecideInto(&dec, snap, &q, rd)
	return dec
}

// DecideInto is Decide leaving the Decision in dec, which it overwrites,
// rather than returning it: for the request path, where a Decision
// returned by value would take room on the stack twice more.
func (d *Decider) DecideInto(dec *Decision, snap *robotstxt.Snapshot, q *Query, rd *Readings) {
	*dec = Decision{}
	d.decide(snap, q, rd, dec)
}

// decide fills dec, a zero Decision, with the decision on q.
func (d *Decider) decide(snap *robotstxt.Snapshot, q *Query, rd *Readings, dec *Decision) {
	built := !q.Unreadable && rd.Build(q.Target)
	d.decideBuilt(snap, q, dec, rd, built)
}

// decideBuilt is decide for readings already built from q's target:
// built reports that Build succeeded.
func (d *Decider) decideBuilt(snap *robotstxt.Snapshot, q *Query, dec *Decision, rd *Readings, built bool) {
	dec.Allowed, dec.Snapshot = true, snap
	if !q.Unreadable {
		if !built {
			dec.Reason = ReasonNoPath
			return
		}
		dec.Path = rd.Path()
		if isRobotsTxtPath(dec.Path) {
			dec.Reason = ReasonRobotsTxt
			return
		}
		if d.policy.CaseInsensitive {
			rd.Fold()
		}
	}
	h := d.readHeader(q.UserAgent)
	toks := &h.tokens
	dec.Classification = h.class
	if q.Forged != "" && h.class.Class != agent.ClassCrawler {
		// It claimed a crawler's token: a crawler, whatever the rest of
		// its header looks like.
		dec.Classification = agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedClaim, Token: q.Forged}
	}
	if tok, ok := d.allowListed(toks); ok {
		dec.Reason, dec.Token = ReasonAllowListed, tok
		return
	}
	bound := d.policy.Wildcard.Binds(dec.Classification.Class)
	dec.Bound = bound
	if snap.Robots == nil {
		dec.Token = wildcardToken(&dec.Classification, toks)
		switch {
		case !snap.DisallowAll:
			dec.Reason = ReasonUnavailable
		case bound:
			dec.Allowed, dec.Reason = false, refusalReason(snap.Refusal)
		default:
			dec.Reason = ReasonNotAutomated
		}
		return
	}
	if q.Unreadable {
		d.decideUnreadable(snap, toks, q.Forged, bound, dec)
		return
	}

	m := d.chooseFor(snap, h, q.Forged)
	if m.Named() {
		// Any group that names the client and allows the request lets it
		// pass (see Match): the decision names that group, or, when all
		// deny, the first.
		dec.Reason, dec.Named, dec.Bound, dec.Allowed = ReasonNamedGroup, true, true, false
		for i := 0; i < m.Len(); i++ {
			v, reading := judgeReadings(m.Group(i), rd)
			if i == 0 || v.Allowed {
				dec.Token, dec.Verdict, dec.Reading, dec.Group = m.Token(i), v, reading, m.Group(i)
			}
			if v.Allowed {
				dec.Allowed = true
				break
			}
		}
		return
	}
	dec.Token = wildcardToken(&dec.Classification, toks)
	g := snap.Robots.Wildcard()
	switch {
	case g == nil:
		dec.Reason = ReasonNoGroup
	case !bound:
		dec.Reason = ReasonNotAutomated
	default:
		dec.Reason, dec.Group = ReasonWildcardGroup, g
		dec.Verdict, dec.Reading = judgeReadings(g, rd)
		dec.Allowed = dec.Verdict.Allowed
	}
}

// refusalReason is the reason of a denial for want of any robots.txt: the
// store's refusal, or an unreachable file.
func refusalReason(r robotstxt.Refusal) Reason {
	switch r {
	case robotstxt.RefusalInvalidHost:
		return ReasonInvalidHost
	case robotstxt.RefusalHostBudget:
		return ReasonHostBudget
	}
	return ReasonUnreachable
}

// decideUnreadable decides a target that could not be read (see
// Request.Unreadable): disallowed for a client a named group or the "*"
// group binds, unless that group disallows nothing, since no rule can be
// shown not to apply to what the server will make of the target.
func (d *Decider) decideUnreadable(snap *robotstxt.Snapshot, toks *agent.Tokens, forged string, bound bool, dec *Decision) {
	if m := d.choose(snap, toks, forged); m.Named() {
		dec.Reason, dec.Token, dec.Named, dec.Bound = ReasonNamedGroup, m.Token(0), true, true
		for i := 0; i < m.Len(); i++ {
			if disallowsAny(m.Group(i)) {
				dec.Allowed, dec.Reason, dec.Token = false, ReasonUnreadableTarget, m.Token(i)
				return
			}
		}
		return
	}
	dec.Token = wildcardToken(&dec.Classification, toks)
	g := snap.Robots.Wildcard()
	switch {
	case g == nil:
		dec.Reason = ReasonNoGroup
	case !bound:
		dec.Reason = ReasonNotAutomated
	case !disallowsAny(g):
		dec.Reason = ReasonWildcardGroup
	default:
		dec.Allowed, dec.Reason = false, ReasonUnreadableTarget
	}
}

// disallowsAny reports whether a group has a Disallow rule. It copies the
// rules, which only the rare unreadable target pays for.
func disallowsAny(g *rules.Group) bool {
	for _, r := range g.Rules() {
		if !r.Allow {
			return true
		}
	}
	return false
}

// chooseFor is choose for a header read through the cache: it reuses the
// header's last choice when made in snap's index, else makes it and keeps
// it. A forged token is dropped from a choice made anew, never kept.
func (d *Decider) chooseFor(snap *robotstxt.Snapshot, h *readHeader, forged string) robotstxt.Match {
	x := snap.Groups()
	if h.chosen == nil || x == nil || forged != "" {
		return d.choose(snap, &h.tokens, forged)
	}
	return x.ChooseCached(&h.tokens, h.chosen)
}

// choose picks the named groups through the snapshot's index when it has
// one, leaving out those named by forged (see Request.Forged).
func (d *Decider) choose(snap *robotstxt.Snapshot, toks *agent.Tokens, forged string) robotstxt.Match {
	var m robotstxt.Match
	if x := snap.Groups(); x != nil {
		m = x.Choose(toks)
	} else {
		m = robotstxt.ChooseGroups(snap.Robots, toks)
	}
	if forged != "" {
		m.Drop(forged)
	}
	return m
}

// judgeReadings decides every reading under g and returns the first
// denial, or the verdict on the target as sent when none denies. The
// Folded reading is judged against g folded.
func judgeReadings(g *rules.Group, rd *Readings) (rules.Verdict, Reading) {
	b, kind := rd.At(0)
	first := g.DecideCanonical(b)
	if !first.Allowed {
		return first, kind
	}
	for i := 1; i < rd.Len(); i++ {
		b, kind := rd.At(i)
		gi := g
		if kind == Folded {
			gi = g.Folded()
		}
		if v := gi.DecideCanonical(b); !v.Allowed {
			return v, kind
		}
	}
	return first, AsSent
}

// allowListed returns the candidate that names a token of AllowAgents.
func (d *Decider) allowListed(toks *agent.Tokens) (string, bool) {
	for _, allowed := range d.policy.AllowAgents {
		for i := 0; i < toks.Len(); i++ {
			if tok := toks.At(i); strings.EqualFold(tok, allowed) {
				return tok, true
			}
		}
	}
	return "", false
}

// wildcardToken names a client judged by the "*" group: by what marked it
// as automated, else by its first product name.
func wildcardToken(c *agent.Classification, toks *agent.Tokens) string {
	if c.Token != "" {
		return c.Token
	}
	if toks.Len() > 0 {
		return toks.At(0)
	}
	return ""
}

// isRobotsTxtPath reports whether a normalised target names /robots.txt.
func isRobotsTxtPath(p string) bool {
	const robots = "/robots.txt"
	return strings.HasPrefix(p, robots) && (len(p) == len(robots) || p[len(robots)] == '?')
}
