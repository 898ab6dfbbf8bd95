package audit

import (
	"bytes"
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// crawler holds the counts of one row: an agent, on one site (or host),
// with one identity.
type crawler struct {
	agent, host string // as recorded: of the spellings seen, the least
	agentKey    string // lower-case, to link robots.txt serves
	hostKey     string
	identity    string // IdentityNone for none
	modes       modeSet
	methods     methodSet

	requests   int64
	allowed    int64
	violations int64
	grace      int64
	protective int64
	afterFetch int64

	// Evidence of a robots.txt fetch in the records themselves.
	fetchedAt  int64 // the earliest; -1 when one had no time; 0 none
	recordLink linkKind
	fetchKnown bool // a record said whether it had fetched

	// Times of violations whose record shows no fetch, to count those
	// made after a fetch that only the serves show.
	unlinked     []int64
	unlinkedN    int64 // how many there were
	unlinkedMore bool  // more than MaxViolationTimes
	unlinkedMin  int64 // the earliest and latest of all of them
	unlinkedMax  int64

	// Clients (keys of appendRowClient), for linking robots.txt serves
	// by client.
	clients         map[string]struct{}
	clientsMore     bool  // more than MaxClientIPs
	lateClient      int64 // a serve linked by a client past MaxClientIPs
	lateClientKnown bool

	first, last int64
	paths       *spaceSaving
	versions    []VersionCount
	judged      []VersionCount
	series      []Bucket

	detail rowDetail
	// userTriggered: a record said the client is a user-triggered
	// fetcher (fetcher_class).
	userTriggered bool
}

// Identities of a row, as the record's identity field names them; a
// record without one (a client that claims no product token, a handler
// that verifies no one, or a record of version 1) counts as IdentityNone.
const (
	IdentityVerified    = "verified"
	IdentityUnverified  = "unverified"
	IdentityPending     = "pending"
	IdentityUnconfirmed = "unconfirmed"
	IdentityForged      = "forged"
	IdentityNone        = "none"
)

// modeSet is the modes a row's records were written in.
type modeSet uint8

const (
	modeEnforce modeSet = 1 << iota
	modeLog
)

// String writes the modes as the report shows them: "enforce", "log",
// "enforce+log", or "" for none recorded.
func (m modeSet) String() string {
	switch m {
	case modeEnforce:
		return "enforce"
	case modeLog:
		return "log"
	case modeEnforce | modeLog:
		return "enforce+log"
	}
	return ""
}

// methodSet is the identity methods that decided a row's records.
type methodSet uint8

var methodNames = [...]string{"ip_ranges", "reverse_dns", "web_bot_auth"}

func (m methodSet) list() []string {
	var out []string
	for i, name := range methodNames {
		if m&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// linkKind is how a robots.txt fetch was tied to a row; a larger value is
// more direct evidence: the client itself fetched it, rather than a client
// that proved (or could not prove) the same token.
type linkKind uint8

const (
	linkNone   linkKind = iota
	linkToken           // a fetch credited the product token
	linkClient          // the same client fetched it
)

// String names a link as records and reports do: "token", "client", or
// "" for none.
func (l linkKind) String() string {
	switch l {
	case linkToken:
		return record.LinkToken
	case linkClient:
		return record.LinkClient
	}
	return ""
}

var (
	modeEnforceText = []byte("enforce")
	modeLogText     = []byte("log")
	linkTokenText   = []byte(record.LinkToken)
	linkClientText  = []byte(record.LinkClient)
)

// row returns the counts of the record's agent, site (or host) and
// identity, compared case-insensitively.
func (a *Auditor) row(rec *rawRecord) *crawler {
	agent, host := cut(rec.agent, MaxAgentLength), siteOf(rec)
	id := cut(rec.identity, maxIdentityLength)
	k := appendLower(a.key[:0], agent)
	k = append(k, 0)
	na := len(k)
	k = appendLower(k, host)
	nh := len(k)
	k = append(k, 0)
	k = appendLower(k, id)
	a.key = k
	if c, ok := a.pairs[string(k)]; ok {
		// Keep the least spelling, so that the report does not depend on
		// the order the logs are read in.
		if string(agent) != c.agent && string(agent) < c.agent {
			c.agent = string(agent)
		}
		if string(host) != c.host && string(host) < c.host {
			c.host = string(host)
		}
		return c
	}
	if len(a.pairs) >= a.opts.MaxCrawlers {
		// Forgeries stay apart from crawlers even here.
		other, id := &a.other, IdentityNone
		if identityOf(k[nh+1:]) == IdentityForged {
			other, id = &a.forged, IdentityForged
		}
		if *other == nil {
			*other = &crawler{agent: OtherAgent, host: OtherHost, identity: id}
		}
		return *other
	}
	c := &crawler{
		agent: string(agent), host: string(host),
		agentKey: string(k[:na-1]), hostKey: string(k[na:nh]),
		identity: identityOf(k[nh+1:]),
	}
	a.pairs[string(k)] = c
	return c
}

// siteOf returns the site of a line, the origin whose robots.txt applies,
// or, for a record without one (version 1), its Host; cut at
// MaxHostLength.
func siteOf(rec *rawRecord) []byte {
	host := rec.host
	if rec.has&hasSite != 0 && len(rec.site) > 0 {
		host = rec.site
	}
	return cut(host, MaxHostLength)
}

// identityOf names a lower-case identity value.
func identityOf(id []byte) string {
	switch string(id) {
	case "":
		return IdentityNone
	case IdentityVerified:
		return IdentityVerified
	case IdentityUnverified:
		return IdentityUnverified
	case IdentityPending:
		return IdentityPending
	case IdentityUnconfirmed:
		return IdentityUnconfirmed
	case IdentityForged, "replayed":
		// A replayed signature is a claim that failed its proof, as a
		// forged one is: the forgeries, never the agent's row.
		return IdentityForged
	}
	return string(id)
}

// count adds a record's outcome, mode, method, paths and versions; judged
// are the versions a violation was judged against.
func (c *crawler) count(rec *rawRecord, pathCounters int, judged []string) {
	c.requests++
	switch rec.outcome {
	case outAllowed:
		c.allowed++
	case outGrace:
		c.grace++
	case outProtective:
		c.protective++
	case outViolation:
		c.violations++
		if c.paths == nil {
			c.paths = newSpaceSaving(pathCounters)
		}
		c.paths.add(pathOf(rec.uri, rec.rule))
		c.judged = countJudged(c.judged, judged)
	}
	switch {
	case bytes.Equal(rec.mode, modeEnforceText):
		c.modes |= modeEnforce
	case bytes.Equal(rec.mode, modeLogText):
		c.modes |= modeLog
	}
	if len(rec.method) > 0 {
		for i, name := range methodNames {
			if string(rec.method) == name {
				c.methods |= 1 << i
			}
		}
	}
	c.versions = countVersion(c.versions, rec.hash)
}

// unfetched notes the time of a violation whose record shows no fetch.
func (c *crawler) unfetched(ns int64) {
	c.unlinkedN++
	if c.unlinkedMin == 0 || ns < c.unlinkedMin {
		c.unlinkedMin = ns
	}
	c.unlinkedMax = max(c.unlinkedMax, ns)
	if len(c.unlinked) < MaxViolationTimes {
		c.unlinked = append(c.unlinked, ns)
		return
	}
	c.unlinkedMore = true
}

// afterFetchAt returns how many of the violations whose record shows no
// fetch were made at or after at, a fetch's time (Unix ns; -1 or 0 for
// none known), and whether the count is exact. Past MaxViolationTimes it
// counts all of them when at is before the first, none when it is after
// the last, and among the times kept otherwise (a lower bound).
func (c *crawler) afterFetchAt(at int64) (int64, bool) {
	if at <= 0 || c.unlinkedN == 0 || at > c.unlinkedMax {
		return 0, true
	}
	if at <= c.unlinkedMin {
		return c.unlinkedN, true
	}
	slices.Sort(c.unlinked)
	i, _ := slices.BinarySearch(c.unlinked, at)
	return int64(len(c.unlinked) - i), !c.unlinkedMore
}

// addClient adds a client (a key of appendRowClient) to the row's set. It
// reports true when the client is new and the set is full, so that it is
// not kept.
func (c *crawler) addClient(key []byte) bool {
	if _, ok := c.clients[string(key)]; ok {
		return false
	}
	if len(c.clients) >= MaxClientIPs {
		c.clientsMore = true
		return true
	}
	if c.clients == nil {
		c.clients = make(map[string]struct{}, 4)
	}
	c.clients[string(key)] = struct{}{}
	return false
}

// clientIPs counts the distinct addresses of the clients kept.
func (c *crawler) clientIPs() int {
	if c.agentKey != "" {
		return len(c.clients) // one client per address: the row's token
	}
	seen := make(map[string]struct{}, len(c.clients))
	for k := range c.clients {
		ip, _ := splitClient(k)
		seen[ip] = struct{}{}
	}
	return len(seen)
}

// creditable reports whether a fetch credited to the row's product token
// may count as the row's own: its requests proved the token (verified),
// or no method could prove it (unverified), or no claim was checked
// (none). A forged, pending or unconfirmed claim may be anyone's.
func (c *crawler) creditable() bool {
	switch c.identity {
	case IdentityVerified, IdentityUnverified, IdentityNone:
		return true
	}
	return false
}

// fetchEvidence notes what the record says about a robots.txt fetch, and
// reports whether it ties a fetch to the crawler: served_robots with
// served_link "client", or "token" when the row may be credited with its
// token's fetches (record versions 2 and 3); agent_fetched_robots, kept
// by token, before. A version 2 link "ip" (any client at the address) ties
// nothing, nor does a link the audit does not know.
func (c *crawler) fetchEvidence(rec *rawRecord, ns int64, timed bool) bool {
	var link linkKind
	switch {
	case rec.has&hasServedRobots != 0:
		c.fetchKnown = true
		if rec.servedRobots != triTrue {
			return false
		}
		switch {
		case bytes.Equal(rec.servedLink, linkClientText):
			link = linkClient
		case bytes.Equal(rec.servedLink, linkTokenText) && c.creditable():
			link = linkToken
		default:
			return false
		}
		if t, ok := numericTime(rec.servedAt); ok && rec.has&hasServedAt != 0 {
			ns, timed = t, true
		}
	case rec.has&hasFetched != 0:
		c.fetchKnown = true
		if rec.fetched != triTrue || !c.creditable() {
			return false
		}
		link = linkToken
	default:
		return false
	}
	c.recordLink = max(c.recordLink, link)
	if !timed {
		ns = -1
	}
	c.fetchedAt = earliest(c.fetchedAt, ns, c.fetchedAt != 0)
	return true
}

// earliest returns the earlier of two fetch times (Unix ns, -1 for a fetch
// without a time), of which old counts only when known.
func earliest(old, t int64, known bool) int64 {
	switch {
	case !known || old == -1:
		return t
	case t == -1:
		return old
	}
	return min(old, t)
}

// pathOf returns what a violation's path is counted as: the request
// target without its query, cut at MaxPathLength; with its query when the
// deciding rule's pattern holds a "?", since the query is then what the
// rule disallows ("Disallow: /*?sessionid=").
func pathOf(uri, rule []byte) []byte {
	if i := bytes.IndexByte(uri, '?'); i >= 0 && bytes.IndexByte(rule, '?') < 0 {
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

func appendLower[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Proven says who a row is and how that was proven: "verified by
// ip_ranges", "unverified: no method could check the claim".
func (c *Crawler) Proven() string {
	switch c.Identity {
	case IdentityVerified:
		if len(c.IdentityMethods) == 0 {
			return "verified"
		}
		return "verified by " + strings.Join(c.IdentityMethods, ", ")
	case IdentityUnverified:
		return "unverified: no method could check the claim"
	case IdentityPending:
		return "pending: the check had not finished when the request was decided"
	case IdentityUnconfirmed:
		return "unconfirmed: the check neither confirmed nor refuted the claim"
	case IdentityForged:
		return "forged: the claim failed its identity check"
	case IdentityNone:
		return "no claim checked"
	}
	return words.Clean(c.Identity)
}

// Name names a row's crawler with its identity: "GPTBot",
// "GPTBot (verified)", "forged GPTBot".
func (c *Crawler) Name() string {
	switch c.Identity {
	case IdentityNone, "":
		return words.Clean(c.Agent)
	case IdentityForged:
		return "forged " + words.Clean(c.Agent)
	}
	return words.Clean(c.Agent) + " (" + words.Clean(c.Identity) + ")"
}

// String names a row: its crawler, with its identity, at its site.
func (c *Crawler) String() string {
	return c.Name() + " at " + words.Clean(c.Host)
}

// Fetched says whether and how the row's crawler is known to have fetched
// robots.txt: "yes (token)", "yes (client)", "no" or "unknown".
func (c *Crawler) Fetched() string {
	switch {
	case c.FetchedRobots:
		return "yes (" + c.FetchedLink + ")"
	case c.FetchUnknown:
		return "unknown"
	}
	return "no"
}
