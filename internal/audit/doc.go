// Package audit reads the compliance records that the robots_enforce handler
// writes and tells, per crawler, site and identity, whether the crawler kept
// to the site's robots.txt. It imports no Caddy: it reads JSON lines from any
// io.Reader, plain or gzip-compressed, in one pass and in bounded memory, and
// reads any number of logs (of several Caddy instances, rotated files, in any
// order) into one report.
//
// # Records
//
// A compliance record is one JSON object per line, as Caddy's JSON log
// encoder writes it, with logger "http.handlers.robots_enforce" and message
// "robots.txt decision"; package record declares its fields, by the names
// the audit reads them by. An Auditor reads these fields of it, and
// ignores all others:
//
//	logger, msg           must be the two values above
//	verdict               "allow" or "deny"; required
//	compliance            "allowed", "violation", "grace" or "protective" (version 2)
//	rfc9309_verdict, google_verdict
//	                      the verdicts of both readings of a denial (version 3): a
//	                      violation that either reading allows is invalid
//	ts                    when; optional (see below)
//	agent                 the product token judged; optional ("" for none)
//	user_agent            the User-Agent, to link fetches to a client without a token
//	site                  the origin whose robots.txt applies (version 2)
//	host                  the request's Host; used when there is no site
//	uri                   the request target; optional
//	mode                  "enforce" or "log"
//	identity              "verified", "forged", "unverified", "pending" (version 2),
//	                      "unconfirmed" (version 3)
//	identity_method       "ip_ranges", "reverse_dns", "web_bot_auth" (version 2)
//	client_ip             the client's address, to link robots.txt fetches (version 2)
//	grace                 a denial the previous robots.txt allowed (version 1's grace)
//	served_robots, served_at, served_link
//	                      whether, when and how ("token" or "client"; version 2's
//	                      "ip" links nothing) the handler had served this crawler
//	                      robots.txt (version 2)
//	agent_fetched_robots  the agent had fetched robots.txt (version 1)
//	robots_hash           the robots.txt in force that decided
//	judged_versions       the versions a violation was judged against (version 2)
//	escalation, escalation_began, escalated_since, escalated_until, escalated_by
//	                      the escalation of a repeat violator (version 3, the
//	                      handler's violators option; see Escalations)
//	method, rule, rule_line, reason
//	                      the request's method, the deciding rule and its line,
//	                      and the decision's reason, listed for each violation
//	instance              the instance that wrote the line (optional; without
//	                      it, the log read stands for the instance)
//	fetcher_class         "user_triggered" or "crawler" (optional; absent is
//	                      "crawler"; see Fetcher classes)
//
// The same logger's lines "robots.txt served" (version 2) are read too: site
// (or host), client_ip, user_agent, agents (the User-Agent's product
// tokens), credited_agents (version 3: those of them the fetch counts for
// wherever the crawler asks from) and ts. They link robots.txt fetches to
// crawlers (see Fetches). The crawler a record is about is always its
// agent, the product token the handler judged: the audit never reads a
// name out of the User-Agent.
//
// Any other line is skipped and counted by its SkipKind: a blank line, text
// that is not a JSON object, malformed JSON, a truncated object (the last
// line of a log cut mid-write), a line longer than MaxLineLength, an entry
// of another logger (access logs, say) or another message, and a decision
// without a usable verdict, or with a compliance the audit does not know or
// that contradicts its verdict. None of these stops the reading.
//
// # Compliance
//
// A violation is what the product promises it is: the crawler broke the
// robots.txt it was given, read as RFC 9309 reads it. The audit counts a
// record as a violation exactly when its compliance is "violation"; a
// protective denial (a denial that only an alternate reading of the path
// makes, or a fail-closed one: the target could not be read, the site's
// robots.txt was not known, a forged claim refused) and a grace denial
// (some robots.txt version the crawler may still hold, within the day RFC
// 9309 §2.4 lets it cache one, allows the request) are counted apart, and
// never as violations. A violation's judged_versions are counted as the
// versions it broke.
//
// # Fetcher classes
//
// A row whose records say fetcher_class "user_triggered" is a
// user-triggered fetcher's, a client that fetches a page because a person
// asked it to, and whose operator says robots.txt does not govern it. Its
// rows are Report.UserTriggered, apart from the crawlers; their
// violations (the records' compliance) count in no crawler's figures, and
// reports call them disallowed requests, not violations.
//
// # Detail and evidence
//
// Each row keeps, within bounds (see detail.go), its client addresses, its
// User-Agent headers, its violating requests one by one, and the
// robots.txt serves linked to it by version and instance: Report lists
// them (Detail). NewEvidence builds from a report of one product token
// (EvidenceOptions) the evidence a site sends the crawler's operator, with
// the versions' texts (Texts, found in a copy of Caddy's storage).
//
// # Output
//
// A Report and an Evidence write their own JSON (WriteJSON); package
// render writes them for people: the table, CSV and HTML report and the
// evidence page. Report.Notes are the report's caveats in sentences, and
// Crawler.Name, String, Fetched and Proven name a row, so that every form
// says them alike.
//
// # Two passes
//
// ReadInputs reads the logs twice: first every serve, then the records,
// judging each denial again against every version served to its crawler
// on any instance (rejudge.go), and counting once a request recorded
// twice (duplicates.go). Read reads a log once, and counts its records as
// written.
//
// # Older records
//
// The record schema only grows; a record of an older schema is one that
// lacks some of the optional fields above, and is read as follows:
//
//   - no compliance (record version 1): an allowed request is allowed; a
//     denial with grace true is grace; any other denial a violation. Such
//     records cannot tell protective denials apart; Report.Legacy counts
//     their denials, and the report says so;
//   - no grace either: false, so a denial counts as a violation;
//   - no identity: IdentityNone;
//   - no site: the row is keyed by the request's Host;
//   - no served_robots or agent_fetched_robots: not known to have fetched
//     robots.txt (unless a robots.txt serve links it);
//   - no user_agent: a row without an agent is not linked by client;
//   - no robots_hash: judged against an unknown robots.txt, reported as "";
//   - no agent, host or uri: "" (reported as "(none)");
//   - fields the audit does not read (reading, robots_source, automation,
//     bot_class, content_usage, ...) may be missing or added freely.
//
// Report.Missing counts, per optional field, the records that lacked it, so
// that a report can say how much of it rests on defaults.
//
// The time "ts" may be a number or a string, as Caddy's time_format
// options write it: a number is Unix time in seconds (the default
// unix_seconds_float), milliseconds, microseconds or nanoseconds, told
// apart by magnitude (below 1e11 seconds, below 1e14 milliseconds, below
// 1e17 microseconds, else nanoseconds); a string is RFC 3339 or ISO 8601
// (with or without fraction or zone, a zone-less time being UTC), Caddy's
// "wall" layout (2006/01/02 15:04:05, UTC) or the Common Log Format's
// (02/Jan/2006:15:04:05 -0700). A record without a time, or with one that
// cannot be read, is still counted, but left out of the time line, of
// first and last seen, and of any report restricted by Since or Until.
//
// # Rows
//
// A row counts the records of one agent on one site (compared
// case-insensitively) with one identity: GPTBot verified and GPTBot
// unverified are two rows of one crawler, shown together. Records of both
// modes are one row, whose Mode says "enforce+log". Records whose identity
// is forged are forgeries of the token they claim: they make rows of
// Report.Forgeries, and count in none of the claimed crawler's rows, its
// violations and rate included.
//
// # Fetches
//
// A row is known to have fetched its site's robots.txt only on evidence that
// ties the fetch to it, whichever log the serve was read from:
//
//   - "client": a robots.txt serve of that site came from one of the row's
//     clients: the same client_ip with the row's agent among its agents
//     (compared case-insensitively), or, for a row without an agent, the
//     same client_ip and the same user_agent; or one of its records says
//     served_link "client".
//   - "token": a serve of that site lists the row's agent in its
//     credited_agents (a client that proved the token fetched it, or no
//     method can prove it), or one of its records says served_link
//     "token" (agent_fetched_robots true in version 1), and the row's
//     identity is verified, unverified or none: a forged, pending or
//     unconfirmed claim may be anyone's, so a token's fetch is not
//     credited to it.
//
// A fetch is never credited to another crawler at the same address: clients
// behind one NAT, or behind a CDN whose address Caddy was not told to look
// past (trusted_proxies), share one. When both links hold, the report shows
// "client", the more direct; FetchedBy is the earliest fetch of either.
//
// Logs of version 2 are read by the same rules: a serve line without
// credited_agents credits no token (any client could have claimed it), so
// it links only by client; a record's served_link "ip" (a fetch by any
// client at the address) links nothing, nor does a served_link the audit
// does not know. A version 2 record's "token" is taken as written, though
// a version 2 handler kept fetches by token whatever the fetching client's
// identity.
//
// Serves and rows are matched when the report is made, so the order of the
// logs does not matter (within MaxClientIPs per row and MaxFetchKeys
// serves). ViolationsAfterFetch counts the violations whose own record ties
// a fetch to the crawler, and those made at or after FetchedBy.
//
// # Escalations
//
// With the handler's violators option, a crawler recorded with a
// violation is escalated for a while ("enforce": what its group
// disallows is denied even in log mode; "block": everything but
// robots.txt). The record of the violation that began it says
// escalation_began true; it and every record of the crawler while it
// lasts carry escalation (the mode), escalated_since and escalated_until
// (times, in the form of ts) and escalated_by (the target that began it).
// Report.Escalations lists each escalation whose beginning was read. An
// escalation is keyed as the handler keys its table, by site and product
// token, and the client address unless the beginning's identity is
// verified, with the time it began, so the same crawler escalated again,
// or by another instance, is another escalation. Its Denied counts the
// records of its key with verdict deny (the beginning's own left out: it
// was judged before the escalation was in force); denials whose
// beginning was not read are counted in
// Report.EscalationStats.DeniedUnlisted. Of two records of one beginning
// (two copies of a log), the least of each text, the latest end and the
// earliest time are shown.
//
// # Order
//
// Logs may be read in any order, and their records may interleave in time:
// counts are sums, times are minima and maxima, the spelling shown of an
// agent or site is the least of those seen, fetch links are made at the
// end, and the time line's layout depends only on the earliest and latest
// time (see Timeline). Past the bounds below, what is kept can depend on
// the order: which rows count apart (MaxCrawlers), which paths take a
// counter (an estimate either way), which clients a row keeps
// (MaxClientIPs); not which escalations are listed (see Bounds).
//
// # Bounds
//
// Memory does not grow with the size of the logs: an Auditor holds one
// entry per row, up to Options.MaxCrawlers (past it, new rows are counted
// together as OtherAgent at OtherHost); per row, a fixed number of path
// counters, robots.txt versions, clients and time buckets; up to
// MaxFetchKeys robots.txt serves' keys; up to Options.MaxEscalations
// escalations; and one line at a time. Agents, sites and paths (and the
// target that began an escalation) are cut at MaxAgentLength,
// MaxHostLength and MaxPathLength.
//
// Past Options.MaxEscalations, the escalations that began latest are
// kept, each with all its denials, whatever the order the lines were
// read in; the beginnings of the others and their denials are counted in
// Report.EscalationStats.
//
// The top disallowed paths of a crawler are counted with the Space-Saving
// algorithm (Metwally, Agrawal and El Abbadi, "Efficient computation of
// frequent and top-k elements in data streams", 2005) over PathCounters
// counters: every path that makes up more than 1/PathCounters of the
// crawler's violations is listed; a listed count is never below the true
// count and exceeds it by at most PathCount.Error, which is at most the
// crawler's violations divided by PathCounters; while the crawler has no
// more distinct paths than counters, every count is exact (Error 0).
package audit
