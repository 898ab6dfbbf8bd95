package enforce

import (
	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// Repeat violators. A crawler recorded with a violation has broken the
// robots.txt it was given, read by every conforming reading; with
// JudgeConfig.Escalation, its requests are judged more strictly for a
// while: EscalateEnforce denies what its group disallows even in log
// mode, EscalateBlock denies everything but /robots.txt.
//
// An escalation follows the crawler that was proven, and only it. A
// crawler that proved its token (its address in the token's range list,
// its reverse DNS, its signature) is escalated by the token, and the
// escalation covers every request it can be proven to send: any request
// from an address its range list or reverse DNS proves, and any request
// its signature agent signed, whatever User-Agent it carries. A client that proved no token is escalated by
// its address (an IPv6 /64) and the token it claimed, so that no one can
// get another crawler escalated by claiming its name; one that invents a
// name for each violation is escalated by its address alone (see
// Violators.Begin). Grace and protective denials never escalate, nor do
// user-triggered fetchers, which act for one person at a time.

// escalation applies the escalation in force for jd's client, if any: the
// crawler it is judged as, or a crawler its address proves it is.
func (j *Judge) escalation(jd *Judgement) {
	if j.cfg.Violators.Len() == 0 {
		return // the common case: one atomic load
	}
	if jd.RobotsTxt {
		return
	}
	if jd.Bound && jd.Token != "" {
		proven := jd.Identity.Outcome == verify.Verified
		if e := j.cfg.Violators.Lookup(jd.escalationSite(), jd.Token, jd.clientAddr(), proven, jd.clock()); e != nil {
			j.escalated(jd, e)
			return
		}
	}
	j.provenEscalation(jd)
}

// provenEscalation applies the escalation of a crawler the request is
// proven to come from whatever its header says: a client whose header
// names another token than the one escalated, or none, from an address
// the escalated crawler's list or reverse DNS proves, is that crawler,
// and judged as it. A header that names a token the address proves is
// that crawler's own name, and was looked up as such.
func (j *Judge) provenEscalation(jd *Judgement) {
	id := j.cfg.Identity
	if id == nil {
		return
	}
	toks := id.ProvenTokens(jd.clientAddr(), jd.req.HTTP)
	if len(toks) == 0 {
		return
	}
	h := j.decider.readHeader(jd.q.UserAgent)
	for _, tok := range toks {
		if h.tokens.Has(tok) {
			return // it declares itself
		}
	}
	for _, tok := range toks {
		e := j.cfg.Violators.Lookup(jd.escalationSite(), tok, jd.clientAddr(), true, jd.clock())
		if e == nil {
			continue
		}
		path := jd.Path
		j.decider.decideUndeclared(&jd.Decision, jd.Snapshot, &jd.q, &jd.scratch.rd, jd.built, []string{tok})
		if jd.Path == "" {
			jd.Path = path
		}
		jd.listed = []string{tok}
		jd.Identity = id.Verify(tok, jd.clientAddr(), jd.req.HTTP) // how it is proven, for the record
		if jd.Identity.Outcome != verify.Verified {
			jd.Identity = verify.Result{Outcome: verify.Verified, Method: verify.IPRanges}
		}
		j.escalated(jd, e)
		return
	}
}

// escalated applies escalation e to jd.
func (j *Judge) escalated(jd *Judgement, e *Escalation) {
	jd.Escalation = e
	if j.cfg.Escalation == EscalateBlock && jd.Allowed {
		path := jd.Path
		jd.Decision = Decision{Allowed: false, Reason: ReasonEscalated, Token: jd.Token, Named: jd.Named, Undeclared: jd.Undeclared,
			Bound: true, Classification: jd.Classification, Snapshot: jd.Snapshot, Path: path}
	}
}

// escalate begins an escalation for jd's crawler when its request is a
// violation, none is in force, and it is no user-triggered fetcher.
func (j *Judge) escalate(jd *Judgement) {
	if j.cfg.Escalation == EscalateOff || jd.Escalation != nil || jd.Evidence.Compliance != ComplianceViolation || jd.UserTriggered {
		return
	}
	d := j.cfg.EscalationFor
	if d <= 0 {
		d = DefaultEscalation
	}
	proven := jd.Identity.Outcome == verify.Verified
	req := &jd.req
	jd.Escalated = j.cfg.Violators.Begin(jd.escalationSite(), jd.Token, jd.clientAddr(), proven, jd.clock(), d,
		Escalation{Site: req.Site, URI: req.URI, Versions: jd.Evidence.Versions})
}

// userTriggered reports whether the crawler jd is about is a user-triggered
// fetcher (see agent.UserTriggered).
func userTriggered(jd *Judgement) bool {
	return jd.Token != "" && agent.UserTriggered(jd.Token)
}

// escalationSite returns the site an escalation is kept for: the request's
// site without its port (robotstxt.SiteHost), so that a violator that
// writes the Host another way (with the listener's port or without it)
// escapes nothing.
func (jd *Judgement) escalationSite() string { return robotstxt.SiteHost(jd.req.Site) }
