package audit

import (
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// Limits of an Auditor, each with its reason.
const (
	// DefaultMaxCrawlers bounds the rows (agent, site, identity) counted
	// apart: a site sees a few hundred crawlers, over a few dozen sites,
	// while a client that invents User-Agents must not grow memory without
	// end. Each row costs at most some 45 KiB (its path counters full of
	// paths of MaxPathLength, MaxClientIPs addresses and
	// MaxViolationTimes times), about 450 MiB for all; a row with only
	// allowed records, about 2 KiB.
	DefaultMaxCrawlers = 10000
	// DefaultPathCounters is how many paths each row counts (see the
	// package documentation for the accuracy this gives).
	DefaultPathCounters = 64
	// DefaultTopPaths is how many disallowed paths a report lists per row.
	DefaultTopPaths = 10
	// DefaultBuckets is how many time buckets the time line has: enough to
	// see a day hour by hour, few enough to draw each crawler small.
	DefaultBuckets = 48
	// MaxVersions is how many robots.txt versions are counted per row,
	// the last of them standing for all those past the first
	// MaxVersions-1 (OtherVersions). A robots.txt rarely changes more than a
	// few times in the span of a log.
	MaxVersions = 16
	// MaxAgentLength, MaxHostLength and MaxPathLength cut the agents,
	// sites and paths kept (longer ones are counted under their first
	// octets): product tokens are short, a DNS name is at most 253 octets
	// (a site adds a scheme and a port), and a path of 256 octets says
	// where a crawler went.
	MaxAgentLength = 128
	MaxHostLength  = 270
	MaxPathLength  = 256
	// MaxClientIPs is how many clients a row keeps to link robots.txt
	// fetches to it by client: a client is an address (with, for a row
	// without a product token, a User-Agent), and a crawler of a few
	// addresses is the case that needs it: one that crawls from many
	// has most likely proved its token. Past it, a fetch by a client
	// links only when it was read before the row's first record from that
	// client (Report.Fetches.RowsPastIPs counts such rows).
	MaxClientIPs = 64
	// MaxFetchKeys bounds the robots.txt serves kept for linking, by
	// (site, client) and by (site, credited token) together: a site's
	// robots.txt is fetched by a few thousand clients a day, each kept
	// under a few keys (its tokens and its User-Agent). Serves past it are
	// counted in Report.Fetches.Dropped and link nothing.
	MaxFetchKeys = 200000
	// MaxViolationTimes is how many times of violations whose record shows
	// no robots.txt fetch a row keeps, to count those made after a fetch
	// that another log shows (a serve linked by token or client): 8 KiB a
	// row.
	// Past it, the count is exact when the row's first fetch came before
	// its first such violation or after its last, and otherwise counts
	// among the times kept, a lower bound (Report.Fetches.RowsPastTimes
	// counts such rows).
	MaxViolationTimes = 1024
	// maxIdentityLength cuts an identity value the audit does not know.
	maxIdentityLength = 32
)

// The row that counts every row past Options.MaxCrawlers (and, with
// identity forged, every forgery past it).
const (
	OtherAgent = "(other)"
	OtherHost  = "(other)"
)

// Options configure an Auditor. Zero fields take their defaults.
type Options struct {
	Filter Filter
	// MaxCrawlers bounds the rows counted apart; default
	// DefaultMaxCrawlers.
	MaxCrawlers int
	// PathCounters is how many paths each row counts; default
	// DefaultPathCounters.
	PathCounters int
	// TopPaths is how many paths a report lists per row, at most
	// PathCounters; default DefaultTopPaths.
	TopPaths int
	// Buckets is the time line's number of buckets; default
	// DefaultBuckets.
	Buckets int
	// MaxEscalations bounds the escalations kept (see Escalation);
	// default DefaultMaxEscalations.
	MaxEscalations int
	// MaxRequests is how many violating requests each row lists (see
	// Crawler.ViolatingRequests); default DefaultMaxRequests.
	MaxRequests int
	// ListGrace lists each row's grace denials too, as many as its
	// violations (Crawler.GraceRequests): the evidence's.
	ListGrace bool
	// Texts holds the robots.txt versions' texts that the merged
	// re-judgement reads (see ReadInputs); nil for none.
	Texts *Texts
}

// An Auditor reads compliance records and robots.txt serves and counts
// them per crawler, site and identity. Read logs with Read or ReadFile, in
// any order and interleaved in time as they may be, then call Report. An
// Auditor is not safe for concurrent use.
type Auditor struct {
	opts    Options
	since   int64 // Unix ns, 0 for none
	until   int64
	scan    scanner
	rec     rawRecord
	long    []byte // a line longer than the read buffer
	key     []byte
	pairs   map[string]*crawler
	other   *crawler // the rows past MaxCrawlers
	forged  *crawler // the forgeries past MaxCrawlers
	fetches fetchIndex
	esc     escalations
	tl      timeline
	total   LineCounts
	missing Missing
	legacy  Legacy
	inputs  []InputStats
	first   int64
	last    int64

	instances     instanceTable
	inputName     string // the log being read, the instance of lines without one
	inputInstance uint32
	inputNumbered bool

	// The second of two passes (ReadInputs): the serves were read in the
	// first, and each denial is judged again against them.
	merged        bool
	dups          duplicates
	maxDuplicates int // MaxDuplicateChecks; less in tests
	merge         MergeStats
	judged        []string // scratch of rejudge
	served        []string
}

// New returns an Auditor.
func New(opts Options) *Auditor {
	opts.MaxCrawlers = orDefault(opts.MaxCrawlers, DefaultMaxCrawlers)
	opts.PathCounters = orDefault(opts.PathCounters, DefaultPathCounters)
	opts.TopPaths = min(orDefault(opts.TopPaths, DefaultTopPaths), opts.PathCounters)
	opts.Buckets = orDefault(opts.Buckets, DefaultBuckets)
	opts.MaxEscalations = orDefault(opts.MaxEscalations, DefaultMaxEscalations)
	opts.MaxRequests = orDefault(opts.MaxRequests, DefaultMaxRequests)
	a := &Auditor{opts: opts, pairs: make(map[string]*crawler), fetches: newFetchIndex(), esc: newEscalations(opts.MaxEscalations), maxDuplicates: MaxDuplicateChecks}
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
	rec := &a.rec
	ns, timed := recordTime(rec)
	if rec.served {
		st.Fetches++
		if !a.keepServed(rec, ns, timed) {
			st.FetchesFiltered++
			return
		}
		if !a.merged { // the first pass kept it
			a.fetches.add(rec, ns, timed, a.instanceOf(rec))
		}
		return
	}
	st.Records++
	if !a.keep(rec, ns, timed) {
		st.Filtered++
		return
	}
	inst := a.instanceOf(rec)
	if a.merged && rec.outcome != outAllowed && timed && a.dups.duplicate(rec, ns, inst) {
		st.Duplicates++
		a.merge.Duplicates++
		return
	}
	a.add(rec, ns, timed, inst)
}

// add counts a decision record that passed the filter, written by
// instance inst.
func (a *Auditor) add(rec *rawRecord, ns int64, timed bool, inst uint32) {
	a.countMissing(rec, timed)
	c := a.row(rec)
	if rec.has&hasFetcherClass != 0 && string(rec.fetcherClass) == record.FetcherUserTriggered {
		c.userTriggered = true
	}
	recorded := rec.outcome
	var rj rejudgement
	if a.merged {
		rj = a.rejudge(rec, c, ns, timed)
		rec.outcome = rj.outcome
	} else {
		rj = rejudgement{outcome: rec.outcome, versions: a.judgedScratch(rec), served: rec.servedRobots == triTrue}
	}
	c.count(rec, a.opts.PathCounters, rj.versions)
	a.addDetail(c, rec, ns, timed, inst, &rj, recorded)
	if rec.has&hasClientIP != 0 && len(rec.clientIP) > 0 {
		hasUA := rec.has&hasUserAgent != 0
		a.key = a.fetches.appendRowClient(a.key[:0], rec.clientIP, rec.agent, rec.userAgent, hasUA)
		if c.addClient(a.key) {
			// A client past MaxClientIPs: link what is known of it now.
			a.key = a.fetches.appendClient(a.key[:0], rec.clientIP, rec.agent, rec.userAgent, hasUA)
			if t, ok := servedTo(&a.fetches, c.hostKey, a.key); ok {
				c.lateClient = earliest(c.lateClient, t, c.lateClientKnown)
				c.lateClientKnown = true
			}
		}
	}
	if rec.has&hasEscalation != 0 && len(rec.escalation) > 0 {
		a.esc.add(rec, ns, timed, a.instances.name(inst))
	}
	fetched := c.fetchEvidence(rec, ns, timed)
	if rec.outcome == outViolation {
		switch {
		case fetched:
			c.afterFetch++
		case timed:
			c.unfetched(ns)
		}
	}
	if !timed {
		return
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
	switch rec.outcome {
	case outAllowed:
		b.Allowed++
	case outViolation:
		b.Violations++
	case outGrace:
		b.Grace++
	default:
		b.Protective++
	}
}

func (a *Auditor) moveSeries(old, cur timeline) {
	for _, c := range a.pairs {
		if c.series != nil {
			c.series = remap(c.series, old, cur)
		}
	}
	for _, c := range []*crawler{a.other, a.forged} {
		if c != nil && c.series != nil {
			c.series = remap(c.series, old, cur)
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

func (a *Auditor) countMissing(rec *rawRecord, timed bool) {
	m := &a.missing
	if !timed {
		m.Time++
	}
	if rec.has&hasAgent == 0 {
		m.Agent++
	}
	if rec.has&hasHost == 0 && rec.has&hasSite == 0 {
		m.Host++
	}
	if rec.has&hasURI == 0 {
		m.URI++
	}
	if rec.has&hasGrace == 0 {
		m.Grace++
	}
	if rec.has&(hasFetched|hasServedRobots) == 0 {
		m.AgentFetchedRobots++
	}
	if rec.has&hasHash == 0 {
		m.RobotsHash++
	}
	if rec.has&hasCompliance == 0 {
		m.Compliance++
		if rec.outcome != outAllowed {
			a.legacy.Denials++
			if rec.outcome == outViolation {
				a.legacy.Violations++
			}
			if rec.has&hasGrace == 0 {
				a.legacy.WithoutGrace++
			}
		}
	}
	if rec.has&hasMode == 0 {
		m.Mode++
	}
}
