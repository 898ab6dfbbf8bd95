package rules

import (
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Robots is a parsed and compiled robots.txt. It is immutable, and safe for
// concurrent use.
type Robots struct {
	size        int
	truncated   bool
	groups      []SourceGroup
	sitemaps    []string
	records     []Record
	diagnostics []Diagnostic

	tokens   []string   // named product tokens, as first written
	agents   agentTable // the named groups, by product token
	wildcard *Group     // the "*" group, or nil
}

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

// Size returns the length of the body that was given to Parse, before any
// cut at the size limit.
func (r *Robots) Size() int { return r.size }

// Truncated reports whether content past the size limit was dropped.
func (r *Robots) Truncated() bool { return r.truncated }

// Groups returns the groups as written, in file order. The caller must not
// modify the rules and agents they hold.
func (r *Robots) Groups() []SourceGroup { return slices.Clone(r.groups) }

// Sitemaps returns the values of the sitemap records, in file order.
func (r *Robots) Sitemaps() []string { return slices.Clone(r.sitemaps) }

// Records returns the records that are neither user-agent nor rule lines,
// in file order.
func (r *Robots) Records() []Record { return slices.Clone(r.records) }

// Diagnostics returns what Parse could not use or had to interpret, in the
// order it was found.
func (r *Robots) Diagnostics() []Diagnostic { return slices.Clone(r.diagnostics) }

// Tokens returns the product tokens that name a group, each once, spelt as
// first written.
func (r *Robots) Tokens() []string { return slices.Clone(r.tokens) }

// Group returns the group that applies to the product token agent: all
// groups naming it, combined (RFC 9309 §2.2.1). Tokens compare ignoring
// the case of ASCII letters, and of nothing else. It returns nil when no group names the token; the "*"
// group is not consulted (see Wildcard).
func (r *Robots) Group(agent string) *Group {
	return r.agents.lookup(agent)
}

// Wildcard returns the "*" group, or nil when the file has none.
func (r *Robots) Wildcard() *Group { return r.wildcard }

// GroupFor returns the group that a crawler with product token agent must
// obey: the group naming it if there is one, else the "*" group (RFC 9309
// §2.2.1: a matching named group replaces the "*" group entirely), else nil.
func (r *Robots) GroupFor(agent string) *Group {
	if g := r.Group(agent); g != nil {
		return g
	}
	return r.wildcard
}

// Allowed reports whether the crawler with product token agent may fetch
// target. See Decide.
func (r *Robots) Allowed(agent, target string) bool {
	return r.Decide(agent, target).Allowed
}

// Decide says whether the crawler with product token agent may fetch target,
// and why, and, when it may, the usage preference that the group's
// Content-Usage rules attach to the target (Verdict.Usage). The target is
// an origin-form request target ("/a/b?c=d") or an absolute URL
// ("https://example.com/a/b?c=d"): scheme and authority are dropped, the
// fragment is ignored, the query is kept, and an empty path means "/".
// Decide does not allocate for targets of up to 256 octets (but see
// Group.UsageCanonical on ties of Content-Usage patterns).
func (r *Robots) Decide(agent, target string) Verdict {
	var buf [256]byte
	path := canonicalTarget(buf[:0], target)
	g := r.GroupFor(agent)
	if isRobotsTxt(path) {
		if g == nil {
			return robotsTxtVerdict
		}
		return g.withUsage(robotsTxtVerdict, path)
	}
	if g == nil {
		return Verdict{Allowed: true, Reason: ReasonNoGroup}
	}
	if g.usage == nil {
		// Copied once, not also through withUsage: 4% by geometric mean
		// over eight files (BenchmarkDecide, interleaved).
		return g.decide(path)
	}
	return g.withUsage(g.decide(path), path)
}

// AppendCanonicalTarget appends to dst the part of target that rules are
// matched against (as Decide reads it), in the canonical form rules are
// compared in, for use with Group.DecideCanonical.
func AppendCanonicalTarget(dst []byte, target string) []byte {
	p, slash := targetPath(target)
	if slash {
		dst = append(dst, '/')
	}
	return appendCanonical(dst, p, true)
}

// AppendCanonical appends s in the canonical form rules are compared in,
// without reading it as a target: for callers that build a path and a query
// piecewise. The result is for Group.DecideCanonical once it holds a whole
// path, starting with "/".
func AppendCanonical(dst []byte, s string) []byte {
	return appendCanonical(dst, s, true)
}

// canonicalTarget is AppendCanonicalTarget without a copy when target needs
// no change. The result may share memory with buf.
func canonicalTarget(buf []byte, target string) string {
	p, slash := targetPath(target)
	if !slash && isCanonical(p, true) {
		return p
	}
	b := buf
	if slash {
		b = append(b, '/')
	}
	b = appendCanonical(b, p, true)
	// A view of the caller's buffer, not a copy (see DecideCanonical).
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// isRobotsTxt reports whether path names /robots.txt, which is always
// allowed (RFC 9309 §2.2.2), whatever its query.
func isRobotsTxt(path string) bool {
	const p = "/robots.txt"
	return strings.HasPrefix(path, p) && (len(path) == len(p) || path[len(p)] == '?')
}
