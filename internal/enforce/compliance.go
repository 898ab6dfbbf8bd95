package enforce

import (
	"fmt"
	"time"
	"unsafe"
)

// Compliance says what a decision says of the client's obedience to
// robots.txt: whether a denial is evidence that it broke the file it was
// given, read as RFC 9309 reads it.
type Compliance uint8

const (
	// ComplianceAllowed: the request was allowed.
	ComplianceAllowed Compliance = iota
	// ComplianceViolation: every version of robots.txt the crawler was
	// served within GraceWindow disallows the request as sent, by the RFC
	// reading; or, when it was served none through the handler, every
	// version in force within GraceWindow does.
	ComplianceViolation
	// ComplianceGrace: the request as sent is disallowed now, but a
	// version the crawler may still hold (RFC 9309 §2.4) allows it.
	ComplianceGrace
	// ComplianceProtective: a denial the RFC reading of the request as
	// sent does not make: an alternate reading of the path (cleaned,
	// decoded, a rewrite header), or a denial that fails closed for want of
	// a robots.txt or a readable target. It protects content the server
	// would serve; it says nothing about the crawler.
	ComplianceProtective
)

var complianceNames = [...]string{
	ComplianceAllowed:    "allowed",
	ComplianceViolation:  "violation",
	ComplianceGrace:      "grace",
	ComplianceProtective: "protective",
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
	// versions the compliance was judged against: those the crawler was
	// served, or, when none, those in force within GraceWindow. Empty for
	// allowed and protective decisions.
	Versions []string
	// Served are the versions the crawler was served within GraceWindow,
	// newest first, and Link how it was tied to them.
	Served []ServedVersion
	Link   ServedLink
}

// Assess judges a decision for its record: see Compliance. served are the
// versions the client was served within GraceWindow before now (see
// Served.Lookup), newest first; a served version this snapshot no longer
// knows (the site published more than MaxVersions in a day, or served
// this client a variant the handler never fetched) is given the benefit of
// the doubt, as a version that allows. Assess allocates; it is for
// denials, and for allowed requests only when they are recorded.
func (d *Decider) Assess(dec *Decision, req *Request, served []ServedVersion, link ServedLink, now time.Time) Evidence {
	ev := Evidence{Served: served, Link: link}
	switch {
	case dec.Allowed:
		ev.Compliance = ComplianceAllowed
		return ev
	case dec.Reading != AsSent || (dec.Reason != ReasonNamedGroup && dec.Reason != ReasonWildcardGroup):
		ev.Compliance = ComplianceProtective
		return ev
	}
	path := unsafe.Slice(unsafe.StringData(dec.Path), len(dec.Path))
	h := d.readHeader(req.UserAgent)
	bound := d.policy.Wildcard.Binds(h.class.Class)
	allows := func(v *Snapshot) bool { return d.allowsAsSent(v, &h.tokens, req.Forged, bound, path) }

	ev.Compliance = ComplianceViolation
	if len(served) > 0 {
		for _, sv := range served {
			ev.Versions = append(ev.Versions, sv.Hash)
			v := dec.Snapshot.Version(sv.Hash, now)
			if v == nil && sv.Hash == VersionUnavailable {
				v = &Snapshot{Access: AccessUnavailable}
			}
			if v == nil || allows(v) {
				ev.Compliance = ComplianceGrace
			}
		}
		return ev
	}
	for _, v := range dec.Snapshot.VersionsAt(now) {
		ev.Versions = append(ev.Versions, v.VersionName())
		if allows(v) {
			ev.Compliance = ComplianceGrace
		}
	}
	return ev
}

// VersionUnavailable names the version of no file: what a client is
// served with a 4xx answer other than 429, under which everything is
// allowed (RFC 9309 §2.3.1.3).
const VersionUnavailable = "unavailable"

// allowsAsSent reports whether version v allows the canonical target path
// (the AsSent reading) for a client with tokens toks, the "*" group binding
// it or not: any named group that allows, or else the "*" group.
func (d *Decider) allowsAsSent(v *Snapshot, toks *Tokens, forged string, bound bool, path []byte) bool {
	if v.Robots == nil {
		return !v.DisallowAll || !bound
	}
	if m := d.choose(v, toks, forged); m.Named() {
		for i := 0; i < m.Len(); i++ {
			if m.Group(i).DecideCanonical(path).Allowed {
				return true
			}
		}
		return false
	}
	g := v.Robots.Wildcard()
	return g == nil || !bound || g.DecideCanonical(path).Allowed
}
