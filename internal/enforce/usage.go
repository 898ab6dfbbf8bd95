package enforce

import (
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// usageOf returns the AIPREF usage preference (draft-ietf-aipref-attach-05)
// that robots.txt attaches to an allowed request's path: the named
// group's for a named crawler, the "*" group's for everyone else (the
// preference is about the content, so browsers get it too); the zero
// Usage when none does. Sites whose robots.txt has no usage rule pay a
// nil check.
func usageOf(dec *Decision) rules.Usage {
	snap := dec.Snapshot
	if !dec.Allowed || dec.Path == "" || snap == nil || snap.Robots == nil {
		return rules.Usage{}
	}
	g := dec.Group
	if !dec.Named {
		g = snap.Robots.Wildcard()
	}
	if g == nil || !g.HasUsage() {
		return rules.Usage{}
	}
	path := dec.Path
	if !dec.Named && dec.Group != g && !g.DecideCanonical(path).Allowed {
		return rules.Usage{} // attach-05 §3.1: no preference for a path the group disallows
	}
	return g.UsageCanonical(path)
}
