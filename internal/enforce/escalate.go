package enforce

import (
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// Repeat violators. A crawler recorded with a violation has broken the
// robots.txt it was given, read by every conforming reading; with
// JudgeConfig.Escalation, its requests are judged more strictly for a
// while: EscalateEnforce denies what its group disallows even in log
// mode, EscalateBlock denies everything but /robots.txt. A crawler is its
// product token when the client was verified as it, else its token and
// address, so that no one can get another crawler escalated; grace and
// protective denials never escalate.

// escalation applies the escalation in force for jd's crawler, if any.
func (j *Judge) escalation(jd *Judgement) {
	if j.cfg.Violators.Len() == 0 {
		return // the common case: one atomic load
	}
	verified := jd.Identity.Outcome == verify.Verified
	e := j.cfg.Violators.Lookup(jd.req.Site, jd.Token, jd.req.ClientIP, verified, jd.clock())
	if e == nil {
		return
	}
	jd.Escalation = e
	if j.cfg.Escalation == EscalateBlock && jd.Allowed {
		path := jd.Path
		jd.Decision = Decision{Allowed: false, Reason: ReasonEscalated, Token: jd.Token, Named: jd.Named, Undeclared: jd.Undeclared,
			Bound: true, Classification: jd.Classification, Snapshot: jd.Snapshot, Path: path}
	}
}

// escalate begins an escalation for jd's crawler when its request is a
// violation and none is in force.
func (j *Judge) escalate(jd *Judgement) {
	if j.cfg.Escalation == EscalateOff || jd.Escalation != nil || jd.Evidence.Compliance != ComplianceViolation {
		return
	}
	d := j.cfg.EscalationFor
	if d <= 0 {
		d = DefaultEscalation
	}
	verified := jd.Identity.Outcome == verify.Verified
	req := &jd.req
	jd.Escalated = j.cfg.Violators.Begin(req.Site, jd.Token, req.ClientIP, verified, jd.clock(), d,
		Escalation{Site: req.Site, URI: req.URI, Versions: jd.Evidence.Versions})
}
