package enforce

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// Compliance says what a decision says of the client's obedience to
// robots.txt: whether a denial is evidence that it broke the file it was
// given, read as RFC 9309 reads it.
type Compliance uint8

const (
	// ComplianceAllowed: the request was allowed.
	ComplianceAllowed Compliance = iota
	// ComplianceViolation: every version of robots.txt the crawler was
	// served within GraceWindow disallows the request as sent, by this
	// profile's reading (RFC 9309) and by Google's reference reading (see
	// google.go); or, when it was served none through the handler, every
	// version in force within GraceWindow does.
	ComplianceViolation
	// ComplianceGrace: the request as sent is disallowed now, but a
	// version the crawler may still hold (RFC 9309 §2.4) allows it.
	ComplianceGrace
	// ComplianceProtective: a denial that a conforming reading of the
	// request as sent does not make: an alternate reading of the path
	// (cleaned, decoded, a rewrite header), Google's reading of its
	// percent-encoding, or a denial that fails closed for want of a
	// robots.txt or a readable target. It protects content the server
	// would serve; it says nothing about the crawler.
	ComplianceProtective
)

var complianceNames = [...]string{
	ComplianceAllowed:    record.Allowed,
	ComplianceViolation:  record.Violation,
	ComplianceGrace:      record.GraceValue,
	ComplianceProtective: record.Protective,
}

// String returns the compliance's stable name, as records write it.
func (c Compliance) String() string {
	if int(c) < len(complianceNames) {
		return complianceNames[c]
	}
	return fmt.Sprintf("compliance(%d)", uint8(c))
}

// Evidence is what a decision was judged against, for its record.
type Evidence struct {
	Compliance Compliance
	// Versions are the names (Snapshot.VersionName) of the robots.txt
	// versions the compliance was judged against, each once: those the
	// crawler was served, or, when none, those in force within
	// GraceWindow. Empty for allowed and protective decisions.
	Versions []string
	// Assessed reports that the request as sent was judged under Versions
	// by both conforming readings; RFC9309Allowed and GoogleAllowed then
	// say whether this profile's reading and Google's allow it under some
	// version. A violation is a request both disallow under every one.
	Assessed                      bool
	RFC9309Allowed, GoogleAllowed bool
	// Served are the versions the crawler was served within GraceWindow,
	// newest first, and Link how it was tied to them.
	Served []ServedVersion
	Link   ServedLink
}

// evidenceRooms are the rooms an Evidence's lists are gathered in, so that
// the evidence of a denial, kept with a pooled Judgement, allocates
// nothing. Only the lengths of Evidence's lists say which slots are in
// use: slots past them hold what an earlier judgement left, never read.
type evidenceRooms struct {
	names   [robotstxt.MaxVersions + MaxServedVersions]string
	served  [MaxServedVersions]ServedVersion
	inForce [robotstxt.MaxVersions]*robotstxt.Snapshot
}

// assess judges a decision for its record (see Compliance): dec was made
// on q, whose Target is the request as sent, and served are the
// versions the crawler was served within GraceWindow before now, newest
// first, each a version the site itself answered the store with within
// the window (see keepServed). It allocates; it runs for denials, and for
// allowed requests only when they are recorded.
func (d *Decider) assess(ev *Evidence, rooms *evidenceRooms, dec *Decision, q *Query, listed []string, now time.Time) {
	switch {
	case dec.Allowed:
		ev.Compliance = ComplianceAllowed
		return
	case dec.Reading != AsSent || (dec.Reason != ReasonNamedGroup && dec.Reason != ReasonWildcardGroup):
		ev.Compliance = ComplianceProtective
		return
	}
	path := dec.Path
	target, _ := splitTarget(q.Target) // as sent, origin-form
	if strings.HasPrefix(target, "?") {
		target = "/" + target // "http://host?q": an empty path reads as "/"
	}
	h := d.readHeader(q.UserAgent)
	bound := d.policy.Wildcard.Binds(dec.Classification.Class) // a claim of a named token made it a crawler
	judge := func(v *robotstxt.Snapshot) {
		rfc, google := d.allowsAsSent(v, &h.tokens, q.Forged, bound, target, path)
		if listed != nil { // an undeclared crawler: judged as the crawlers its address proves
			rfc, google = d.allowsListed(v, listed, target, path)
		}
		ev.RFC9309Allowed = ev.RFC9309Allowed || rfc
		ev.GoogleAllowed = ev.GoogleAllowed || google
	}
	ev.Assessed = true
	if ev.Versions == nil {
		ev.Versions = rooms.names[:0]
	}
	for _, sv := range ev.Served {
		// Only versions the site answered the store with count (see
		// keepServed): a version this snapshot does not know is no
		// version of the site's.
		if slices.Contains(ev.Versions, sv.Hash) {
			continue
		}
		if v := dec.Snapshot.Version(sv.Hash, now); v != nil {
			ev.Versions = append(ev.Versions, sv.Hash)
			judge(v)
		}
	}
	if len(ev.Versions) == 0 {
		// Served none: what it may hold is any version in force within
		// the window.
		inForce := dec.Snapshot.AppendVersionsAt(rooms.inForce[:0], now)
		defer clear(inForce) // holds no version past the request
		for _, v := range inForce {
			if name := v.VersionName(); !slices.Contains(ev.Versions, name) {
				ev.Versions = append(ev.Versions, name)
				judge(v)
			}
		}
	}
	switch {
	case ev.RFC9309Allowed:
		ev.Compliance = ComplianceGrace
	case ev.GoogleAllowed:
		ev.Compliance = ComplianceProtective
	default:
		ev.Compliance = ComplianceViolation
	}
}

// allowsListed is allowsAsSent for an undeclared crawler, whose address
// proves the tokens listed: any group one of them names that allows, or
// else the "*" group, binding it as a crawler.
func (d *Decider) allowsListed(v *robotstxt.Snapshot, listed []string, target string, path string) (rfc, google bool) {
	if v.Robots == nil {
		allowed := !v.DisallowAll || !d.policy.Wildcard.Binds(agent.ClassCrawler)
		return allowed, allowed
	}
	named := false
	for _, tok := range listed {
		if g := v.Robots.Group(tok); g != nil {
			named = true
			rfc = rfc || g.DecideCanonical(path).Allowed
			google = google || v.GoogleAllows(g, target)
		}
	}
	if named {
		return rfc, google
	}
	g := v.Robots.Wildcard()
	if g == nil || !d.policy.Wildcard.Binds(agent.ClassCrawler) {
		return true, true
	}
	return g.DecideCanonical(path).Allowed, v.GoogleAllows(g, target)
}

// allowsAsSent reports whether version v allows the request as sent, by
// this profile's reading (path, the target's canonical form) and by
// Google's (target, as sent), for a client with tokens toks, the "*"
// group binding it or not: any named group that allows, or else the "*"
// group.
func (d *Decider) allowsAsSent(v *robotstxt.Snapshot, toks *agent.Tokens, forged string, bound bool, target string, path string) (rfc, google bool) {
	if v.Robots == nil {
		allowed := !v.DisallowAll || !bound
		return allowed, allowed
	}
	if m := d.choose(v, toks, forged); m.Named() {
		for i := 0; i < m.Len(); i++ {
			g := m.Group(i)
			rfc = rfc || g.DecideCanonical(path).Allowed
			google = google || v.GoogleAllows(g, target)
		}
		return rfc, google
	}
	g := v.Robots.Wildcard()
	if g == nil || !bound {
		return true, true
	}
	return g.DecideCanonical(path).Allowed, v.GoogleAllows(g, target)
}
