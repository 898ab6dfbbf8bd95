package render

import (
	"bufio"
	"fmt"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// detailText writes each row's detail (TableDetail): crawlers, then
// user-triggered fetchers, then forgeries.
func detailText(r *audit.Report, w *bufio.Writer) {
	first := true
	for _, rows := range [][]audit.Crawler{r.Crawlers, r.UserTriggered, r.Forgeries} {
		for i := range rows {
			if first {
				w.WriteString("\nDetail:\n")
				first = false
			}
			rowDetailText(w, &rows[i])
		}
	}
}

// rowDetailText writes one row's detail.
func rowDetailText(w *bufio.Writer, c *audit.Crawler) {
	fmt.Fprintf(w, "\n  %s: %s\n", c.String(), c.Proven())
	if len(c.ClientAddresses) > 0 {
		w.WriteString("    client addresses:\n")
		writeIndented(w, "      ", addressColumns, c.ClientAddresses)
	}
	if len(c.UserAgents) > 0 {
		w.WriteString("    User-Agent headers:\n")
		writeIndented(w, "      ", userAgentColumns, c.UserAgents)
	}
	what := "violating requests"
	if c.FetcherClass == record.FetcherUserTriggered {
		what = "disallowed requests"
	}
	if len(c.ViolatingRequests) > 0 {
		fmt.Fprintf(w, "    %s (the earliest %d of %s):\n", what, len(c.ViolatingRequests), words.Commas(int64(len(c.ViolatingRequests))+c.ViolatingRequestsMore))
		writeIndented(w, "      ", requestColumns, c.ViolatingRequests)
	}
	if len(c.GraceRequests) > 0 {
		fmt.Fprintf(w, "    grace denials (the earliest %d of %s):\n", len(c.GraceRequests), words.Commas(int64(len(c.GraceRequests))+c.GraceRequestsMore))
		writeIndented(w, "      ", requestColumns, c.GraceRequests)
	}
	if len(c.RobotsFetches) > 0 {
		w.WriteString("    robots.txt fetches:\n")
		writeIndented(w, "      ", fetchColumns, c.RobotsFetches)
		if c.RobotsFetchesMore > 0 {
			fmt.Fprintf(w, "      and %s more\n", words.Commas(int64(c.RobotsFetchesMore)))
		}
	} else {
		w.WriteString("    robots.txt fetches: none linked\n")
	}
}

var addressColumns = []column[audit.AddressCount]{
	{"ADDRESS", false, func(a *audit.AddressCount) string { return words.Clean(a.Address) }},
	{"REQUESTS", true, func(a *audit.AddressCount) string { return words.Commas(a.Requests) }},
	{"VIOLATIONS", true, func(a *audit.AddressCount) string { return words.Commas(a.Violations) }},
}

var userAgentColumns = []column[audit.UserAgentCount]{
	{"REQUESTS", true, func(u *audit.UserAgentCount) string {
		if u.Error > 0 {
			return "~" + words.Commas(u.Requests)
		}
		return words.Commas(u.Requests)
	}},
	{"USER-AGENT", false, func(u *audit.UserAgentCount) string { return words.Clean(u.UserAgent) }},
}

// requestColumns list requests; the target, the widest, last.
var requestColumns = []column[audit.Request]{
	{"TIME (UTC)", false, func(r *audit.Request) string { return timeOrUnknown(r.Time) }},
	{"INSTANCE", false, func(r *audit.Request) string { return words.Clean(r.Instance) }},
	{"CLIENT IP", false, func(r *audit.Request) string { return words.Clean(r.ClientIP) }},
	{"RULE", false, func(r *audit.Request) string { return "line " + itoa(r.RuleLine) + " " + words.Clean(r.Rule) }},
	{"JUDGED AGAINST", false, judgedText},
	{"COMPLIANCE", false, complianceText},
	{"METHOD", false, func(r *audit.Request) string { return words.Clean(r.Method) }},
	{"TARGET", false, targetText},
}

var fetchColumns = []column[audit.Fetch]{
	{"FIRST (UTC)", false, func(f *audit.Fetch) string { return timeOrUnknown(f.First) }},
	{"LAST (UTC)", false, func(f *audit.Fetch) string { return timeOrUnknown(f.Last) }},
	{"COUNT", true, func(f *audit.Fetch) string { return words.Commas(f.Count) }},
	{"INSTANCE", false, func(f *audit.Fetch) string { return words.Clean(f.Instance) }},
	{"CLIENT IP", false, func(f *audit.Fetch) string { return words.Clean(f.ClientIP) }},
	{"VERSION", false, func(f *audit.Fetch) string { return words.Clean(f.Version) }},
	{"LINK", false, func(f *audit.Fetch) string { return f.Link }},
}
