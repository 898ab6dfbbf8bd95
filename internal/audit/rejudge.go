package audit

import (
	"bytes"
	"slices"
)

// The merged re-judgement. Each instance judged a denial against the
// robots.txt versions it served that crawler within the day before (or,
// when it served it none, the versions it had in force): an instance that
// joined after a change, or was not the one the crawler fetched
// robots.txt through, judged without what the others served. When the
// logs are read in two passes (ReadInputs), the first gathers every serve
// of every instance, and the second judges each denial the handler judged
// against versions (compliance violation or grace) again, the way the
// handler does, against every version served to the crawler on any
// instance within the day before the request:
//
//   - a serve counts for the crawler by the handler's proof rules: by its
//     product token when the serve's credited_agents hold it and the
//     row's identity lets a token's fetch count as its own (see "Fetches"
//     in the package documentation), or as the same client (address and
//     token; address and User-Agent without one); and the versions the
//     record itself says were served;
//   - when no instance served it any version, the record stands: it was
//     judged against the versions its instance had in force;
//   - otherwise the request is a violation when every one of those
//     versions disallows it by both readings, grace when one allows it by
//     RFC 9309's, protective when one allows it only by Google's.
//
// What each version says of the request comes from the record where the
// handler judged it (every version a violation was judged against
// disallows it by both readings; the one version a grace was judged
// against allows it), from the version's text (Options.Texts; see
// judge.go) otherwise, and is unknown without a text: then, as the
// handler does with a version it no longer knows, it counts as allowing.
// MergeStats says how many denials moved, and how many rest on a version
// read as unknown.

// maxJudged bounds the versions a denial is judged against: a crawler is
// served a few versions a day.
const maxJudged = 32

// rejudgement is the outcome of a denial judged again.
type rejudgement struct {
	outcome outcome
	// versions are the versions it was judged against: those served, or
	// the record's own judged_versions when it stands.
	versions []string
	// served tells that versions are those served to the crawler.
	served bool
}

// rejudge judges a decision record again against the fleet's serves, for
// the row c, and counts what moved in a.merge. It returns the record's
// own outcome and versions when the record stands.
func (a *Auditor) rejudge(rec *rawRecord, c *crawler, ns int64, timed bool) rejudgement {
	r := rejudgement{outcome: rec.outcome, versions: a.judgedScratch(rec), served: rec.servedRobots == triTrue}
	if rec.outcome != outViolation && rec.outcome != outGrace || !timed ||
		rec.has&hasCompliance == 0 || rec.has&hasJudged == 0 {
		return r
	}
	served := a.servedVersions(rec, c, ns)
	if len(served) == 0 || sameSet(served, rec.judged.all()) ||
		rec.outcome == outViolation && subset(served, rec.judged.all()) {
		return r
	}
	a.merge.Rejudged++
	lenient, strict := a.judgeServed(rec, served)
	r.outcome, r.versions, r.served = lenient, served, true
	if lenient != strict {
		a.merge.Unknown++
	}
	switch {
	case rec.outcome == lenient:
	case rec.outcome == outViolation && lenient == outGrace:
		a.merge.ViolationsToGrace++
	case rec.outcome == outViolation:
		a.merge.ViolationsToProtective++
	case lenient == outViolation:
		a.merge.GraceToViolation++
	default:
		a.merge.GraceToProtective++
	}
	return r
}

// judgedScratch returns the record's judged_versions as strings.
func (a *Auditor) judgedScratch(rec *rawRecord) []string {
	a.judged = a.judged[:0]
	for _, v := range rec.judged.all() {
		a.judged = append(a.judged, a.fetches.internVersion(v))
	}
	return a.judged
}

// servedVersions returns the versions served to the record's crawler
// within the day before ns, on any instance, each once.
func (a *Auditor) servedVersions(rec *rawRecord, c *crawler, ns int64) []string {
	out := a.served[:0]
	addKey := func(k *serveKey) {
		if k == nil {
			return
		}
		for i := range k.entries {
			e := &k.entries[i]
			if e.covers(ns) && !slices.Contains(out, e.version) && len(out) < maxJudged {
				out = append(out, e.version)
			}
		}
	}
	x := &a.fetches
	site := siteOf(rec)
	if len(rec.agent) > 0 && c.creditable() && c.agentKey != "" {
		x.key = appendKey(x.key[:0], site, cut(rec.agent, MaxAgentLength))
		addKey(x.byToken[string(x.key)])
	}
	if rec.has&hasClientIP != 0 && len(rec.clientIP) > 0 {
		x.key = x.appendClient(appendSite(x.key[:0], site), rec.clientIP, rec.agent, rec.userAgent, rec.has&hasUserAgent != 0)
		addKey(x.byClient[string(x.key)])
	}
	if rec.servedRobots == triTrue {
		for _, v := range a.judged {
			if !slices.Contains(out, v) && len(out) < maxJudged {
				out = append(out, v)
			}
		}
	}
	a.served = out
	return out
}

// judgeServed judges the record's request against the versions served:
// its outcome with unknown readings counted as allowing (the report's),
// and as disallowing (to tell whether the outcome rests on them).
func (a *Auditor) judgeServed(rec *rawRecord, served []string) (lenient, strict outcome) {
	var rfc, google, rfcKnown, googleKnown bool
	for _, v := range served {
		r, g := a.readVersion(rec, v)
		rfc = rfc || r.allows()
		google = google || g.allows()
		rfcKnown = rfcKnown || r == knowAllows
		googleKnown = googleKnown || g == knowAllows
	}
	return outcomeOf(rfc, google), outcomeOf(rfcKnown, googleKnown)
}

func outcomeOf(rfcAllows, googleAllows bool) outcome {
	switch {
	case rfcAllows:
		return outGrace
	case googleAllows:
		return outProtective
	}
	return outViolation
}

// readVersion returns what version v says of the record's request, by
// RFC 9309's reading and Google's: from the record when the handler
// judged the request against v, else from v's text.
func (a *Auditor) readVersion(rec *rawRecord, v string) (rfc, google knowledge) {
	judged := rec.judged.all()
	in := slices.ContainsFunc(judged, func(j []byte) bool { return string(j) == v })
	switch {
	case in && rec.outcome == outViolation:
		return knowDenies, knowDenies
	case in && rec.outcome == outGrace && len(judged) == 1:
		return knowAllows, knowUnknown
	case v == VersionUnavailable:
		return knowAllows, knowAllows
	}
	vt, _ := a.opts.Texts.Text(v)
	if vt == nil {
		return knowUnknown, knowUnknown
	}
	j := judgeText(vt, string(cut(rec.agent, MaxAgentLength)), string(rec.uri), bindsWildcard(rec.reason))
	return j.rfc, j.google
}

// sameSet reports whether the versions vs and the record's list hold the
// same names.
func sameSet(vs []string, list [][]byte) bool {
	return subset(vs, list) && len(vs) == countDistinct(list)
}

// subset reports whether every version of vs is in list.
func subset(vs []string, list [][]byte) bool {
	for _, v := range vs {
		if !slices.ContainsFunc(list, func(j []byte) bool { return string(j) == v }) {
			return false
		}
	}
	return true
}

func countDistinct(list [][]byte) int {
	n := 0
	for i, v := range list {
		if !slices.ContainsFunc(list[:i], func(w []byte) bool { return bytes.Equal(v, w) }) {
			n++
		}
	}
	return n
}
