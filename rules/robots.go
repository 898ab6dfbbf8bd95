package rules

import (
	"strings"
	"unsafe"
)

// Robots is a parsed and compiled robots.txt. It is immutable, and safe for
// concurrent use.
//
// It holds the file in a compact form (see text.go): every string in one
// backing text, each written once, and the file's lines and groups in flat
// tables of offsets into it. Groups, Records and Diagnostics make their
// values from those tables when called.
type Robots struct {
	text      string // the backing text
	size      int
	truncated bool
	// decisionsOnly marks a copy that keeps what decisions need alone
	// (see DecisionsOnly).
	decisionsOnly bool

	sources []sourceRec // the groups as written
	delays  []delayRec
	agents  []agentRec
	rules   []ruleRec
	usage   []usageRec // Content-Usage and Content-Signal rules
	records []recordRec
	diags   []diagRec

	groups   []Group    // compiled
	ranks    []uint32   // of each group, see Group.ranks
	groupSrc []uint32   // of each group, see Group.src
	tokens   tokenTable // the named groups, by product token
	wildcard *Group     // the "*" group, or nil
}

// Size returns the length of the body that was given to Parse, before any
// cut at the size limit.
func (r *Robots) Size() int { return r.size }

// Truncated reports whether content past the size limit was dropped.
func (r *Robots) Truncated() bool { return r.truncated }

// Groups returns the groups as written, in file order.
func (r *Robots) Groups() []SourceGroup {
	if len(r.sources) == 0 {
		return nil
	}
	out := make([]SourceGroup, len(r.sources))
	for i := range r.sources {
		out[i] = r.sourceGroup(i)
	}
	return out
}

// Sitemaps returns the values of the sitemap records, in file order.
func (r *Robots) Sitemaps() []string {
	var out []string
	for _, rec := range r.records {
		if kind, _ := classifyKey(rec.key.in(r.text)); kind == keySitemap {
			out = append(out, rec.value.in(r.text))
		}
	}
	return out
}

// Records returns the records that are neither user-agent nor rule lines,
// in file order.
func (r *Robots) Records() []Record {
	if len(r.records) == 0 {
		return nil
	}
	out := make([]Record, len(r.records))
	for i, rec := range r.records {
		out[i] = r.record(rec)
	}
	return out
}

// Diagnostics returns what Parse could not use or had to interpret, in the
// order it was found.
func (r *Robots) Diagnostics() []Diagnostic {
	if len(r.diags) == 0 {
		return nil
	}
	out := make([]Diagnostic, len(r.diags))
	for i, d := range r.diags {
		out[i] = r.diagnostic(d)
	}
	return out
}

// Tokens returns the product tokens that name a group, each once, spelt as
// first written.
func (r *Robots) Tokens() []string { return r.tokens.tokens(r.text) }

// Group returns the group that applies to the product token agent: all
// groups naming it, combined (RFC 9309 §2.2.1). Tokens compare ignoring
// the case of ASCII letters, and of nothing else. It returns nil when no
// group names the token; the "*" group is not consulted (see Wildcard).
func (r *Robots) Group(agent string) *Group {
	if i := r.named(agent); i >= 0 {
		return &r.groups[i]
	}
	return nil
}

// Wildcard returns the "*" group, or nil when the file has none.
func (r *Robots) Wildcard() *Group { return r.wildcard }

// GroupFor returns the group that a crawler with product token agent must
// obey: the group naming it if there is one, else the "*" group (RFC 9309
// §2.2.1: a matching named group replaces the "*" group entirely), else nil.
func (r *Robots) GroupFor(agent string) *Group {
	if i := r.named(agent); i >= 0 {
		return &r.groups[i]
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
func (r *Robots) Decide(agent, target string) (v Verdict) {
	if path, slash := targetPath(target); slash || !isCanonical(path, true) {
		var buf [256]byte
		r.decide(&v, agent, canonicalPath(buf[:0], path, slash))
	} else {
		r.decide(&v, agent, path)
	}
	return v
}

// decide is Decide for a path in canonical form. It writes the verdict
// into *v, the caller's zero result (see Group.decide).
func (r *Robots) decide(v *Verdict, agent, path string) {
	g := r.GroupFor(agent)
	switch {
	case isRobotsTxt(path):
		*v = robotsTxtVerdict
	case g == nil:
		v.Allowed, v.Reason = true, ReasonNoGroup
		return
	default:
		g.decide(v, path)
	}
	if g != nil {
		g.addUsage(v, path)
	}
}

// appendCanonicalTarget appends to dst the part of target that rules are
// matched against (as Decide reads it), in the canonical form rules are
// compared in.
func appendCanonicalTarget(dst []byte, target string) []byte {
	p, slash := targetPath(target)
	if slash {
		dst = append(dst, '/')
	}
	return appendCanonical(dst, p, true)
}

// AppendCanonical appends s in the canonical form rules are compared in
// (see encoding.go), without reading it as a target: for callers that
// build a path and a query piecewise, and for Group.DecideCanonical and
// Group.UsageCanonical once the result holds a whole path, starting with
// "/".
func AppendCanonical(dst []byte, s string) []byte {
	return appendCanonical(dst, s, true)
}

// canonicalPath writes path, as targetPath returns it, in canonical form
// into buf, and returns it. Decide declares its buffer only for a target
// that needs one: a buffer on the stack is cleared at each call, and most
// targets are canonical already.
func canonicalPath(buf []byte, path string, slash bool) string {
	b := buf
	if slash {
		b = append(b, '/')
	}
	b = appendCanonical(b, path, true)
	// A view of the caller's buffer, not a copy: with string(b), Decide on
	// the encoded target of BenchmarkDecide's mix
	// ("/caf%C3%A9/%7Euser/docs%2Fa/%E3%83%84?x=%41") allocates 48 octets,
	// against nothing.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// isRobotsTxt reports whether path names /robots.txt, which is always
// allowed (RFC 9309 §2.2.2), whatever its query.
func isRobotsTxt(path string) bool {
	const p = "/robots.txt"
	return strings.HasPrefix(path, p) && (len(path) == len(p) || path[len(p)] == '?')
}
