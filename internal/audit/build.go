package audit

import (
	"cmp"
	"slices"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// Report returns the report of what was read so far.
func (a *Auditor) Report() *Report {
	f := a.opts.Filter
	r := &Report{
		Filter:  ReportFilter{Since: utc(f.Since), Until: utc(f.Until), Host: f.Host, Agent: f.Agent, Mode: f.Mode},
		Inputs:  slices.Clone(a.inputs),
		Total:   a.total,
		Missing: a.missing,
		Legacy:  a.legacy,
		Fetches: FetchStats{Serves: a.fetches.lines, Dropped: a.fetches.dropped},

		PathCounters:  a.opts.PathCounters,
		Crawlers:      []Crawler{},
		Forgeries:     []Crawler{},
		UserTriggered: []Crawler{},
		Merge:         a.mergeReport(),
	}
	if a.first != 0 {
		r.First, r.Last = time.Unix(0, a.first).UTC(), time.Unix(0, a.last).UTC()
	}
	lo, hi := 0, -1
	if a.tl.width != 0 {
		lo, hi = a.tl.used()
		r.Buckets = Timeline{Start: time.Unix(a.tl.origin+int64(lo)*a.tl.width, 0).UTC(), Seconds: a.tl.width, Count: hi - lo + 1}
	}
	var rows, forged []*crawler
	var allowed, requests int64
	for _, c := range a.pairs {
		if c.identity == IdentityForged {
			forged = append(forged, c)
		} else {
			rows = append(rows, c)
		}
		allowed += c.allowed
		requests += c.requests
	}
	sortRows(rows)
	slices.SortFunc(forged, func(x, y *crawler) int {
		return cmp.Or(cmp.Compare(y.requests, x.requests), cmp.Compare(x.agent, y.agent), cmp.Compare(x.host, y.host))
	})
	if a.other != nil {
		rows = append(rows, a.other)
		allowed += a.other.allowed
		requests += a.other.requests
	}
	if a.forged != nil {
		forged = append(forged, a.forged)
		allowed += a.forged.allowed
		requests += a.forged.requests
	}
	for _, c := range rows {
		if c.userTriggered {
			r.UserTriggered = append(r.UserTriggered, a.crawlerReport(c, lo, hi))
		} else {
			r.Crawlers = append(r.Crawlers, a.crawlerReport(c, lo, hi))
		}
	}
	for _, c := range forged {
		r.Forgeries = append(r.Forgeries, a.crawlerReport(c, lo, hi))
	}
	for _, c := range append(rows, forged...) {
		if c.clientsMore {
			r.Fetches.RowsPastIPs++
		}
	}
	for _, rs := range [][]Crawler{r.Crawlers, r.Forgeries, r.UserTriggered} {
		for i := range rs {
			if rs[i].afterFetchBound {
				r.Fetches.RowsPastTimes++
			}
		}
	}
	r.OnlyDenials = requests > 0 && allowed == 0
	r.Escalations, r.EscalationStats = a.esc.report()
	return r
}

// identityOrder ranks the identities of one crawler's rows.
func identityOrder(id string) int {
	switch id {
	case IdentityVerified:
		return 0
	case IdentityUnverified:
		return 1
	case IdentityPending:
		return 2
	case IdentityUnconfirmed:
		return 3
	case IdentityNone:
		return 4
	}
	return 5
}

// sortRows sorts rows by group (agent and site): groups with most
// violations first, then most requests, then by agent and site; within a
// group by identity.
func sortRows(rows []*crawler) {
	type totals struct{ violations, requests int64 }
	groups := make(map[[2]string]*totals)
	type row struct {
		c *crawler
		g *totals
	}
	sorted := make([]row, len(rows))
	for i, c := range rows {
		k := [2]string{c.agentKey, c.hostKey}
		g := groups[k]
		if g == nil {
			g = &totals{}
			groups[k] = g
		}
		g.violations += c.violations
		g.requests += c.requests
		sorted[i] = row{c, g}
	}
	slices.SortFunc(sorted, func(x, y row) int {
		return cmp.Or(
			cmp.Compare(y.g.violations, x.g.violations),
			cmp.Compare(y.g.requests, x.g.requests),
			cmp.Compare(x.c.agentKey, y.c.agentKey),
			cmp.Compare(x.c.hostKey, y.c.hostKey),
			cmp.Compare(identityOrder(x.c.identity), identityOrder(y.c.identity)),
			cmp.Compare(x.c.identity, y.c.identity))
	})
	for i := range sorted {
		rows[i] = sorted[i].c
	}
}

func (a *Auditor) crawlerReport(c *crawler, lo, hi int) Crawler {
	out := Crawler{
		Agent:                c.agent,
		Identity:             c.identity,
		IdentityMethods:      c.methods.list(),
		Host:                 c.host,
		Mode:                 c.modes.String(),
		Requests:             c.requests,
		Allowed:              c.allowed,
		Denied:               c.violations + c.protective + c.grace,
		Violations:           c.violations,
		Protective:           c.protective,
		Grace:                c.grace,
		ViolationRate:        float64(c.violations) / float64(c.requests),
		ViolationsAfterFetch: c.afterFetch,
		ClientIPs:            c.clientIPs(),
		ClientIPsMore:        c.clientsMore,
		PathsExact:           true,
		TopPaths:             []PathCount{},
		RobotsVersions:       sortedVersions(c.versions),
		JudgedVersions:       sortedVersions(c.judged),
		FetcherClass:         record.FetcherCrawler,
		Detail:               a.detailOf(c),
	}
	if c.userTriggered {
		out.FetcherClass = record.FetcherUserTriggered
	}
	link, at, fetched := a.fetches.link(c)
	later, exact := c.afterFetchAt(at)
	out.ViolationsAfterFetch += later
	out.afterFetchBound = !exact
	out.FetchedRobots = fetched
	out.FetchedLink = link.String()
	out.FetchUnknown = !fetched && !c.fetchKnown
	if at > 0 {
		out.FetchedBy = time.Unix(0, at).UTC()
	}
	if c.first != 0 {
		out.FirstSeen, out.LastSeen = time.Unix(0, c.first).UTC(), time.Unix(0, c.last).UTC()
	}
	if c.paths != nil {
		out.TopPaths = c.paths.top(a.opts.TopPaths)
		out.PathsExact = c.paths.evicts == 0
	}
	n := max(hi-lo+1, 0)
	s := Series{Allowed: make([]int64, n), Violations: make([]int64, n), Grace: make([]int64, n), Protective: make([]int64, n)}
	for i := range n {
		if c.series != nil {
			b := c.series[lo+i]
			s.Allowed[i], s.Violations[i], s.Grace[i], s.Protective[i] = b.Allowed, b.Violations, b.Grace, b.Protective
		}
	}
	out.Series = s
	return out
}

// sortedVersions returns the versions by count, most first, then by hash.
func sortedVersions(vs []VersionCount) []VersionCount {
	out := slices.Clone(vs)
	if out == nil {
		out = []VersionCount{}
	}
	slices.SortStableFunc(out, func(x, y VersionCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Hash, y.Hash))
	})
	return out
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// mergeReport returns what the two passes changed, and the texts read.
func (a *Auditor) mergeReport() MergeStats {
	m := a.merge
	m.Merged = a.merged
	m.Instances = slices.Clone(a.instances.names)
	if m.Instances == nil {
		m.Instances = []string{}
	}
	slices.Sort(m.Instances)
	m.DuplicatesUnchecked = a.dups.unchecked
	m.Texts = a.opts.Texts.stats()
	return m
}
