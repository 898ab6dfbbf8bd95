package audit

import "time"

// Detail is what a row of a report holds beyond its counts, for a
// dispute: where its requests came from, what they said they were, each
// violating request, and each robots.txt fetch linked to it.
type Detail struct {
	// ClientAddresses count its records and violations per client
	// address; past MaxClientIPs addresses, per /24 (IPv4) or /64 (IPv6)
	// prefix, and past 256 of those per /16 or /48 (the form of Address
	// says which); OtherAddresses past that. Most requests first.
	ClientAddresses []AddressCount `json:"client_addresses"`
	// UserAgents are the User-Agent headers its records carried, most
	// first; past 16, an estimate as TopPaths are (Error).
	UserAgents []UserAgentCount `json:"user_agents"`
	// ViolatingRequests are its violations, the earliest
	// Options.MaxRequests; ViolatingRequestsMore counts the others.
	ViolatingRequests     []Request `json:"violating_requests"`
	ViolatingRequestsMore int64     `json:"violating_requests_more,omitempty"`
	// GraceRequests are its grace denials, listed as its violations are,
	// when Options.ListGrace is set.
	GraceRequests     []Request `json:"grace_requests,omitempty"`
	GraceRequestsMore int64     `json:"grace_requests_more,omitempty"`
	// RobotsFetches are the robots.txt serves linked to it, by version,
	// instance and client, earliest first; RobotsFetchesMore counts those
	// past maxFetchesListed.
	RobotsFetches     []Fetch `json:"robots_fetches"`
	RobotsFetchesMore int     `json:"robots_fetches_more,omitempty"`
}

// AddressCount counts the records (and violations) of one client address
// or prefix.
type AddressCount struct {
	Address    string `json:"address"`
	Requests   int64  `json:"requests"`
	Violations int64  `json:"violations"`
}

// UserAgentCount counts the records of one User-Agent header; the true
// count is between Requests-Error and Requests.
type UserAgentCount struct {
	UserAgent string `json:"user_agent"`
	Requests  int64  `json:"requests"`
	Error     int64  `json:"error,omitempty"`
}

// Request is one request listed: a violation, or a grace denial.
type Request struct {
	// Time is its record's time; zero when it had none.
	Time time.Time `json:"time,omitzero"`
	// Instance is the instance that recorded it (the record's instance,
	// or, without one, the log it was read from).
	Instance string `json:"instance"`
	// Method and Target are the request as the client sent it, the
	// target with its query; TargetCut tells that the target was longer
	// than 2,048 octets and is cut there.
	Method    string `json:"method"`
	Target    string `json:"target"`
	TargetCut bool   `json:"target_cut,omitempty"`
	ClientIP  string `json:"client_ip"`
	UserAgent string `json:"user_agent"`
	// Reason is the decision's reason (named_group: the group naming the
	// crawler's token decided; wildcard_group: the "*" group). Rule and
	// RuleLine are the deciding rule of RobotsHash, the version in force
	// that decided, as the record gives them.
	Reason     string `json:"reason"`
	Rule       string `json:"rule"`
	RuleLine   int64  `json:"rule_line"`
	RobotsHash string `json:"robots_hash"`
	// JudgedVersions are the versions its compliance was judged against:
	// those served to the crawler within the day before (Served), or the
	// versions its instance had in force.
	JudgedVersions []string `json:"judged_versions"`
	Served         bool     `json:"served"`
	// Recorded is its compliance as its record says; Compliance as the
	// report counts it (see MergeStats: the merged re-judgement may
	// differ).
	Recorded   string `json:"recorded_compliance"`
	Compliance string `json:"compliance"`
}

// Fetch is the robots.txt serves of one version by one instance to one
// client, linked to a row.
type Fetch struct {
	// First and Last are the earliest and latest of them (zero when none
	// had a time), Count how many.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	Count int64     `json:"count"`
	// Instance is the instance that served them; ClientIP the client's
	// address (OtherClients for the serves of a token past the addresses
	// told apart).
	Instance string `json:"instance"`
	ClientIP string `json:"client_ip"`
	// Version is the version served.
	Version string `json:"version"`
	// Link is how they are the row's: "token" (credited to its product
	// token) or "client" (the same client).
	Link string `json:"link"`
}

// MergeStats says what the two passes over the logs (ReadInputs) changed:
// denials judged again against every version served on any instance, and
// records of one request left out.
type MergeStats struct {
	// Merged tells that the logs were read in two passes.
	Merged bool `json:"merged"`
	// Instances are the instances whose records were read, by name.
	Instances []string `json:"instances"`
	// Rejudged counts the denials whose crawler was served versions
	// other than those its record was judged against; the next four
	// count those whose compliance it changed, from what the record says
	// to what the report counts.
	Rejudged               int64 `json:"rejudged"`
	ViolationsToGrace      int64 `json:"violations_to_grace"`
	ViolationsToProtective int64 `json:"violations_to_protective"`
	GraceToViolation       int64 `json:"grace_to_violation"`
	GraceToProtective      int64 `json:"grace_to_protective"`
	// Unknown counts the rejudged denials whose compliance rests on a
	// version read as unknown (its text not found, or a reading the audit
	// cannot tell), counted as allowing.
	Unknown int64 `json:"unknown"`
	// Duplicates counts the records left out as another record of a
	// request counted; DuplicatesUnchecked the denials past
	// MaxDuplicateChecks, counted as read.
	Duplicates          int64 `json:"duplicates"`
	DuplicatesUnchecked int64 `json:"duplicates_unchecked"`
	// Texts says where versions' texts were looked for.
	Texts TextStats `json:"texts"`
}

// TextStats says what was found of the versions' texts.
type TextStats struct {
	// Storage are the storage directories given.
	Storage []string `json:"storage,omitempty"`
	// Read are the versions whose text was read; Missing those asked for
	// whose text was not found, with why (TextMissing, ...).
	Read    []string          `json:"read,omitempty"`
	Missing map[string]string `json:"missing,omitempty"`
	// Skipped and Mismatched count the storage's files left out: too
	// large or past MaxTextFiles, or whose content does not hash to
	// their name.
	Skipped    int `json:"skipped,omitempty"`
	Mismatched int `json:"mismatched,omitempty"`
}
