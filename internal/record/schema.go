// Package record declares the schema of the handler's log lines: the
// compliance record written for each judged request, and the line written
// for each robots.txt served. The handler writes them, "caddy robots check
// --json" prints the same fields, and the audit reads them back: all three
// take the names from here, so that a field cannot be spelt two ways.
//
// Its one dependency is zap, whose fields the records are written as. A
// record is a JSON object (zap's JSON encoder, one object a line); fields may be added in later versions, and
// none changes meaning within one.
package record

// Version is the version of the schema the handler writes (record_version):
//   - 1: the decision alone;
//   - 2: compliance, the versions judged against, what the crawler was
//     served, the client IP and the site;
//   - 3: served_link "client" replaces "ip" (a fetch counts for the client
//     that made it, and for a token only when the client proved it: see
//     CreditedAgents), the verdicts of both conforming readings
//     (RFC9309Verdict, GoogleVerdict) on assessed denials.
const Version = 3

// The logger and messages of the handler's lines.
const (
	// Logger is the name of the handler's logger, as Caddy names it.
	Logger = "http.handlers.robots_enforce"
	// MsgDecision is the message of a compliance record.
	MsgDecision = "robots.txt decision"
	// MsgServed is the message of a robots.txt served to a client.
	MsgServed = "robots.txt served"
)

// Fields of zap's JSON encoder, as Caddy configures it.
const (
	Level  = "level"
	TS     = "ts"
	Name   = "logger"
	Msg    = "msg"
	Caller = "caller"
)

// Fields of both kinds of line.
const (
	RecordVersion = "record_version"
	// Site is the origin whose robots.txt applies ("https://host:port").
	Site = "site"
	// Host is the request's Host header.
	Host = "host"
	// Method and URI are the request line as the client sent it.
	Method = "method"
	URI    = "uri"
	// UserAgent is the User-Agent header, cut to MaxUserAgent octets.
	UserAgent = "user_agent"
	// ClientIP is the client's address after trusted_proxies; RemoteIP the
	// connection's peer.
	ClientIP = "client_ip"
	RemoteIP = "remote_ip"
	// RobotsHash names the robots.txt version: its content hash, or
	// "unavailable", "unreachable", "disallow_all".
	RobotsHash = "robots_hash"
	// Instance is the id of the Caddy instance that wrote the line, so
	// that the audit of several instances' logs can tell them apart
	// wherever their lines were gathered. Optional: a reader takes the
	// log the line came from for an instance when it is absent.
	Instance = "instance"
	// FetcherClass is the class of the client the line names by a
	// product token (the agent of a decision; of a served line, any of
	// its agents): FetcherUserTriggered or FetcherCrawler. Written
	// whenever the line names a token; absent, a reader takes
	// FetcherCrawler.
	FetcherClass = "fetcher_class"
)

// Values of FetcherClass.
const (
	// FetcherCrawler: a crawler, the client RFC 9309 addresses, or any
	// client that is not a user-triggered fetcher.
	FetcherCrawler = "crawler"
	// FetcherUserTriggered: a fetcher that, its operator documents,
	// fetches a page because a person asked it to (ChatGPT-User,
	// Perplexity-User, Claude-User, Google's user-triggered fetchers,
	// ...), rather than crawling on its own.
	FetcherUserTriggered = "user_triggered"
)

// Fields of a compliance record (MsgDecision).
const (
	// Agent is the product token the decision is about.
	Agent = "agent"
	// BotClass is "named" when a group names the client, else its class:
	// "crawler", "automated", "browser".
	BotClass = "bot_class"
	// Automation is the sign that made the client automated ("catalogue",
	// "keyword", "user_agent_too_long", ...), "none" for a browser.
	Automation = "automation"
	Verdict    = "verdict" // "allow" or "deny"
	Mode       = "mode"    // "enforce" or "log"
	Reason     = "reason"
	// Reading is the reading of the target that decided: "as_sent",
	// "cleaned", "decoded", "rewrite_header".
	Reading   = "reading"
	GroupLine = "group_line"
	Rule      = "rule"
	RuleLine  = "rule_line"
	// Compliance is "allowed", "violation", "grace" or "protective".
	Compliance = "compliance"
	// Grace is true when Compliance is "grace" (version 1 readers).
	Grace = "grace"
	// JudgedVersions are the robots.txt versions the compliance was judged
	// against, each once.
	JudgedVersions = "judged_versions"
	// RFC9309Verdict and GoogleVerdict are the verdicts of the request as
	// sent under every judged version, by this profile's reading (RFC
	// 9309) and by Google's reference reading: "deny" when every version
	// disallows it. A violation needs both.
	RFC9309Verdict = "rfc9309_verdict"
	GoogleVerdict  = "google_verdict"
	RobotsSource   = "robots_source"
	// RobotsFetchedAt is when the robots.txt in force was fetched.
	RobotsFetchedAt = "robots_fetched_at"
	// ServedRobots is true when the crawler was served robots.txt within
	// the grace window (AgentFetchedRobots is its version 1 name); then
	// ServedAt, ServedHash and ServedLink say which and how.
	ServedRobots       = "served_robots"
	AgentFetchedRobots = "agent_fetched_robots"
	ServedAt           = "served_at"
	ServedHash         = "served_hash"
	ServedLink         = "served_link"
	// ContentUsage is the usage preference sent with the response.
	ContentUsage = "content_usage"
	// Identity is the outcome of the claim's verification ("verified",
	// "forged", "unverified", "pending", "unconfirmed", "replayed": a Web
	// Bot Auth signature first seen from another client); IdentityMethod
	// the method that decided.
	Identity       = "identity"
	IdentityMethod = "identity_method"
)

// Fields of a robots.txt served line (MsgServed).
const (
	// Agents are the product tokens of the fetch's User-Agent.
	Agents = "agents"
	// CreditedAgents are those the fetch counts for wherever the crawler
	// asks from: tokens the client was verified as, or that no method can
	// verify.
	CreditedAgents = "credited_agents"
	// HTTPStatus is the status the client was answered with.
	HTTPStatus = "http_status"
)

// Values of ServedLink.
const (
	// LinkToken: the crawler's product token was served the file by a
	// client that proved it, or the token has no method of proof.
	LinkToken = "token"
	// LinkClient: the same client (address and product token; or address
	// and User-Agent, for a client with no token) was served the file.
	LinkClient = "client"
)

// MaxUserAgent is how much of a User-Agent a line keeps: enough for any
// real header, not enough for a client to fill the log.
const MaxUserAgent = 512

// Values of Verdict, RFC9309Verdict and GoogleVerdict.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Values of Compliance.
const (
	// Allowed: the request was allowed.
	Allowed = "allowed"
	// Violation: every version of robots.txt the crawler was served (or,
	// when none, every version in force) within the grace window
	// disallows the request as sent, by every conforming reading.
	Violation = "violation"
	// GraceValue: the request is disallowed now, but a version the
	// crawler may still hold allows it.
	GraceValue = "grace"
	// Protective: a denial that says nothing about the crawler (another
	// reading of the path, a rewrite header, a robots.txt or target that
	// could not be read).
	Protective = "protective"
)

// Fields "caddy robots check --json" adds to a record's, about the target
// it was given and the robots.txt it read.
const (
	// Target is the target as given.
	Target = "target"
	// RuleKind is "allow" or "disallow", the kind of the deciding rule;
	// "" for none.
	RuleKind = "rule_kind"
	// ReadingPath is the target as the deciding reading reads it.
	ReadingPath = "reading_path"
	// RobotsAccess is what fetching robots.txt gave ("available",
	// "unavailable", "unreachable"), RobotsStatus its HTTP status (0 for a
	// file) and RobotsError why it gave no file.
	RobotsAccess = "robots_access"
	RobotsStatus = "robots_status"
	RobotsError  = "robots_error"
	// PTR are the client address's PTR names, when reverse DNS was asked.
	PTR = "ptr"
	// ContentUsageLines are the lines of the rules that state the usage
	// preference.
	ContentUsageLines = "content_usage_lines"
)

// Fields of a compliance record about a repeat violator (the handler's
// violators option).
const (
	// Escalation is "enforce" or "block" when the crawler is escalated for
	// an earlier violation, or this one began it; EscalationBegan is true
	// on the record whose violation began it.
	Escalation      = "escalation"
	EscalationBegan = "escalation_began"
	// EscalatedSince and EscalatedUntil bound the escalation;
	// EscalatedBy is the target of the violation that began it.
	EscalatedSince = "escalated_since"
	EscalatedUntil = "escalated_until"
	EscalatedBy    = "escalated_by"
)
