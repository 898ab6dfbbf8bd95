package enforce

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
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

	// Room for Versions, Served and the versions in force, so that the
	// evidence of a denial, kept in a pooled Judgement, allocates nothing.
	names   [MaxVersions + MaxServedVersions]string
	served  [MaxServedVersions]ServedVersion
	inForce [MaxVersions]*Snapshot
}

// reset makes ev the zero Evidence but for its rooms, which only the
// lengths of Versions and Served say are in use: clearing them would cost
// a request a write barrier per slot while the collector runs.
func (ev *Evidence) reset() {
	ev.Compliance, ev.Versions, ev.Assessed, ev.RFC9309Allowed, ev.GoogleAllowed = ComplianceAllowed, nil, false, false, false
	ev.Served, ev.Link = nil, LinkNone
}

// assess judges a decision for its record (see Compliance): dec was made
// on req, whose Target is the request as sent, and served are the
// versions the crawler was served within GraceWindow before now, newest
// first. A served version this snapshot no longer knows (the site
// published more than MaxVersions in a day, or served this client a
// variant the handler never fetched) is given the benefit of the doubt,
// as a version that allows. It allocates; it runs for denials, and for
// allowed requests only when they are recorded.
func (d *Decider) assess(ev *Evidence, dec *Decision, req *Request, listed []string, now time.Time) {
	switch {
	case dec.Allowed:
		ev.Compliance = ComplianceAllowed
		return
	case dec.Reading != AsSent || (dec.Reason != ReasonNamedGroup && dec.Reason != ReasonWildcardGroup):
		ev.Compliance = ComplianceProtective
		return
	}
	path := dec.Path
	target, _ := splitTarget(req.Target) // as sent, origin-form
	if strings.HasPrefix(target, "?") {
		target = "/" + target // "http://host?q": an empty path reads as "/"
	}
	h := d.readHeader(req.UserAgent)
	bound := d.policy.Wildcard.Binds(h.class.Class)
	judge := func(v *Snapshot) {
		rfc, google := d.allowsAsSent(v, &h.tokens, req.Forged, bound, target, path)
		if listed != nil { // an undeclared crawler: judged as the crawlers its address proves
			rfc, google = d.allowsListed(v, listed, target, path)
		}
		ev.RFC9309Allowed = ev.RFC9309Allowed || rfc
		ev.GoogleAllowed = ev.GoogleAllowed || google
	}
	ev.Assessed = true
	if ev.Versions == nil {
		ev.Versions = ev.names[:0]
	}
	if len(ev.Served) > 0 {
		for _, sv := range ev.Served {
			if slices.Contains(ev.Versions, sv.Hash) {
				continue
			}
			ev.Versions = append(ev.Versions, sv.Hash)
			switch v := dec.Snapshot.Version(sv.Hash, now); {
			case v != nil:
				judge(v)
			case sv.Hash == VersionUnavailable:
				judge(&Snapshot{Access: AccessUnavailable})
			default: // a version no longer known: the benefit of the doubt
				ev.RFC9309Allowed, ev.GoogleAllowed = true, true
			}
		}
	} else {
		inForce := dec.Snapshot.AppendVersionsAt(ev.inForce[:0], now)
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

// VersionUnavailable names the version of no file: what a client is
// served with a 4xx answer other than 429, under which everything is
// allowed (RFC 9309 §2.3.1.3).
const VersionUnavailable = "unavailable"

// allowsListed is allowsAsSent for an undeclared crawler, whose address
// proves the tokens listed: any group one of them names that allows, or
// else the "*" group, binding it as a crawler.
func (d *Decider) allowsListed(v *Snapshot, listed []string, target string, path string) (rfc, google bool) {
	if v.Robots == nil {
		allowed := !v.DisallowAll || !d.policy.Wildcard.Binds(ClassCrawler)
		return allowed, allowed
	}
	named := false
	for _, tok := range listed {
		if g := v.Robots.Group(tok); g != nil {
			named = true
			rfc = rfc || g.DecideCanonical(path).Allowed
			google = google || googleAllows(v.groups, g, target)
		}
	}
	if named {
		return rfc, google
	}
	g := v.Robots.Wildcard()
	if g == nil || !d.policy.Wildcard.Binds(ClassCrawler) {
		return true, true
	}
	return g.DecideCanonical(path).Allowed, googleAllows(v.groups, g, target)
}

// allowsAsSent reports whether version v allows the request as sent, by
// this profile's reading (path, the target's canonical form) and by
// Google's (target, as sent), for a client with tokens toks, the "*"
// group binding it or not: any named group that allows, or else the "*"
// group.
func (d *Decider) allowsAsSent(v *Snapshot, toks *Tokens, forged string, bound bool, target string, path string) (rfc, google bool) {
	if v.Robots == nil {
		allowed := !v.DisallowAll || !bound
		return allowed, allowed
	}
	if m := d.choose(v, toks, forged); m.Named() {
		for i := 0; i < m.Len(); i++ {
			g := m.Group(i)
			rfc = rfc || g.DecideCanonical(path).Allowed
			google = google || googleAllows(v.groups, g, target)
		}
		return rfc, google
	}
	g := v.Robots.Wildcard()
	if g == nil || !bound {
		return true, true
	}
	return g.DecideCanonical(path).Allowed, googleAllows(v.groups, g, target)
}
