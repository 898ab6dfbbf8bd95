package rules

// DecisionsOnly returns a Robots that decides every target for every
// product token as r does, allow and disallow alike, and holds less: the
// groups' usage preferences (Content-Usage and Content-Signal rules,
// compiled for lookups), the records and the diagnostics are left out.
// On it, Decide, Allowed, Group, GroupFor, Wildcard, Tokens, Groups and
// the groups' DecideCanonical, Rules and Folded answer as on r;
// Verdict.Usage and UsageCanonical find no preference, HasUsage reports
// false, and Records, Sitemaps and Diagnostics return nothing. It is for
// a caller that keeps older versions of a file only to judge requests
// again by their allow and disallow rules: such a version needs nothing
// else (see docs/performance.md for what it saves). It shares r's
// backing text and indexes, and returns r itself when r is one already.
func (r *Robots) DecisionsOnly() *Robots {
	if r.decisionsOnly {
		return r
	}
	d := &Robots{
		text: r.text, size: r.size, truncated: r.truncated,
		sources: r.sources, delays: r.delays, agents: r.agents, rules: r.rules, usage: r.usage,
		ranks: r.ranks, groupSrc: r.groupSrc, tokens: r.tokens,
		decisionsOnly: true,
	}
	d.groups = make([]Group, len(r.groups))
	for i := range r.groups {
		g, n := &r.groups[i], &d.groups[i]
		n.r, n.m, n.ranks, n.src, n.line, n.kind = d, g.m, g.ranks, g.src, g.line, g.kind
		if g == r.wildcard {
			d.wildcard = n
		}
	}
	return d
}
