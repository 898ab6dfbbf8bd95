package audit

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// maxFetchesListed bounds the fetches a row lists: a crawler fetching
// robots.txt from a few addresses through a few instances, a few versions
// a day, has a few dozen (Fetch groups a version's serves by instance and
// client).
const maxFetchesListed = 64

// detailOf returns the report's detail of row c.
func (a *Auditor) detailOf(c *crawler) Detail {
	d := Detail{ClientAddresses: []AddressCount{}, UserAgents: []UserAgentCount{}, ViolatingRequests: []Request{}}
	d.ClientAddresses = append(d.ClientAddresses, c.detail.addresses()...)
	slices.SortFunc(d.ClientAddresses, func(x, y AddressCount) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.Address, y.Address))
	})
	if c.detail.uas != nil {
		for _, p := range c.detail.uas.top(maxUserAgents) {
			d.UserAgents = append(d.UserAgents, UserAgentCount{UserAgent: p.Path, Requests: p.Count, Error: p.Error})
		}
	}
	for _, e := range c.detail.violations.sorted() {
		d.ViolatingRequests = append(d.ViolatingRequests, e.report())
	}
	d.ViolatingRequestsMore = c.detail.violations.more
	if a.opts.ListGrace {
		d.GraceRequests = []Request{}
		for _, e := range c.detail.grace.sorted() {
			d.GraceRequests = append(d.GraceRequests, e.report())
		}
		d.GraceRequestsMore = c.detail.grace.more
	}
	d.RobotsFetches, d.RobotsFetchesMore = a.fetchesOf(c, maxFetchesListed)
	return d
}

// report returns the entry as a report lists it.
func (e *requestEntry) report() Request {
	r := Request{
		Instance: e.instance, Method: e.method, Target: e.target, TargetCut: e.targetCut,
		ClientIP: e.clientIP, UserAgent: e.userAgent, Reason: e.reason, Rule: e.rule, RuleLine: e.ruleLine, RobotsHash: e.hash,
		JudgedVersions: e.versions, Served: e.served,
		Recorded: outcomeName(e.recorded), Compliance: outcomeName(e.counted),
	}
	if r.JudgedVersions == nil {
		r.JudgedVersions = []string{}
	}
	if e.ns != math.MaxInt64 {
		r.Time = time.Unix(0, e.ns).UTC()
	}
	return r
}

// outcomeName names an outcome as records do.
func outcomeName(o outcome) string {
	switch o {
	case outAllowed:
		return record.Allowed
	case outViolation:
		return record.Violation
	case outGrace:
		return record.GraceValue
	}
	return record.Protective
}

// fetchesOf returns the robots.txt serves linked to row c, earliest
// first, at most limit, and how many more there were: those credited to
// its product token, when its identity lets them count, and those made by
// its clients.
func (a *Auditor) fetchesOf(c *crawler, limit int) ([]Fetch, int) {
	out := []Fetch{}
	x := &a.fetches
	addKey := func(k *serveKey, link, ip string) {
		if k == nil {
			return
		}
		for _, e := range k.entries {
			f := Fetch{Count: e.count, Instance: a.instances.name(e.instance), ClientIP: ip, Version: e.version, Link: link}
			if ip == "" {
				f.ClientIP = e.client
			}
			if e.first >= 0 {
				f.First, f.Last = time.Unix(0, e.first).UTC(), time.Unix(0, e.last).UTC()
			}
			out = append(out, f)
		}
	}
	if c.agentKey != "" && c.creditable() {
		x.key = appendKey(x.key[:0], c.hostKey, c.agentKey)
		addKey(x.byToken[string(x.key)], record.LinkToken, "")
	}
	for k := range c.clients {
		ip, rest := splitClient(k)
		x.key = append(appendSite(x.key[:0], c.hostKey), k...)
		if rest == string(clientByToken) {
			if c.agentKey == "" {
				continue
			}
			x.key = append(x.key, c.agentKey...)
		}
		addKey(x.byClient[string(x.key)], record.LinkClient, ip)
	}
	// A serve both credited to the token and made by one of the row's
	// clients is listed once, as the client's.
	slices.SortFunc(out, func(p, q Fetch) int { return cmp.Compare(p.Link, q.Link) }) // client first
	seen := make(map[Fetch]bool, len(out))
	kept := out[:0]
	for _, f := range out {
		k := f
		k.Link = ""
		if !seen[k] {
			seen[k] = true
			kept = append(kept, f)
		}
	}
	out = kept
	slices.SortFunc(out, func(p, q Fetch) int {
		return cmp.Or(cmp.Compare(untimed(p.First), untimed(q.First)), p.First.Compare(q.First),
			cmp.Compare(p.Version, q.Version), cmp.Compare(p.Instance, q.Instance), cmp.Compare(p.ClientIP, q.ClientIP), cmp.Compare(p.Link, q.Link))
	})
	if len(out) > limit {
		return out[:limit], len(out) - limit
	}
	return out, 0
}

// untimed is 1 for a zero time, which sorts last.
func untimed(t time.Time) int {
	if t.IsZero() {
		return 1
	}
	return 0
}
