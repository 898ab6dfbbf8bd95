package enforce

import (
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// fillRecord fills the scratch's record with the compliance record of
// the judgement, as the handler writes it and "caddy robots check" prints
// it, and returns it. Its lists share the Judgement's memory.
func (jd *Judgement) fillRecord() *record.Decision {
	req, ev, rec := &jd.req, &jd.Evidence, &jd.scratch.rec
	*rec = record.Decision{
		Site:           req.Site,
		Host:           req.Host,
		Method:         req.Method,
		URI:            req.URI,
		UserAgent:      req.UserAgent,
		Agent:          jd.Token,
		BotClass:       jd.BotClass(),
		Automation:     jd.Classification.Automation.String(),
		Verdict:        VerdictName(jd.Allowed),
		Mode:           jd.judge.mode,
		Reason:         jd.Reason.String(),
		Reading:        jd.Reading.String(),
		GroupLine:      jd.Verdict.GroupLine,
		Rule:           jd.Verdict.Rule.Pattern,
		RuleLine:       jd.Verdict.Rule.Line,
		Compliance:     ev.Compliance.String(),
		JudgedVersions: ev.Versions,
		Assessed:       ev.Assessed,
		RFC9309Verdict: VerdictName(ev.RFC9309Allowed),
		GoogleVerdict:  VerdictName(ev.GoogleAllowed),
		RemoteIP:       req.RemoteIP,
		ClientIP:       req.ClientIP,
		Served:         len(ev.Served) > 0,
		ContentUsage:   jd.Usage.String(),
		Instance:       jd.judge.cfg.Instance,
	}
	if jd.Token != "" && jd.Classification.Automated() { // a browser's token is no fetcher's
		rec.FetcherClass = fetcherClass(jd.UserTriggered)
	}
	if snap := jd.Snapshot; snap != nil {
		rec.RobotsHash, rec.RobotsSource, rec.RobotsFetchedAt = snap.Hash, snap.Source, snap.FetchedAt
	}
	if rec.Served {
		rec.ServedAt, rec.ServedHash, rec.ServedLink = ev.Served[0].At, ev.Served[0].Hash, ev.Link.String()
	}
	if jd.Identity.Outcome != verify.None {
		rec.Identity, rec.IdentityMethod = jd.Identity.Outcome.String(), jd.Identity.Method.String()
	}
	if e := jd.escalation(); e != nil {
		rec.Escalation, rec.EscalationBegan = jd.judge.cfg.Escalation.String(), jd.Escalated
		rec.EscalatedSince, rec.EscalatedUntil, rec.EscalatedBy = e.Since, e.Until, e.URI
	}
	return rec
}

// escalation returns the escalation in force for the crawler, or the one
// its violation began; nil when there is neither.
func (jd *Judgement) escalation() *Escalation {
	if jd.Escalation != nil || !jd.Escalated {
		return jd.Escalation
	}
	verified := jd.Identity.Outcome == verify.Verified
	return jd.judge.cfg.Violators.Lookup(jd.escalationSite(), jd.Token, jd.clientAddr(), verified, jd.clock())
}

// BotClass says how robots.txt saw the client, as records write it:
// "undeclared" for a crawler its address proved (see decideUndeclared),
// "named" when a group names it, else its class ("crawler", "automated",
// "browser"), by which the wildcard policy held it to the "*" group or
// not.
func (dec *Decision) BotClass() string {
	if dec.Undeclared {
		return "undeclared"
	}
	if dec.Named {
		return "named"
	}
	return dec.Classification.Class.String()
}

// VerdictName names a verdict as records and placeholders do: "allow" or
// "deny".
func VerdictName(allowed bool) string {
	if allowed {
		return record.Allow
	}
	return record.Deny
}

// ReadingPath returns, as a string of its own, the target as the reading
// that decided reads it: for a rewrite header, the target it names.
func (jd *Judgement) ReadingPath() string {
	if jd.Reading == RewriteHeader {
		return strings.Clone(jd.scratch.alt.Path())
	}
	rd := &jd.scratch.rd
	for i := 0; i < rd.Len(); i++ {
		if b, kind := rd.At(i); kind == jd.Reading {
			return strings.Clone(b)
		}
	}
	return strings.Clone(jd.Path)
}

// fetcherClass names the class of a fetcher as records write it.
func fetcherClass(userTriggered bool) string {
	if userTriggered {
		return record.FetcherUserTriggered
	}
	return record.FetcherCrawler
}
