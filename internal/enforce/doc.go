// Package enforce makes the one judgement of a request: a Judge says, in
// one call, whether a request may pass and why, and what its compliance
// record says. The handler (package caddymodule) and "caddy robots check"
// both judge through it; nothing else orders these steps.
//
// A Judgement holds the whole outcome: the Decision (the robots.txt
// version it was made against, the group, the deciding rule and its line,
// the reading of the path that decided), the identity of the client after
// the policy for claims it could not prove (through an Identity; package
// verify implements it), the targets of headers that redirect some
// origins, an escalation of a repeat violator, the AIPREF usage
// preference, and, for a record, the Evidence: which versions the crawler
// was served, and whether a denial is a violation, grace or protective.
//
// What it reads is supplied: who is asking by package agent, the
// robots.txt in force by a robotstxt.Source, what each crawler was served
// by a Served table, the crawlers escalated by a Violators table, the
// time by the Request. A Decision is a pure function of the snapshot, the
// request and the Policy. It imports no Caddy, so every behaviour is
// testable on its own (judge_test.go).
package enforce
