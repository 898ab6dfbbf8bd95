package audit

import (
	"encoding/json"
	"io"
	"time"
)

// Report is the outcome of an audit: what was read, and per crawler, site
// and identity what it did. Its JSON form is the json output format.
type Report struct {
	// Filter is the filter the records passed.
	Filter ReportFilter `json:"filter"`
	// Inputs are the inputs read, in order.
	Inputs []InputStats `json:"inputs"`
	// Total counts the lines of all inputs.
	Total LineCounts `json:"total"`
	// Missing counts the counted records that lacked optional fields.
	Missing Missing `json:"missing"`
	// Legacy counts the denials the audit classified itself, for want of
	// compliance (records of version 1).
	Legacy Legacy `json:"legacy"`
	// Fetches says how robots.txt serves were linked to crawlers.
	Fetches FetchStats `json:"robots_fetches"`
	// First and Last are the earliest and latest times of the counted
	// records.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// Buckets describes the time line of Crawler.Series.
	Buckets Timeline `json:"buckets"`
	// PathCounters is how many paths were counted per row (see
	// Crawler.TopPaths).
	PathCounters int `json:"path_counters"`
	// OnlyDenials tells that records were counted, and none of them was
	// an allowed request: the handler records allowed requests only with
	// log_allowed, so rates are then among denials only.
	OnlyDenials bool `json:"only_denials"`
	// Crawlers are the rows of crawlers as they claimed to be, one per
	// agent, site and identity other than forged. Rows of one agent and
	// site are kept together (verified, unverified, pending, none, then
	// others), the groups by most violations, then most requests, then
	// agent and site; the row OtherAgent at OtherHost, which counts the
	// rows past Options.MaxCrawlers, last.
	Crawlers []Crawler `json:"crawlers"`
	// Forgeries are the rows of requests that claimed a crawler's product
	// token and failed its identity check (identity forged): forgeries of
	// that token, counted in none of its Crawlers rows. Most requests
	// first.
	Forgeries []Crawler `json:"forgeries"`
	// UserTriggered are the rows of user-triggered fetchers (records with
	// fetcher_class user_triggered): clients that fetch a page because a
	// person asked them to. They are not crawlers, and their denials
	// count in none of the crawlers' figures; see the package
	// documentation, "Fetcher classes". Ordered as Crawlers.
	UserTriggered []Crawler `json:"user_triggered"`
	// Merge says what reading the logs in two passes changed.
	Merge MergeStats `json:"merge"`
	// Escalations are the escalations of repeat violators (the handler's
	// violators option) whose beginning was read, by when they began;
	// EscalationStats says what they leave out.
	Escalations     []Escalation    `json:"escalations"`
	EscalationStats EscalationStats `json:"escalation_stats"`
}

// ReportFilter is the Filter of a report, with times in UTC.
type ReportFilter struct {
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	Host  string    `json:"host,omitempty"`
	Agent string    `json:"agent,omitempty"`
	Mode  string    `json:"mode,omitempty"`
}

// Missing counts records without the optional fields the audit reads
// (records of an older schema, or of an edited log). Time counts records
// without a time that could be read; Host those with neither site nor
// host; AgentFetchedRobots those with neither agent_fetched_robots nor
// served_robots; Compliance the records of version 1.
type Missing struct {
	Time               int64 `json:"ts"`
	Agent              int64 `json:"agent"`
	Host               int64 `json:"host"`
	URI                int64 `json:"uri"`
	Grace              int64 `json:"grace"`
	AgentFetchedRobots int64 `json:"agent_fetched_robots"`
	RobotsHash         int64 `json:"robots_hash"`
	Compliance         int64 `json:"compliance"`
	Mode               int64 `json:"mode"`
}

// Legacy counts the denials of records without compliance (record
// version 1), which the audit classifies from verdict and grace: grace
// true is grace, any other denial a violation. Such records cannot tell a
// protective denial (an alternate reading of the path, a fail-closed
// denial) from a violation.
type Legacy struct {
	// Denials counts them, Violations those of them counted as
	// violations (the others are grace).
	Denials    int64 `json:"denials"`
	Violations int64 `json:"violations"`
	// WithoutGrace counts those of them without grace either (an older
	// schema still): all violations.
	WithoutGrace int64 `json:"without_grace"`
}

// FetchStats says how robots.txt serves were linked to crawlers.
type FetchStats struct {
	// Serves is how many robots.txt serves were kept for linking.
	Serves int64 `json:"serves"`
	// Dropped counts the serves not kept, past MaxFetchKeys.
	Dropped int64 `json:"dropped"`
	// RowsPastIPs counts the rows with more clients than MaxClientIPs,
	// whose links by client may depend on the order the logs were read
	// in.
	RowsPastIPs int `json:"rows_past_ips"`
	// RowsPastTimes counts the rows whose ViolationsAfterFetch is a lower
	// bound: more violations without a fetch on record than
	// MaxViolationTimes, and a fetch that other logs show after the first.
	RowsPastTimes int `json:"rows_past_times"`
}

// Timeline is the layout of the time buckets: Count buckets of Seconds
// each from Start. It covers the counted records' times, and is empty
// without any. Buckets start at multiples of their width from the Unix
// epoch, and the width is the narrowest of a fixed series (1 s, 5 s, …,
// a day, a week, then doubling) that covers the records, so the layout
// does not depend on the order the logs were read in.
type Timeline struct {
	Start   time.Time `json:"start,omitzero"`
	Seconds int64     `json:"seconds"`
	Count   int       `json:"count"`
}

// Width returns the width of a bucket.
func (t Timeline) Width() time.Duration { return time.Duration(t.Seconds) * time.Second }

// Crawler is what one agent did on one site, under one identity.
type Crawler struct {
	// Agent is the product token the records name (their agent field;
	// "" when they named none); agents are compared case-insensitively,
	// and of several spellings the least (in byte order) is shown.
	Agent string `json:"agent"`
	// Identity is the outcome of the identity check of its records:
	// IdentityVerified, IdentityUnverified, IdentityPending,
	// IdentityUnconfirmed, IdentityForged (only in Report.Forgeries) or
	// IdentityNone (the record had none: a client that claims no product
	// token, a handler that verifies no one, or a record of version 1).
	Identity string `json:"identity"`
	// IdentityMethods are the methods that decided its identity
	// (ip_ranges, reverse_dns, web_bot_auth).
	IdentityMethods []string `json:"identity_methods,omitempty"`
	// Host is the record's site, the origin whose robots.txt applies, as
	// recorded ("http://localhost:8081"); for records without one (version
	// 1), their Host ("localhost:8081").
	Host string `json:"host"`
	// Mode is the modes its records were written in: "enforce", "log",
	// "enforce+log", or "" when they said none.
	Mode string `json:"mode"`
	// Requests counts the records; Allowed and Denied split them by
	// verdict, Denied into Violations, Protective and Grace.
	Requests int64 `json:"requests"`
	Allowed  int64 `json:"allowed"`
	Denied   int64 `json:"denied"`
	// Violations are the denials whose compliance is "violation": every
	// robots.txt version the crawler may hold disallows the request as
	// sent (see the package documentation).
	Violations int64 `json:"violations"`
	// Protective are denials the robots.txt as the RFC reads the request
	// does not make: an alternate reading of the path, or a fail-closed
	// denial.
	Protective int64 `json:"protective"`
	// Grace are denials that some robots.txt version the crawler may
	// still hold allows (a change less than a day old).
	Grace int64 `json:"grace"`
	// ViolationRate is Violations / Requests.
	ViolationRate float64 `json:"violation_rate"`
	// FetchedRobots tells that the crawler is known to have fetched the
	// site's robots.txt: a record, or a robots.txt serve, ties a fetch to
	// it (see the package documentation, "Fetches"); FetchedLink says how
	// ("client": the same client fetched it; "token": a fetch was credited
	// to its product token, and its identity lets it count as its own),
	// and FetchedBy is the earliest such fetch (zero when it had no time).
	FetchedRobots bool      `json:"fetched_robots"`
	FetchedLink   string    `json:"fetched_link,omitempty"`
	FetchedBy     time.Time `json:"fetched_by,omitzero"`
	// FetchUnknown tells that none of its records said whether it had
	// been served robots.txt (an older record schema), and no serve links
	// to it.
	FetchUnknown bool `json:"fetch_unknown,omitempty"`
	// ViolationsAfterFetch counts the violations made after the crawler
	// had fetched robots.txt: those whose record ties a fetch to it
	// (served_robots with served_link "client", or "token" where its
	// identity lets the token's fetch count; agent_fetched_robots in
	// older records), and those made at or after FetchedBy, a fetch that
	// the serves of any log show.
	ViolationsAfterFetch int64 `json:"violations_after_fetch"`
	afterFetchBound      bool  // ViolationsAfterFetch is a lower bound
	// ClientIPs counts the client IPs of its records' clients, of which
	// it keeps MaxClientIPs (a client is an address, and for a row
	// without a product token an address and a User-Agent);
	// ClientIPsMore tells that there were more clients.
	ClientIPs     int  `json:"client_ips"`
	ClientIPsMore bool `json:"client_ips_more,omitempty"`
	// FirstSeen and LastSeen are the times of its first and last record.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	// TopPaths are its most frequent violations' paths, most first:
	// without query, unless the deciding rule's pattern holds a "?".
	TopPaths []PathCount `json:"top_paths"`
	// PathsExact tells that TopPaths' counts are exact: the crawler had
	// fewer distinct paths than counters.
	PathsExact bool `json:"paths_exact"`
	// RobotsVersions are the robots.txt versions in force its records
	// were decided by (robots_hash), by count.
	RobotsVersions []VersionCount `json:"robots_versions"`
	// JudgedVersions are the robots.txt versions its violations were
	// judged against (judged_versions), by count of violations.
	JudgedVersions []VersionCount `json:"judged_versions"`
	// Series counts its records per time bucket (see Report.Buckets).
	Series Series `json:"series"`
	// FetcherClass is "user_triggered" when a record said the client is
	// a user-triggered fetcher (fetcher_class), else "crawler".
	FetcherClass string `json:"fetcher_class"`
	Detail
}

// Series counts a crawler's records per time bucket, by what they count
// as: the i-th element of each slice is the i-th bucket of Report.Buckets.
type Series struct {
	Allowed    []int64 `json:"allowed"`
	Violations []int64 `json:"violations"`
	Grace      []int64 `json:"grace"`
	Protective []int64 `json:"protective"`
}

// At returns the counts of bucket i.
func (s *Series) At(i int) Bucket {
	return Bucket{Allowed: s.Allowed[i], Violations: s.Violations[i], Grace: s.Grace[i], Protective: s.Protective[i]}
}

// PathCount is a path and how many violations asked for it. The true count
// is between Count-Error and Count.
type PathCount struct {
	Path  string `json:"path"`
	Count int64  `json:"count"`
	Error int64  `json:"error,omitempty"`
}

// VersionCount is a robots.txt version (the 16-hex robots_hash form; ""
// for none or unknown) and how many records were judged against it.
type VersionCount struct {
	Hash  string `json:"hash"`
	Count int64  `json:"count"`
}

// WriteJSON writes the report as indented JSON; see Report for its fields.
// Times are RFC 3339 in UTC; the buckets of each crawler's series follow
// Report.Buckets.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
