package rules

import (
	"fmt"
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
	// DefaultMaxSize. Content past it is dropped, and so is a line the limit
	// cuts in two, since a partial rule could mean the opposite of the whole.
	MaxSize int
}

// Parse parses a robots.txt body with default options. It never fails as a
// whole (RFC 9309 §2.3.1.5): what it cannot use is skipped and reported in
// Diagnostics.
func Parse(body []byte) *Robots {
	return ParseWith(body, Options{})
}

// ParseWith parses a robots.txt body with the given options.
func ParseWith(body []byte, opts Options) *Robots {
	maxSize := opts.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	p := &parser{r: &Robots{size: len(body)}, open: -1}
	text := string(body)
	if len(text) > maxSize {
		text = p.cutAtLimit(text, maxSize)
	}
	if bom := forEachLine(text, p.line); bom > 0 {
		p.diag(1, Info, CodeBOM, "byte order mark skipped (%d octets)", bom)
	}
	p.r.compile()
	return p.r
}

// parser builds a Robots from lines.
type parser struct {
	r *Robots
	// open is the index in r.groups of the group that user-agent lines
	// are added to, or -1 before the first user-agent line.
	open int
	// rulesSeen is set once the open group has an allow or disallow
	// line: the next user-agent line then starts a new group.
	rulesSeen bool
	// prefSeen is set by a Content-Usage or Content-Signal line in the
	// open group's run of user-agent lines, which it does not end.
	prefSeen bool
}

func (p *parser) diag(num int, sev Severity, code, format string, args ...any) {
	p.r.diagnostics = append(p.r.diagnostics, Diagnostic{
		Line: num, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...),
	})
}

// cutAtLimit drops content past maxSize octets and the line the limit cuts.
func (p *parser) cutAtLimit(text string, maxSize int) string {
	p.r.truncated = true
	kept := text[:maxSize]
	if c := text[maxSize-1]; c != '\n' && c != '\r' {
		kept = kept[:strings.LastIndexAny(kept, "\r\n")+1]
	}
	lines := 1
	forEachLine(kept, func(l line) { lines = l.num })
	p.diag(lines, Error, CodeSizeLimit,
		"content past %d octets dropped (%d octets in all), from this line on", len(kept), len(text))
	return kept
}

func (p *parser) line(l line) {
	if l.cut {
		p.diag(l.num, Warning, CodeLineTooLong, "line longer than %d octets: the rest is ignored", MaxLineLength)
	}
	if !utf8.ValidString(l.text) {
		p.diag(l.num, Warning, CodeInvalidUTF8, "line is not valid UTF-8")
	}
	k, v, noColon, ok := splitRecord(l.text)
	if !ok {
		if rest, _, _ := strings.Cut(l.text, "#"); trimSpace(rest) != "" {
			p.diag(l.num, Error, CodeInvalidLine, "no \"key: value\" record on this line: ignored")
		}
		return
	}
	kind, inexact := classifyKey(k)
	if noColon {
		p.diag(l.num, Warning, CodeMissingColon, "no colon after %q: white space read as the separator", k)
	}
	if inexact {
		p.diag(l.num, Warning, CodeKeyTypo, "key %q read as %q", k, canonicalKeys[kind])
	}
	switch kind {
	case keyUserAgent:
		p.userAgent(l.num, v)
	case keyAllow, keyDisallow:
		p.rule(l.num, kind == keyAllow, v)
	case keyContentUsage:
		p.contentUsage(l.num, v)
	case keyContentSignal:
		p.contentSignal(l.num, v)
	case keySitemap:
		p.r.sitemaps = append(p.r.sitemaps, v)
		p.record(l.num, k, v)
	case keyCrawlDelay:
		p.crawlDelay(l.num, v)
		p.record(l.num, k, v)
	case keyOther:
		p.record(l.num, k, v)
	default:
		p.diag(l.num, Info, CodeUnknownKey, "unknown key %q: kept as a record, not interpreted", k)
		p.record(l.num, k, v)
	}
}

func (p *parser) record(num int, k, v string) {
	groupLine := 0
	if p.open >= 0 {
		groupLine = p.r.groups[p.open].Line
	}
	p.r.records = append(p.r.records, Record{Line: num, Key: k, Value: v, GroupLine: groupLine})
}

// userAgent handles a user-agent line (RFC 9309 §2.2.1). Consecutive
// user-agent lines form one group; so do user-agent lines with blank lines,
// comments or records other than allow/disallow between them
// (Google-compatible; the RFC grammar allows only blank lines there).
// Content-Usage and Content-Signal lines are such records here, although
// draft-ietf-aipref-attach-05 §3 makes Content-Usage a rule: see
// docs/rfc9309.md, "Deviations".
func (p *parser) userAgent(num int, v string) {
	if p.open >= 0 && !p.rulesSeen && p.prefSeen {
		p.diag(num, Warning, CodeUsageBetweenAgents,
			"user-agent after a usage preference line joins the group at line %d, as parsers that do not know the line read it "+
				"(draft-ietf-aipref-attach-05 §3 would start a new group here): the preferences above apply to these agents too; "+
				"put the group's user-agent lines together, before its rules",
			p.r.groups[p.open].Line)
		p.prefSeen = false
	}
	if p.open < 0 || p.rulesSeen {
		p.r.groups = append(p.r.groups, SourceGroup{Line: num})
		p.open = len(p.r.groups) - 1
		p.rulesSeen, p.prefSeen = false, false
	}
	a := Agent{Line: num, Value: v}
	switch {
	case isGlobalAgent(v):
		a.Global = true
	default:
		a.Token = ProductToken(v)
		if a.Token == "" {
			p.diag(num, Error, CodeAgentInvalid, "user-agent %q has no product token ([A-Za-z_-]): it names no crawler", v)
		} else if a.Token != v {
			p.diag(num, Info, CodeAgentToken, "user-agent %q read as %q", v, a.Token)
		}
	}
	g := &p.r.groups[p.open]
	g.Agents = append(g.Agents, a)
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
		p.diag(num, Error, CodeRuleOutsideGroup, "rule before any user-agent line: ignored")
		return
	}
	p.rulesSeen = true
	p.r.groups[p.open].RuleLines++
	if v == "" {
		return // An empty pattern is no rule (RFC 9309 §2.2.2).
	}
	if v[0] != '/' && v[0] != '*' {
		p.diag(num, Warning, CodePatternStart, "pattern %q does not start with \"/\" or \"*\": it matches no path", v)
	}
	g := &p.r.groups[p.open]
	g.Rules = append(g.Rules, Rule{Allow: allow, Pattern: v, Line: num, GroupLine: g.Line})
}

func (p *parser) crawlDelay(num int, v string) {
	if p.open < 0 {
		p.diag(num, Warning, CodeRecordOutside, "crawl-delay before any user-agent line: applies to no group")
		return
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs < 0 || secs > maxCrawlDelay.Seconds() {
		p.diag(num, Warning, CodeCrawlDelay, "crawl-delay %q is not a number of seconds between 0 and %v: ignored", v, maxCrawlDelay)
		return
	}
	if g := &p.r.groups[p.open]; g.CrawlDelay == 0 {
		g.CrawlDelay = time.Duration(secs * float64(time.Second))
	}
}

// maxCrawlDelay bounds a crawl-delay value, so that a huge number cannot
// overflow a time.Duration. A day between requests is already no crawling.
const maxCrawlDelay = 24 * time.Hour
