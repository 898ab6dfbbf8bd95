package rules

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultMaxSize is the number of octets of a robots.txt body that Parse
// reads. RFC 9309 §2.5 requires crawlers to parse at least the first 500
// kibibytes; reading exactly that much means the enforcer judges a crawler by
// no more than the crawler was obliged to read.
const DefaultMaxSize = 500 << 10

// Options tune ParseWith.
type Options struct {
	// MaxSize is the number of octets read from the body; 0 means
	// DefaultMaxSize, and more than 256 MiB means 256 MiB (so that the
	// compact form's offsets fit 32 bits). Content past it is dropped, and
	// so is a line the limit cuts in two, since a partial rule could mean
	// the opposite of the whole.
	MaxSize int
}

// maxSize returns the number of octets read from a body.
func (o Options) maxSize() int {
	if o.MaxSize <= 0 {
		return DefaultMaxSize
	}
	return min(o.MaxSize, maxParsedSize)
}

// Parse parses a robots.txt body with default options. It never fails as a
// whole (RFC 9309 §2.3.1.5): what it cannot use is skipped and reported in
// Diagnostics.
func Parse(body []byte) *Robots {
	return ParseWith(body, Options{})
}

// ParseWith parses a robots.txt body with the given options.
func ParseWith(body []byte, opts Options) *Robots {
	maxSize := opts.maxSize()
	p := &parser{r: &Robots{size: len(body)}, open: -1}
	text := string(body[:min(len(body), maxSize)])
	if len(body) > maxSize {
		text = p.cutAtLimit(text, maxSize)
	}
	p.reserve(text)
	if bom := forEachLine(text, p.line); bom > 0 {
		p.diag(1, Info, diagBOM, span{}, uint32(bom))
	}
	p.finish()
	return p.r
}

// parser builds a Robots from lines.
type parser struct {
	r    *Robots
	text textBuilder
	// open is the index in r.sources of the group that user-agent lines
	// are added to, or -1 before the first user-agent line. It is always
	// the last group.
	open int
	// rulesSeen is set once the open group has an allow or disallow
	// line: the next user-agent line then starts a new group.
	rulesSeen bool
	// prefSeen is set by a Content-Usage or Content-Signal line in the
	// open group's run of user-agent lines, which it does not end.
	prefSeen bool

	patIndex map[string]uint32   // the distinct patterns, by index in forms
	forms    []patForm           // of each distinct pattern
	ruleForm []uint32            // of each rule, its pattern's index in forms
	matchers map[string]*matcher // see matcherFor
	ranks    []uint32            // Robots.ranks, growing
	groupSrc []uint32            // Robots.groupSrc, growing
}

// reserve sizes what parsing text builds for as many rules as it has lines,
// and a backing text as long as it: growing them as they filled took a
// fifth of the time to parse the 500 KiB synthetic file (a profile of
// BenchmarkParse). What is kept is then copied at its size (see finish).
func (p *parser) reserve(text string) {
	// A rule takes eight octets at the least ("allow:/\n").
	lines := min(strings.Count(text, "\n")+strings.Count(text, "\r")+1, len(text)/8+1)
	p.text.buf = make([]byte, 0, len(text))
	p.r.rules = make([]ruleRec, 0, lines)
	p.ruleForm = make([]uint32, 0, lines)
	p.forms = make([]patForm, 0, lines)
	p.patIndex = make(map[string]uint32, lines)
}

// finish writes the backing text and compiles the groups.
func (p *parser) finish() {
	r := p.r
	r.text = p.text.String()
	// The tables grew by appending: they are kept at their size.
	r.sources, r.agents, r.rules = slices.Clone(r.sources), slices.Clone(r.agents), slices.Clone(r.rules)
	r.usage, r.records, r.diags, r.delays = slices.Clone(r.usage), slices.Clone(r.records), slices.Clone(r.diags), slices.Clone(r.delays)
	p.compile()
}

// diag reports a line whose message quotes arg, or says num.
func (p *parser) diag(num int, sev Severity, code diagCode, arg span, n uint32) {
	p.r.diags = append(p.r.diags, diagRec{line: uint32(num), arg: arg, num: n, code: code, sev: sev})
}

// cutAtLimit drops content past maxSize octets and the line the limit cuts.
func (p *parser) cutAtLimit(text string, maxSize int) string {
	p.r.truncated = true
	kept := text[:maxSize]
	if c := text[maxSize-1]; c != '\n' && c != '\r' {
		kept = kept[:strings.LastIndexAny(kept, "\r\n")+1]
	}
	lines := 1
	forEachLine(kept, func(num int, _ string, _ bool) { lines = num })
	p.diag(lines, Error, diagSizeLimit, span{}, uint32(len(kept)))
	return kept
}

func (p *parser) line(num int, text string, cut bool) {
	if cut {
		p.diag(num, Warning, diagLineTooLong, span{}, 0)
	}
	if !utf8.ValidString(text) {
		p.diag(num, Warning, diagInvalidUTF8, span{}, 0)
	}
	k, v, noColon, ok := splitRecord(text)
	if !ok {
		if rest, _, _ := strings.Cut(text, "#"); trimSpace(rest) != "" {
			p.diag(num, Error, diagInvalidLine, span{}, 0)
		}
		return
	}
	kind, inexact := classifyKey(k)
	if noColon {
		p.diag(num, Warning, diagMissingColon, p.text.intern(k), 0)
	}
	if inexact {
		p.diag(num, Warning, diagKeyTypo, p.text.intern(k), uint32(kind))
	}
	switch kind {
	case keyUserAgent:
		p.userAgent(num, v)
	case keyAllow, keyDisallow:
		p.rule(num, kind == keyAllow, v)
	case keyContentUsage:
		p.contentUsage(num, v)
	case keyContentSignal:
		p.contentSignal(num, v)
	case keyCrawlDelay:
		p.crawlDelay(num, v)
		p.record(num, k, v)
	case keySitemap, keyOther:
		p.record(num, k, v)
	default:
		p.diag(num, Info, diagUnknownKey, p.text.intern(k), 0)
		p.record(num, k, v)
	}
}

func (p *parser) record(num int, k, v string) {
	// Keys repeat ("Sitemap"), values seldom do.
	rec := recordRec{line: uint32(num), key: p.text.intern(k), value: p.text.add(v)}
	if p.open >= 0 {
		rec.group = uint32(p.open + 1)
	}
	p.r.records = append(p.r.records, rec)
}

// userAgent handles a user-agent line (RFC 9309 §2.2.1). Consecutive
// user-agent lines form one group; so do user-agent lines with blank lines,
// comments or records other than allow/disallow between them
// (Google-compatible; the RFC grammar allows only blank lines there).
// Content-Usage and Content-Signal lines are such records here, although
// draft-ietf-aipref-attach-05 §3 makes Content-Usage a rule: see
// docs/rfc9309.md, "Deviations".
func (p *parser) userAgent(num int, v string) {
	r := p.r
	if p.open >= 0 && !p.rulesSeen && p.prefSeen {
		p.diag(num, Warning, diagUsageBetweenAgents, span{}, r.sources[p.open].line)
		p.prefSeen = false
	}
	if p.open < 0 || p.rulesSeen {
		r.sources = append(r.sources, sourceRec{line: uint32(num), agents: uint32(len(r.agents)),
			rules: uint32(len(r.rules)), usage: uint32(len(r.usage))})
		p.open = len(r.sources) - 1
		p.rulesSeen, p.prefSeen = false, false
	}
	at := p.text.intern(v)
	if !isGlobalAgent(v) {
		switch tok := ProductToken(v); {
		case tok == "":
			p.diag(num, Error, diagAgentInvalid, at, 0)
		case tok != v:
			p.diag(num, Info, diagAgentToken, at, 0)
		}
	}
	r.agents = append(r.agents, agentRec{line: uint32(num), value: at})
}

// isGlobalAgent reports whether a user-agent value names every crawler: "*"
// alone, or "*" followed by white space and anything (Google-compatible).
// "*Bot" is not global.
func isGlobalAgent(v string) bool {
	return v == "*" || len(v) > 1 && v[0] == '*' && isSpace(v[1])
}

// ProductToken returns the product token a user-agent value names: its
// leading run of [A-Za-z_-] (RFC 9309 §2.2.1 defines the token so; reading
// only the leading run of a longer value, "Foo Bot/1.0" as "Foo", is
// Google-compatible). Callers that read tokens elsewhere, such as from a
// User-Agent header, use it and IsProductToken so that both sides of a
// comparison are read by one rule.
func ProductToken(v string) string {
	i := 0
	for i < len(v) && IsProductTokenChar(v[i]) {
		i++
	}
	return v[:i]
}

// IsProductToken reports whether s is a whole, non-empty product token.
func IsProductToken(s string) bool { return s != "" && ProductToken(s) == s }

// IsProductTokenChar reports whether c may appear in a product token:
// letters, "-" and "_" (RFC 9309 §2.2.1).
func IsProductTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
}

// rule handles an allow or disallow line (RFC 9309 §2.2.2).
func (p *parser) rule(num int, allow bool, v string) {
	if p.open < 0 {
		// RFC 9309 §2.2.2: rules that are not in any group are ignored.
		p.diag(num, Error, diagRuleOutsideGroup, span{}, 0)
		return
	}
	p.rulesSeen = true
	p.r.sources[p.open].ruleLines++
	if v == "" {
		return // An empty pattern is no rule (RFC 9309 §2.2.2).
	}
	form, ok := p.patIndex[v]
	if !ok {
		form = uint32(len(p.forms))
		p.forms = append(p.forms, newPatForm(&p.text, v, p.text.add(v)))
		if p.patIndex == nil {
			p.patIndex = map[string]uint32{}
		}
		p.patIndex[v] = form
	}
	at := p.forms[form].at
	if v[0] != '/' && v[0] != '*' {
		p.diag(num, Warning, diagPatternStart, at, 0)
	}
	rr := ruleRec{lineAllow: uint32(num), pat: at}
	if allow {
		rr.lineAllow |= ruleAllow
	}
	p.r.rules = append(p.r.rules, rr)
	p.ruleForm = append(p.ruleForm, form)
}

func (p *parser) crawlDelay(num int, v string) {
	if p.open < 0 {
		p.diag(num, Warning, diagRecordOutside, span{}, 0)
		return
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs < 0 || secs > maxCrawlDelay.Seconds() {
		p.diag(num, Warning, diagCrawlDelay, p.text.intern(v), 0)
		return
	}
	// The group's first crawl-delay that is not 0.
	delay, ds := time.Duration(secs*float64(time.Second)), p.r.delays
	if delay != 0 && (len(ds) == 0 || ds[len(ds)-1].source != uint32(p.open)) {
		p.r.delays = append(ds, delayRec{source: uint32(p.open), delay: delay})
	}
}

// maxCrawlDelay bounds a crawl-delay value, so that a huge number cannot
// overflow a time.Duration. A day between requests is already no crawling.
const maxCrawlDelay = 24 * time.Hour
