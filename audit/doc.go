// Package audit reads the compliance records that the robots_enforce handler
// writes and tells, per crawler and host, whether the crawler kept to the
// site's robots.txt. It imports no Caddy: it reads JSON lines from any
// io.Reader, plain or gzip-compressed, in one pass and in bounded memory.
//
// # Records
//
// A compliance record is one JSON object per line, as Caddy's JSON log
// encoder writes it, with logger "http.handlers.robots_enforce" and message
// "robots.txt decision"; the project README lists its fields. An Auditor
// reads these fields of it, and ignores all others:
//
//	logger, msg           must be the two values above
//	verdict               "allow" or "deny"; required
//	ts                    when; optional (see below)
//	agent                 the product token judged; optional ("" for none)
//	host                  the request's Host; optional
//	uri                   the request target; optional
//	grace                 a denial the previous robots.txt allowed; optional
//	agent_fetched_robots  the agent had fetched robots.txt; optional
//	robots_hash           the robots.txt judged against; optional
//
// Any other line is skipped and counted by its SkipKind: a blank line, text
// that is not a JSON object, malformed JSON, a truncated object (the last
// line of a log cut mid-write), a line longer than MaxLineLength, an entry
// of another logger (access logs, say) or another message, and a record
// without a usable verdict. None of these stops the reading.
//
// # Older records
//
// The record schema only grows; a record of an older schema is one that
// lacks some of the optional fields above, and is read as follows:
//
//   - no grace: false, so a denial counts as a violation;
//   - no agent_fetched_robots: not known to have fetched robots.txt;
//   - no robots_hash: judged against an unknown robots.txt, reported as "";
//   - no agent, host or uri: "" (reported as "(none)");
//   - fields the audit does not read (reading, robots_source, automation,
//     robots_fetched_at, ...) may be missing or added freely.
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
// # Verdicts
//
// A record with verdict "deny" is a denial: in enforce mode the request was
// refused, in log mode it would have been. A denial marked grace is counted
// as Grace, not as a violation: the robots.txt in force before a change less
// than a day old allowed it, and a crawler may use a cached copy that long
// (RFC 9309 §2.4). Every other denial is a violation. A violation of a
// record with agent_fetched_robots true is one the crawler made after it
// had fetched the host's robots.txt (within the day before): the strongest
// evidence that it read the rules and broke them.
//
// # Bounds
//
// Memory does not grow with the size of the logs: an Auditor holds one
// entry per (agent, host) pair, up to Options.MaxCrawlers (past it, new
// pairs are counted together as OtherAgent at OtherHost); per pair, a
// fixed number of path counters, robots.txt versions and time buckets; and
// one line at a time. Agents, hosts and paths are cut at MaxAgentLength,
// MaxHostLength and MaxPathLength.
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
