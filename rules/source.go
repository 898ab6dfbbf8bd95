package rules

import (
	"cmp"
	"slices"
	"time"
)

// A SourceGroup is a group as written in the file (RFC 9309 §2.1): its
// user-agent lines and the rules that follow them.
type SourceGroup struct {
	// Line is the line of the group's first user-agent line.
	Line   int
	Agents []Agent
	Rules  []Rule
	// Usage holds the group's Content-Usage rules
	// (draft-ietf-aipref-attach-05 §3).
	Usage []UsageRule
	// RuleLines counts the group's allow and disallow lines, empty ones
	// included, which Rules leaves out (an empty pattern is no rule, RFC
	// 9309 §2.2.2, but says "allow everything" on purpose).
	RuleLines int
	// CrawlDelay is the group's first valid crawl-delay, or 0. Crawl-delay
	// is not part of RFC 9309; it is kept for tools that report it.
	CrawlDelay time.Duration
}

// An Agent is one user-agent line of a group.
type Agent struct {
	Line int
	// Value is the value as written.
	Value string
	// Token is the product token the value names (its leading [A-Za-z_-]
	// run), or "" for the global agent or a value with no token.
	Token string
	// Global is set for "*".
	Global bool
}

// A Rule is one allow or disallow line.
type Rule struct {
	Allow bool
	// Pattern is the path pattern as written (after trimming white space).
	Pattern string
	// Line is the rule's line number.
	Line int
	// GroupLine is the line of the first user-agent line of the group the
	// rule was written in.
	GroupLine int
}

// A Record is a line that is neither a user-agent nor a rule line (allow,
// disallow, content-usage): sitemap, crawl-delay, and other or unknown keys
// (RFC 9309 §2.2.4).
type Record struct {
	Line int
	// Key is the key as written.
	Key   string
	Value string
	// GroupLine is the line of the group the record appeared in, or 0
	// before the first user-agent line.
	GroupLine int
}

// The file as written is kept in flat tables, in file order; a source
// group's agents, rules and usage rules are the runs of those tables from
// its first entry to the next group's. The types above are made from them
// when asked for.

// sourceRec is a source group.
type sourceRec struct {
	line      uint32
	agents    uint32 // its first agent in Robots.agents
	rules     uint32 // its first rule in Robots.rules
	usage     uint32 // its first usage rule in Robots.usage
	ruleLines uint32
}

// delayRec is the crawl-delay of a source group, kept apart: few groups
// have one.
type delayRec struct {
	source uint32
	delay  time.Duration
}

// crawlDelay returns the crawl-delay of source group i, or 0.
func (r *Robots) crawlDelay(i uint32) time.Duration {
	if j, ok := slices.BinarySearchFunc(r.delays, i, func(d delayRec, i uint32) int { return cmp.Compare(d.source, i) }); ok {
		return r.delays[j].delay
	}
	return 0
}

// agentRec is a user-agent line; the value is in the backing text.
type agentRec struct {
	line  uint32
	value span
}

// ruleRec is an allow or disallow line: its pattern as written, and its
// line number with the allow bit on top (a file within maxParsedSize has
// fewer than 2³¹ lines).
type ruleRec struct {
	lineAllow uint32
	pat       span
}

const ruleAllow = 1 << 31

func (rr ruleRec) line() int   { return int(rr.lineAllow &^ ruleAllow) }
func (rr ruleRec) allow() bool { return rr.lineAllow&ruleAllow != 0 }

// recordRec is a record line.
type recordRec struct {
	line       uint32
	key, value span
	group      uint32 // the source group it appeared in, plus one; 0 for none
}

// sourceEnd returns the index past the last agent, rule and usage rule
// of source group i.
func (r *Robots) sourceEnd(i int) (agents, rules, usage uint32) {
	if i+1 < len(r.sources) {
		next := &r.sources[i+1]
		return next.agents, next.rules, next.usage
	}
	return uint32(len(r.agents)), uint32(len(r.rules)), uint32(len(r.usage))
}

// sourceGroup makes source group i.
func (r *Robots) sourceGroup(i int) SourceGroup {
	src := &r.sources[i]
	agentsEnd, rulesEnd, usageEnd := r.sourceEnd(i)
	sg := SourceGroup{Line: int(src.line), RuleLines: int(src.ruleLines), CrawlDelay: r.crawlDelay(uint32(i))}
	for _, a := range r.agents[src.agents:agentsEnd] {
		sg.Agents = append(sg.Agents, r.agent(a))
	}
	for ri := src.rules; ri < rulesEnd; ri++ {
		sg.Rules = append(sg.Rules, r.rule(ri, sg.Line))
	}
	sg.Usage = r.usageRules(src.usage, usageEnd)
	return sg
}

func (r *Robots) agent(a agentRec) Agent {
	v := a.value.in(r.text)
	if isGlobalAgent(v) {
		return Agent{Line: int(a.line), Value: v, Global: true}
	}
	return Agent{Line: int(a.line), Value: v, Token: ProductToken(v)}
}

// rule makes rule ri, written in the group that starts on groupLine.
func (r *Robots) rule(ri uint32, groupLine int) Rule {
	rr := r.rules[ri]
	return Rule{Allow: rr.allow(), Pattern: rr.pat.in(r.text), Line: rr.line(), GroupLine: groupLine}
}

func (r *Robots) record(rec recordRec) Record {
	out := Record{Line: int(rec.line), Key: rec.key.in(r.text), Value: rec.value.in(r.text)}
	if rec.group > 0 {
		out.GroupLine = int(r.sources[rec.group-1].line)
	}
	return out
}
