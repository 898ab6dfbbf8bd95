package audit

import (
	"bytes"
	"time"
)

// Limits of an Auditor, each with its reason.
const (
	// DefaultMaxCrawlers bounds the (agent, host) pairs counted apart: a
	// site sees a few hundred crawlers, over a few dozen hosts, while a
	// client that invents User-Agents must not grow memory without end.
	// Each pair costs at most some 30 KiB (its path counters full of paths
	// of MaxPathLength), about 300 MiB for all; a pair with only allowed
	// records, about 2 KiB.
	DefaultMaxCrawlers = 10000
	// DefaultPathCounters is how many paths each pair counts (see the
	// package documentation for the accuracy this gives).
	DefaultPathCounters = 64
	// DefaultTopPaths is how many disallowed paths a report lists per pair.
	DefaultTopPaths = 10
	// DefaultBuckets is how many time buckets the time line has: enough to
	// see a day hour by hour, few enough to draw each crawler small.
	DefaultBuckets = 48
	// MaxVersions is how many robots.txt versions are counted per pair,
	// the last of them standing for all those past the first
	// MaxVersions-1 (OtherVersions). A robots.txt rarely changes more than a
	// few times in the span of a log.
	MaxVersions = 16
	// MaxAgentLength, MaxHostLength and MaxPathLength cut the agents, hosts
	// and paths kept (longer ones are counted under their first octets):
	// product tokens are short, a DNS name is at most 253 octets, and a
	// path of 256 octets says where a crawler went.
	MaxAgentLength = 128
	MaxHostLength  = 260
	MaxPathLength  = 256
)

// The pair that counts every (agent, host) pair past Options.MaxCrawlers.
const (
	OtherAgent = "(other)"
	OtherHost  = "(other)"
)

// Filter restricts which records a report counts. Its zero value counts
// all.
type Filter struct {
	// Since and Until bound the records' times: Since inclusive, Until
	// exclusive; zero is no bound. With either, records without a time are
	// left out.
	Since, Until time.Time
	// Host keeps the records of one host, compared case-insensitively,
	// and without the port when Host has none: "example.com" keeps
	// "example.com:8443" too.
	Host string
	// Agent keeps the records of one product token, case-insensitively.
	Agent string
}

// Options configure an Auditor. Zero fields take their defaults.
type Options struct {
	Filter Filter
	// MaxCrawlers bounds the (agent, host) pairs counted apart; default
	// DefaultMaxCrawlers.
	MaxCrawlers int
	// PathCounters is how many paths each pair counts; default
	// DefaultPathCounters.
	PathCounters int
	// TopPaths is how many paths a report lists per pair, at most
	// PathCounters; default DefaultTopPaths.
	TopPaths int
	// Buckets is the time line's number of buckets; default
	// DefaultBuckets.
	Buckets int
}

// An Auditor reads compliance records and counts them per crawler and
// host. Read logs with Read or ReadFile, in any order, then call Report.
// An Auditor is not safe for concurrent use.
type Auditor struct {
	opts    Options
	since   int64 // Unix ns, 0 for none
	until   int64
	scan    scanner
	rec     rawRecord
	long    []byte // a line longer than the read buffer
	key     []byte
	pairs   map[string]*crawler
	other   *crawler
	tl      timeline
	total   LineCounts
	missing Missing
	inputs  []InputStats
	first   int64
	last    int64
}

// crawler holds the counts of one (agent, host) pair.
type crawler struct {
	agent, host string // as first seen
	requests    int64
	allowed     int64
	denied      int64
	grace       int64
	violations  int64
	afterFetch  int64
	fetchedAt   int64 // the first time a record said it had fetched; -1 when it had, without a time
	fetchKnown  bool  // a record had agent_fetched_robots
	first, last int64
	paths       *spaceSaving
	versions    []VersionCount
	series      []Bucket
}

// New returns an Auditor.
func New(opts Options) *Auditor {
	opts.MaxCrawlers = orDefault(opts.MaxCrawlers, DefaultMaxCrawlers)
	opts.PathCounters = orDefault(opts.PathCounters, DefaultPathCounters)
	opts.TopPaths = min(orDefault(opts.TopPaths, DefaultTopPaths), opts.PathCounters)
	opts.Buckets = orDefault(opts.Buckets, DefaultBuckets)
	a := &Auditor{opts: opts, pairs: make(map[string]*crawler)}
	if !opts.Filter.Since.IsZero() {
		a.since = opts.Filter.Since.UnixNano()
	}
	if !opts.Filter.Until.IsZero() {
		a.until = opts.Filter.Until.UnixNano()
	}
	a.tl.n = int64(opts.Buckets)
	return a
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// line reads one line, counting it in st.
func (a *Auditor) line(b []byte, st *LineCounts) {
	st.Lines++
	kind, ok := a.scan.parseLine(b, &a.rec)
	if !ok {
		st.skip(kind)
		return
	}
	st.Records++
	ns, timed := recordTime(&a.rec)
	if !a.keep(ns, timed) {
		st.Filtered++
		return
	}
	a.add(&a.rec, ns, timed)
}

// keep applies the filter.
func (a *Auditor) keep(ns int64, timed bool) bool {
	f := &a.opts.Filter
	if (a.since != 0 || a.until != 0) && !timed {
		return false
	}
	if a.since != 0 && ns < a.since || a.until != 0 && ns >= a.until {
		return false
	}
	if f.Agent != "" && !bytes.EqualFold(a.rec.agent, []byte(f.Agent)) {
		return false
	}
	return f.Host == "" || hostMatches(a.rec.host, f.Host)
}

// hostMatches compares a record's host with a filter's, ignoring the
// record's port when the filter names none.
func hostMatches(host []byte, filter string) bool {
	if bytes.EqualFold(host, []byte(filter)) {
		return true
	}
	if hasPort(filter) {
		return false
	}
	return hasPort(string(host)) && bytes.EqualFold(host[:bytes.LastIndexByte(host, ':')], []byte(filter))
}

// hasPort reports whether a Host value ends in a port: "h:1", "[::1]:1".
func hasPort(h string) bool {
	i := len(h) - 1
	for i >= 0 && isDigit(h[i]) {
		i--
	}
	if i < 0 || i == len(h)-1 || h[i] != ':' {
		return false
	}
	if h[0] == '[' {
		return i > 0 && h[i-1] == ']'
	}
	for j := range i { // a bare IPv6 address has no port
		if h[j] == ':' {
			return false
		}
	}
	return true
}

// add counts a record that passed the filter.
func (a *Auditor) add(rec *rawRecord, ns int64, timed bool) {
	a.countMissing(rec, timed)
	c := a.pair(rec.agent, rec.host)
	c.requests++
	fetched := rec.fetched == triTrue
	c.fetchKnown = c.fetchKnown || rec.has&hasFetched != 0
	deny := rec.verdict[0] == 'd'
	var kind int
	switch {
	case !deny:
		c.allowed++
		kind = 0
	case rec.grace == triTrue:
		c.denied++
		c.grace++
		kind = 2
	default:
		c.denied++
		c.violations++
		kind = 1
		if fetched {
			c.afterFetch++
		}
		if c.paths == nil {
			c.paths = newSpaceSaving(a.opts.PathCounters)
		}
		c.paths.add(pathOf(rec.uri))
	}
	c.version(rec.hash)
	if !timed {
		if fetched && c.fetchedAt == 0 {
			c.fetchedAt = -1
		}
		return
	}
	if fetched && (c.fetchedAt <= 0 || ns < c.fetchedAt) {
		c.fetchedAt = ns
	}
	if c.first == 0 || ns < c.first {
		c.first = ns
	}
	c.last = max(c.last, ns)
	if a.first == 0 || ns < a.first {
		a.first = ns
	}
	a.last = max(a.last, ns)
	i := a.tl.place(floorDiv(ns, int64(time.Second)), a.moveSeries)
	if c.series == nil {
		c.series = make([]Bucket, a.tl.n)
	}
	b := &c.series[i]
	switch kind {
	case 0:
		b.Allowed++
	case 1:
		b.Violations++
	default:
		b.Grace++
	}
}

func (a *Auditor) moveSeries(old, cur timeline) {
	for _, c := range a.pairs {
		if c.series != nil {
			c.series = remap(c.series, old, cur)
		}
	}
	if a.other != nil && a.other.series != nil {
		a.other.series = remap(a.other.series, old, cur)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// pair returns the counts of (agent, host), compared case-insensitively.
func (a *Auditor) pair(agent, host []byte) *crawler {
	agent, host = cut(agent, MaxAgentLength), cut(host, MaxHostLength)
	k := appendLower(a.key[:0], agent)
	k = append(k, 0)
	k = appendLower(k, host)
	a.key = k
	if c, ok := a.pairs[string(k)]; ok {
		return c
	}
	if len(a.pairs) >= a.opts.MaxCrawlers {
		if a.other == nil {
			a.other = &crawler{agent: OtherAgent, host: OtherHost}
		}
		return a.other
	}
	c := &crawler{agent: string(agent), host: string(host)}
	a.pairs[string(k)] = c
	return c
}

// version counts a record judged against the robots.txt of hash h.
func (c *crawler) version(h []byte) {
	for i := range c.versions {
		if string(c.versions[i].Hash) == string(h) {
			c.versions[i].Count++
			return
		}
	}
	if len(c.versions) < MaxVersions {
		c.versions = append(c.versions, VersionCount{Hash: string(h), Count: 1})
		return
	}
	c.versions[MaxVersions-1].Hash = OtherVersions
	c.versions[MaxVersions-1].Count++
}

// OtherVersions is the hash reported for the robots.txt versions past
// MaxVersions.
const OtherVersions = "(other)"

// pathOf returns the path of a request target, without its query, cut at
// MaxPathLength.
func pathOf(uri []byte) []byte {
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	return cut(uri, MaxPathLength)
}

func cut(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func appendLower(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func (a *Auditor) countMissing(rec *rawRecord, timed bool) {
	m := &a.missing
	if !timed {
		m.Time++
	}
	if rec.has&hasAgent == 0 {
		m.Agent++
	}
	if rec.has&hasHost == 0 {
		m.Host++
	}
	if rec.has&hasURI == 0 {
		m.URI++
	}
	if rec.has&hasGrace == 0 {
		m.Grace++
	}
	if rec.has&hasFetched == 0 {
		m.AgentFetchedRobots++
	}
	if rec.has&hasHash == 0 {
		m.RobotsHash++
	}
}
