// Package lint checks a robots.txt for what crawlers will not read as its
// author meant: every line the parser of package rules could not use or
// had to interpret (RFC 9309), and what parses without complaint but does
// not work as it reads: rules that never decide, agents named by several
// groups, groups that free their agents from the "*" group's rules, a "*"
// group that disallows everything, sitemaps crawlers cannot fetch, and the
// AI usage preferences of draft-ietf-aipref-attach-05 (in the vocabulary of
// draft-ietf-aipref-vocab-08) and of Cloudflare's Content-Signal lines.
//
// It has no HTTP and no Caddy in it: "caddy robots lint" reads or fetches
// the files and prints what Check finds.
//
//	for _, f := range lint.Check(body, lint.Options{}) {
//		fmt.Println(f)
//	}
package lint

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Codes of the findings of Check beyond the parser's diagnostics (whose
// codes are the rules.Code constants): stable names for tools that filter
// or count findings. Codes are never reused for another meaning.
const (
	CodeShadowedRule   = "shadowed-rule"   // a rule that never decides: one of the other kind always wins
	CodeDuplicateRule  = "duplicate-rule"  // a rule that repeats an earlier one of the same group
	CodeNoRules        = "no-rules"        // a group with no allow or disallow line at all
	CodeMergedGroups   = "merged-groups"   // an agent named by more than one group
	CodeDuplicateAgent = "duplicate-agent" // an agent named twice in one group
	CodeDisallowAll    = "disallow-all"    // "Disallow: /" in the "*" group
	CodeNoGroups       = "no-groups"       // no user-agent line at all
	CodeSitemapURL     = "sitemap-url"     // a sitemap that is not an absolute http(s) URL
	CodeHTMLBody       = "html-body"       // an HTML page where robots.txt should be
	CodeBinaryBody     = "binary-body"     // binary content where robots.txt should be
	CodeContentSignal  = "content-signal"  // a Content-Signal line, and the preference it is read as
	CodeUsageConflict  = "usage-conflict"  // Content-Signal and Content-Usage lines that say y and n of one category
)

// Options tune Check.
type Options struct {
	// MaxSize is the number of octets of the body that are parsed, as
	// rules.Options.MaxSize; 0 means rules.DefaultMaxSize.
	MaxSize int
}

// A Finding is one thing Check found.
type Finding struct {
	// Line is the 1-based line the finding is about, or 0 for the file
	// as a whole.
	Line     int
	Severity rules.Severity
	// Code is one of the Code constants of this package or of package
	// rules.
	Code string
	// Message says what was found, and why it matters, in words.
	Message string
}

// String formats f as "line N: severity: message", or "severity: message"
// for the file as a whole.
func (f Finding) String() string {
	if f.Line == 0 {
		return fmt.Sprintf("%s: %s", f.Severity, f.Message)
	}
	return fmt.Sprintf("line %d: %s: %s", f.Line, f.Severity, f.Message)
}

// Check parses body and returns the parser's diagnostics with the findings
// of the checks of this package, by line. A body that is not a robots.txt
// at all (an HTML page, binary content) gets that one finding, not one for
// each of its lines.
func Check(body []byte, opts Options) []Finding {
	maxSize := opts.MaxSize
	if maxSize <= 0 {
		maxSize = rules.DefaultMaxSize
	}
	if f, ok := notRobots(body); ok {
		return []Finding{f}
	}
	l := linter{r: rules.ParseWith(body, rules.Options{MaxSize: maxSize}), body: body, maxSize: maxSize}
	l.groups = l.r.Groups()
	for _, d := range l.r.Diagnostics() {
		l.findings = append(l.findings, Finding{Line: d.Line, Severity: d.Severity, Code: d.Code, Message: d.Message})
	}
	l.agents()
	l.noRules()
	l.shadowed()
	l.disallowAll()
	l.sitemaps()
	l.contentSignals()
	l.usageConflicts()
	if len(l.groups) == 0 {
		l.add(0, rules.Info, CodeNoGroups, "no user-agent line: the file restricts no crawler")
	}
	slices.SortStableFunc(l.findings, func(a, b Finding) int { return cmp.Compare(a.Line, b.Line) })
	return l.findings
}

// notRobots tells a body that is not a robots.txt, by the same signs the
// handler's fetches refuse one by: an HTML doctype or root element at the
// start, or a NUL octet.
func notRobots(body []byte) (Finding, bool) {
	b := bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	b = bytes.TrimLeft(b, " \t\r\n\f")
	switch {
	case hasPrefixFold(b, "<!doctype html") || hasPrefixFold(b, "<html"):
		return Finding{Severity: rules.Error, Code: CodeHTMLBody, Message: "an HTML page, not a robots.txt: " +
			"fetched over HTTP, the handler treats it as unreachable (complete disallow for crawlers, RFC 9309 §2.3.1.4); " +
			"read from a file, it has no rules"}, true
	case bytes.IndexByte(body, 0) >= 0:
		return Finding{Severity: rules.Error, Code: CodeBinaryBody, Message: "binary content (NUL octets), not a robots.txt: " +
			"fetched over HTTP, the handler treats it as unreachable (complete disallow for crawlers, RFC 9309 §2.3.1.4)"}, true
	}
	return Finding{}, false
}

// hasPrefixFold reports whether b starts with the lower-case ASCII prefix,
// ignoring ASCII case.
func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && equalFoldASCII(string(b[:len(prefix)]), prefix)
}

// equalFoldASCII reports whether s equals the lower-case ASCII t, ignoring
// the case of ASCII letters only, as the parser reads keys.
func equalFoldASCII(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[i] {
			return false
		}
	}
	return true
}

// linter holds a parsed file and the findings so far.
type linter struct {
	r        *rules.Robots
	body     []byte
	maxSize  int
	groups   []rules.SourceGroup
	findings []Finding
	// shadowedLines holds the lines of rules found never to decide in the
	// "*" group (among others).
	shadowedLines map[int]bool
}

// add records a finding.
func (l *linter) add(line int, sev rules.Severity, code, format string, args ...any) {
	l.findings = append(l.findings, Finding{Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
}

// andList joins names as "A", "A and B", "A, B and C".
func andList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1 : len(names)-1] {
		out += ", " + n
	}
	return out + " and " + names[len(names)-1]
}

// ruleText writes a rule as a robots.txt line.
func ruleText(allow bool, pattern string) string {
	if allow {
		return "Allow: " + pattern
	}
	return "Disallow: " + pattern
}
