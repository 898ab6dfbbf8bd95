package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"
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
func Write(w io.Writer, r *audit.Report, f Format) error {
	switch f {
	case FormatTable:
		return Table(w, r)
	case FormatJSON:
		return r.WriteJSON(w)
	case FormatCSV:
		return CSV(w, r)
	case FormatHTML:
		return HTML(w, r)
	}
	return fmt.Errorf("format %q: want table, json, csv or html", f)
}

// Text shown for empty values.
const (
	noneText    = words.None
	noText      = "no"
	unknownText = "unknown"
	yesText     = "yes"
)

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

// fetchedDetail adds the time of the earliest fetch to Crawler.Fetched.
func fetchedDetail(c *audit.Crawler) string {
	if c.FetchedBy.IsZero() {
		return c.Fetched()
	}
	return c.Fetched() + ", " + timeText(c.FetchedBy)
}

// modeText names a row's modes; "(none)" when its records said none.
func modeText(c *audit.Crawler) string { return words.Clean(c.Mode) }

// ipsText counts a row's client IPs: "3", or "64+" past MaxClientIPs.
func ipsText(c *audit.Crawler) string {
	if c.ClientIPsMore {
		return words.Commas(int64(c.ClientIPs)) + "+"
	}
	return words.Commas(int64(c.ClientIPs))
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
func skippedText(c audit.LineCounts) string {
	var parts []string
	for k := range audit.NumSkipKinds {
		if n := c.Skipped[k.String()]; n > 0 {
			parts = append(parts, words.Commas(n)+" "+k.String())
		}
	}
	return strings.Join(parts, ", ")
}

// escalationsIntro heads the escalated crawlers in the table and HTML
// formats.
const escalationsIntro = "Escalated crawlers: recorded with a violation, then, for a while, denied what their group disallows even in log mode (enforce) or everything but robots.txt (block). DENIED counts the requests refused while escalated."

// escalationIPText shows the address an escalation holds a claim to:
// "(any)" for a verified crawler, escalated wherever it asks from.
func escalationIPText(e *audit.Escalation) string {
	if e.Identity == audit.IdentityVerified {
		return "(any)"
	}
	return words.Clean(e.ClientIP)
}

// timeOrUnknown writes a time as timeText does, "unknown" for zero.
func timeOrUnknown(t time.Time) string {
	if t.IsZero() {
		return unknownText
	}
	return timeText(t)
}

// userTriggeredIntro heads the user-triggered fetchers in the table and
// HTML formats.
const userTriggeredIntro = "User-triggered fetchers: clients that fetch a page because a person asked them to, which their operators say do not follow robots.txt. They are not crawlers: DISALLOWED counts the requests robots.txt disallows (recorded as violations), which count in no crawler's figures."
