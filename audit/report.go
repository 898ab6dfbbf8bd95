package audit

import (
	"cmp"
	"slices"
	"time"
)

// Report is the outcome of an audit: what was read, and per crawler and
// host what it did. Its JSON form is the json output format.
type Report struct {
	// Filter is the filter the records passed.
	Filter ReportFilter `json:"filter"`
	// Inputs are the inputs read, in order.
	Inputs []InputStats `json:"inputs"`
	// Total counts the lines of all inputs.
	Total LineCounts `json:"total"`
	// Missing counts the counted records that lacked optional fields.
	Missing Missing `json:"missing"`
	// First and Last are the earliest and latest times of the counted
	// records.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// Buckets describes the time line of Crawler.Series.
	Buckets Timeline `json:"buckets"`
	// PathCounters is how many paths were counted per crawler (see
	// Crawler.TopPaths).
	PathCounters int `json:"path_counters"`
	// OnlyDenials tells that no allowed record was counted: the handler
	// records allowed requests only with log_allowed, so violation rates
	// are then 100% and mean nothing.
	OnlyDenials bool `json:"only_denials"`
	// Crawlers are the (agent, host) pairs, most violations first (then
	// most requests, then by agent and host); the pair OtherAgent at
	// OtherHost, which counts the pairs past Options.MaxCrawlers, last.
	Crawlers []Crawler `json:"crawlers"`
}

// ReportFilter is the Filter of a report, with times in UTC.
type ReportFilter struct {
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	Host  string    `json:"host,omitempty"`
	Agent string    `json:"agent,omitempty"`
}

// Missing counts records without the optional fields the audit reads
// (records of an older schema, or of an edited log). Time counts records
// without a time that could be read.
type Missing struct {
	Time               int64 `json:"ts"`
	Agent              int64 `json:"agent"`
	Host               int64 `json:"host"`
	URI                int64 `json:"uri"`
	Grace              int64 `json:"grace"`
	AgentFetchedRobots int64 `json:"agent_fetched_robots"`
	RobotsHash         int64 `json:"robots_hash"`
}

// Timeline is the layout of the time buckets: Count buckets of Seconds
// each from Start. It covers the counted records' times, and is empty
// without any.
type Timeline struct {
	Start   time.Time `json:"start,omitzero"`
	Seconds int64     `json:"seconds"`
	Count   int       `json:"count"`
}

// Width returns the width of a bucket.
func (t Timeline) Width() time.Duration { return time.Duration(t.Seconds) * time.Second }

// Crawler is what one agent did on one host.
type Crawler struct {
	// Agent is the product token, as first seen ("" when records named
	// none); agents are compared case-insensitively.
	Agent string `json:"agent"`
	// Host is the request's Host, as first seen.
	Host string `json:"host"`
	// Requests counts the records; Allowed and Denied split them by
	// verdict, Denied into Grace and Violations.
	Requests   int64 `json:"requests"`
	Allowed    int64 `json:"allowed"`
	Denied     int64 `json:"denied"`
	Grace      int64 `json:"grace"`
	Violations int64 `json:"violations"`
	// ViolationRate is Violations / Requests.
	ViolationRate float64 `json:"violation_rate"`
	// FetchedRobots tells that a record said the agent had fetched the
	// host's robots.txt (within the day before); FetchedBy is the time of
	// the first such record (zero when it had no time).
	FetchedRobots bool      `json:"fetched_robots"`
	FetchedBy     time.Time `json:"fetched_by,omitzero"`
	// FetchUnknown tells that none of its records had the field
	// agent_fetched_robots (an older record schema), so that whether it
	// fetched robots.txt is unknown.
	FetchUnknown bool `json:"fetch_unknown,omitempty"`
	// ViolationsAfterFetch counts the violations made after the agent had
	// fetched robots.txt.
	ViolationsAfterFetch int64 `json:"violations_after_fetch"`
	// FirstSeen and LastSeen are the times of its first and last record.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	// TopPaths are its most frequent violations' paths (without query),
	// most first.
	TopPaths []PathCount `json:"top_paths"`
	// PathsExact tells that TopPaths' counts are exact: the crawler had
	// fewer distinct paths than counters.
	PathsExact bool `json:"paths_exact"`
	// RobotsVersions are the robots.txt versions its records were judged
	// against, by count.
	RobotsVersions []VersionCount `json:"robots_versions"`
	// Series counts its records per time bucket (see Report.Buckets).
	Series Series `json:"series"`
}

// Series counts a crawler's records per time bucket, by verdict: the i-th
// element of each slice is the i-th bucket of Report.Buckets.
type Series struct {
	Allowed    []int64 `json:"allowed"`
	Violations []int64 `json:"violations"`
	Grace      []int64 `json:"grace"`
}

// At returns the counts of bucket i.
func (s *Series) At(i int) Bucket {
	return Bucket{Allowed: s.Allowed[i], Violations: s.Violations[i], Grace: s.Grace[i]}
}

// PathCount is a path and how many violations asked for it. The true count
// is between Count-Error and Count.
type PathCount struct {
	Path  string `json:"path"`
	Count int64  `json:"count"`
	Error int64  `json:"error,omitempty"`
}

// VersionCount is a robots.txt version (the record's robots_hash; "" for
// none or unknown) and how many records were judged against it.
type VersionCount struct {
	Hash  string `json:"hash"`
	Count int64  `json:"count"`
}

// Report returns the report of what was read so far.
func (a *Auditor) Report() *Report {
	f := a.opts.Filter
	r := &Report{
		Filter:  ReportFilter{Since: utc(f.Since), Until: utc(f.Until), Host: f.Host, Agent: f.Agent},
		Inputs:  slices.Clone(a.inputs),
		Total:   a.total,
		Missing: a.missing,

		PathCounters: a.opts.PathCounters,
	}
	if a.first != 0 {
		r.First, r.Last = time.Unix(0, a.first).UTC(), time.Unix(0, a.last).UTC()
	}
	lo, hi := 0, -1
	if a.tl.width != 0 {
		lo, hi = a.tl.used()
		r.Buckets = Timeline{Start: time.Unix(a.tl.origin+int64(lo)*a.tl.width, 0).UTC(), Seconds: a.tl.width, Count: hi - lo + 1}
	}
	var allowed int64
	for _, c := range a.pairs {
		r.Crawlers = append(r.Crawlers, a.crawlerReport(c, lo, hi))
		allowed += c.allowed
	}
	slices.SortFunc(r.Crawlers, func(x, y Crawler) int {
		return cmp.Or(
			cmp.Compare(y.Violations, x.Violations),
			cmp.Compare(y.Requests, x.Requests),
			cmp.Compare(x.Agent, y.Agent),
			cmp.Compare(x.Host, y.Host))
	})
	if a.other != nil {
		r.Crawlers = append(r.Crawlers, a.crawlerReport(a.other, lo, hi))
		allowed += a.other.allowed
	}
	r.OnlyDenials = len(r.Crawlers) > 0 && allowed == 0
	return r
}

func (a *Auditor) crawlerReport(c *crawler, lo, hi int) Crawler {
	out := Crawler{
		Agent:                c.agent,
		Host:                 c.host,
		Requests:             c.requests,
		Allowed:              c.allowed,
		Denied:               c.denied,
		Grace:                c.grace,
		Violations:           c.violations,
		ViolationRate:        float64(c.violations) / float64(c.requests),
		FetchedRobots:        c.fetchedAt != 0,
		FetchUnknown:         !c.fetchKnown,
		ViolationsAfterFetch: c.afterFetch,
		PathsExact:           true,
		TopPaths:             []PathCount{},
		RobotsVersions:       slices.Clone(c.versions),
	}
	if c.fetchedAt > 0 {
		out.FetchedBy = time.Unix(0, c.fetchedAt).UTC()
	}
	if c.first != 0 {
		out.FirstSeen, out.LastSeen = time.Unix(0, c.first).UTC(), time.Unix(0, c.last).UTC()
	}
	if c.paths != nil {
		out.TopPaths = c.paths.top(a.opts.TopPaths)
		out.PathsExact = c.paths.evicts == 0
	}
	slices.SortStableFunc(out.RobotsVersions, func(x, y VersionCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Hash, y.Hash))
	})
	n := max(hi-lo+1, 0)
	out.Series = Series{Allowed: make([]int64, n), Violations: make([]int64, n), Grace: make([]int64, n)}
	for i := range n {
		if c.series != nil {
			b := c.series[lo+i]
			out.Series.Allowed[i], out.Series.Violations[i], out.Series.Grace[i] = b.Allowed, b.Violations, b.Grace
		}
	}
	return out
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
