package audit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Format is an output format of a report.
type Format string

// The output formats.
const (
	// FormatTable is aligned text for a terminal.
	FormatTable Format = "table"
	// FormatJSON is the Report as indented JSON.
	FormatJSON Format = "json"
	// FormatCSV is one row per crawler, with a header row.
	FormatCSV Format = "csv"
	// FormatHTML is one self-contained HTML page, with charts.
	FormatHTML Format = "html"
)

// Formats lists the output formats.
var Formats = []Format{FormatTable, FormatJSON, FormatCSV, FormatHTML}

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == strings.ToLower(s) {
			return f, nil
		}
	}
	return "", fmt.Errorf("format %q: want table, json, csv or html", s)
}

// Write writes the report to w in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	switch f {
	case FormatTable:
		return r.WriteTable(w)
	case FormatJSON:
		return r.WriteJSON(w)
	case FormatCSV:
		return r.WriteCSV(w)
	case FormatHTML:
		return r.WriteHTML(w)
	}
	return fmt.Errorf("format %q: want table, json, csv or html", f)
}

// Text shown for empty values.
const (
	noneText    = "(none)"
	noText      = "no"
	unknownText = "unknown"
	yesText     = "yes"
)

// clean makes record-derived text safe to print on a terminal: control
// characters and invalid UTF-8 are shown as Go escapes, so that a request
// target cannot move the cursor or change colours; "" becomes "(none)".
func clean(s string) string {
	if s == "" {
		return noneText
	}
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// commas writes n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// percent writes a rate as a percentage with one decimal.
func percent(r float64) string {
	return strconv.FormatFloat(r*100, 'f', 1, 64) + "%"
}

// timeText writes a time in UTC to the second; "" for zero.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateTime)
}

// fetchedText says whether and how a crawler is known to have fetched
// robots.txt: "yes (token)", "yes (client)", "no" or "unknown".
func fetchedText(c *Crawler) string {
	switch {
	case c.FetchedRobots:
		return yesText + " (" + c.FetchedLink + ")"
	case c.FetchUnknown:
		return unknownText
	}
	return noText
}

// fetchedDetail adds the time of the earliest fetch to fetchedText.
func fetchedDetail(c *Crawler) string {
	if c.FetchedBy.IsZero() {
		return fetchedText(c)
	}
	return fetchedText(c) + ", " + timeText(c.FetchedBy)
}

// modeText names a row's modes; "(none)" when its records said none.
func modeText(c *Crawler) string { return clean(c.Mode) }

// ipsText counts a row's client IPs: "3", or "64+" past MaxClientIPs.
func ipsText(c *Crawler) string {
	if c.ClientIPsMore {
		return commas(int64(c.ClientIPs)) + "+"
	}
	return commas(int64(c.ClientIPs))
}

// widthText writes a bucket width briefly: 1s, 15m, 6h, 1d, 7d.
func widthText(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}

// skippedText lists skipped lines by kind, in SkipKind order: "230
// other_logger, 1 truncated"; "" for none.
func skippedText(c LineCounts) string {
	var parts []string
	for k := range numSkipKinds {
		if n := c.Skipped[k.String()]; n > 0 {
			parts = append(parts, commas(n)+" "+k.String())
		}
	}
	return strings.Join(parts, ", ")
}

// plural writes a count and a noun, with an s unless the count is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return commas(n) + " " + noun + "s"
}

// inputName names an input in text: "standard input" for "-".
func inputName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return clean(name)
}

// agentText names a row's crawler with its identity: "GPTBot",
// "GPTBot (verified)", "forged GPTBot".
func agentText(c *Crawler) string {
	switch c.Identity {
	case IdentityNone, "":
		return clean(c.Agent)
	case IdentityForged:
		return "forged " + clean(c.Agent)
	}
	return clean(c.Agent) + " (" + clean(c.Identity) + ")"
}

// escalationsIntro heads the escalated crawlers in the table and HTML
// formats.
const escalationsIntro = "Escalated crawlers: recorded with a violation, then, for a while, denied what their group disallows even in log mode (enforce) or everything but robots.txt (block). DENIED counts the requests refused while escalated."

// escalationIPText shows the address an escalation holds a claim to:
// "(any)" for a verified crawler, escalated wherever it asks from.
func escalationIPText(e *Escalation) string {
	if e.Identity == IdentityVerified {
		return "(any)"
	}
	return clean(e.ClientIP)
}

// timeOrUnknown writes a time as timeText does, "unknown" for zero.
func timeOrUnknown(t time.Time) string {
	if t.IsZero() {
		return unknownText
	}
	return timeText(t)
}

// pairText names a row: its crawler, with its identity, at its site.
func pairText(c *Crawler) string {
	return agentText(c) + " at " + clean(c.Host)
}

// userTriggeredIntro heads the user-triggered fetchers in the table and
// HTML formats.
const userTriggeredIntro = "User-triggered fetchers: clients that fetch a page because a person asked them to, which their operators say do not follow robots.txt. They are not crawlers: DISALLOWED counts the requests robots.txt disallows (recorded as violations), which count in no crawler's figures."
