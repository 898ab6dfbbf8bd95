package enforce

import (
	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// Undeclared crawlers. A client whose User-Agent names no token a group
// names, but whose address is in a crawler operator's published range
// list, is that operator's crawler whatever its header says: crawlers
// that hide behind a browser's User-Agent are the complaint site owners
// raise most. With JudgeConfig.Undeclared, it is judged as the crawlers
// the list proves (Identity.ListedTokens): by the groups their tokens
// name, any that allows allowing, or else by the "*" group as a crawler.

// decideUndeclared makes dec, a decision no named group made, the
// decision on q, already read into rd (built reports that it could be),
// of a crawler with the product tokens toks.
func (d *Decider) decideUndeclared(dec *Decision, snap *robotstxt.Snapshot, q *Query, rd *Readings, built bool, toks []string) {
	*dec = Decision{Allowed: true, Snapshot: snap, Undeclared: true, Bound: true, Token: toks[0],
		Classification: agent.Classification{Class: agent.ClassCrawler, Automation: agent.AutomatedRanges}}
	if built {
		dec.Path = rd.Path()
	}
	if snap.Robots == nil {
		if snap.DisallowAll && d.policy.Wildcard.Binds(agent.ClassCrawler) {
			dec.Allowed, dec.Reason = false, refusalReason(snap.Refusal)
		} else {
			dec.Reason = ReasonUnavailable
		}
		return
	}
	first := true
	for _, tok := range toks {
		g := snap.Robots.Group(tok)
		if g == nil {
			continue
		}
		var v Decision
		v.Token, v.Group, v.Named = tok, g, true
		if q.Unreadable {
			v.Allowed, v.Reason = !disallowsAny(g), ReasonNamedGroup
			if !v.Allowed {
				v.Reason = ReasonUnreadableTarget
			}
		} else {
			v.Verdict, v.Reading = judgeReadings(g, rd)
			v.Allowed, v.Reason = v.Verdict.Allowed, ReasonNamedGroup
		}
		if first || v.Allowed {
			dec.Token, dec.Group, dec.Named, dec.Verdict, dec.Reading, dec.Reason, dec.Allowed =
				v.Token, v.Group, true, v.Verdict, v.Reading, v.Reason, v.Allowed
			first = false
		}
		if v.Allowed {
			return
		}
	}
	if !first {
		return
	}
	g := snap.Robots.Wildcard()
	switch {
	case g == nil:
		dec.Reason = ReasonNoGroup
	case !d.policy.Wildcard.Binds(agent.ClassCrawler):
		dec.Reason, dec.Bound = ReasonNotAutomated, false
	case q.Unreadable:
		dec.Reason, dec.Group, dec.Allowed = ReasonWildcardGroup, g, !disallowsAny(g)
		if !dec.Allowed {
			dec.Reason = ReasonUnreadableTarget
		}
	default:
		dec.Reason, dec.Group = ReasonWildcardGroup, g
		dec.Verdict, dec.Reading = judgeReadings(g, rd)
		dec.Allowed = dec.Verdict.Allowed
	}
}
