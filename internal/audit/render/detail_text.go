package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"
)

// The detail of a row as lines of text, shared by the csv and table
// formats (and the HTML's titles). Every value from the records goes
// through words.Clean.

// addressLines lists a row's client addresses: "192.0.2.1 12 3" (address,
// requests, violations) per line.
func addressLines(c *audit.Crawler) string {
	var lines []string
	for _, a := range c.ClientAddresses {
		lines = append(lines, words.Clean(a.Address)+" "+itoa(a.Requests)+" "+itoa(a.Violations))
	}
	return strings.Join(lines, "\n")
}

// userAgentLines lists a row's User-Agent headers: "12 GPTBot/1.2" per
// line, the count "~12" when it is an estimate.
func userAgentLines(c *audit.Crawler) string {
	var lines []string
	for _, u := range c.UserAgents {
		n := itoa(u.Requests)
		if u.Error > 0 {
			n = "~" + n
		}
		lines = append(lines, n+" "+words.Clean(u.UserAgent))
	}
	return strings.Join(lines, "\n")
}

// requestLines lists requests, one per line (see CSV), then "+N
// more" when more were not listed.
func requestLines(rs []audit.Request, more int64) string {
	var lines []string
	for i := range rs {
		lines = append(lines, requestLine(&rs[i]))
	}
	if more > 0 {
		lines = append(lines, "+"+words.Commas(more)+" more")
	}
	return strings.Join(lines, "\n")
}

// requestLine writes a request on one line: "2026-11-22T10:00:01Z a.log
// GET /private/a?x=1 2 /private/ 0194152f0194152f+a9c3… violation".
func requestLine(r *audit.Request) string {
	return strings.Join([]string{rfc3339OrNone(r.Time), words.Clean(r.Instance), words.Clean(r.Method), targetText(r),
		strconv.FormatInt(r.RuleLine, 10), words.Clean(r.Rule), judgedText(r), complianceText(r)}, " ")
}

// targetText is a request's target, marked when it was cut.
func targetText(r *audit.Request) string {
	if r.TargetCut {
		return words.Clean(r.Target) + "…(cut)"
	}
	return words.Clean(r.Target)
}

// judgedText names the versions a request was judged against: "a+b", with
// "(served)" when they are those served to the crawler.
func judgedText(r *audit.Request) string {
	var vs []string
	for _, v := range r.JudgedVersions {
		vs = append(vs, words.Clean(v))
	}
	s := strings.Join(vs, "+")
	if s == "" {
		s = noneText
	}
	if r.Served {
		s += "(served)"
	}
	return s
}

// complianceText is a request's compliance as counted, with the recorded
// one after it when they differ: "grace(recorded violation)".
func complianceText(r *audit.Request) string {
	if r.Recorded != r.Compliance {
		return r.Compliance + "(recorded " + r.Recorded + ")"
	}
	return r.Compliance
}

// fetchLines lists a row's robots.txt fetches: "first last count instance
// client version link" per line.
func fetchLines(c *audit.Crawler) string {
	var lines []string
	for _, f := range c.RobotsFetches {
		lines = append(lines, strings.Join([]string{rfc3339OrNone(f.First), rfc3339OrNone(f.Last), itoa(f.Count),
			words.Clean(f.Instance), words.Clean(f.ClientIP), words.Clean(f.Version), f.Link}, " "))
	}
	if c.RobotsFetchesMore > 0 {
		lines = append(lines, fmt.Sprintf("+%d more", c.RobotsFetchesMore))
	}
	return strings.Join(lines, "\n")
}

// rfc3339OrNone writes a time as RFC 3339 in UTC, "(none)" for zero.
func rfc3339OrNone(t time.Time) string {
	if t.IsZero() {
		return noneText
	}
	return rfc3339(t)
}
