package audit

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// detailText writes each row's detail (WriteTableDetail): crawlers, then
// user-triggered fetchers, then forgeries.
func (r *Report) detailText(w *bufio.Writer) {
	first := true
	for _, rows := range [][]Crawler{r.Crawlers, r.UserTriggered, r.Forgeries} {
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
func rowDetailText(w *bufio.Writer, c *Crawler) {
	fmt.Fprintf(w, "\n  %s: %s\n", pairText(c), identityText(c))
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
		fmt.Fprintf(w, "    %s (the earliest %d of %s):\n", what, len(c.ViolatingRequests), commas(int64(len(c.ViolatingRequests))+c.ViolatingRequestsMore))
		writeIndented(w, "      ", requestColumns, c.ViolatingRequests)
	}
	if len(c.GraceRequests) > 0 {
		fmt.Fprintf(w, "    grace denials (the earliest %d of %s):\n", len(c.GraceRequests), commas(int64(len(c.GraceRequests))+c.GraceRequestsMore))
		writeIndented(w, "      ", requestColumns, c.GraceRequests)
	}
	if len(c.RobotsFetches) > 0 {
		w.WriteString("    robots.txt fetches:\n")
		writeIndented(w, "      ", fetchColumns, c.RobotsFetches)
		if c.RobotsFetchesMore > 0 {
			fmt.Fprintf(w, "      and %s more\n", commas(int64(c.RobotsFetchesMore)))
		}
	} else {
		w.WriteString("    robots.txt fetches: none linked\n")
	}
}

// identityText says who a row is and how that was proven: "verified by
// ip_ranges", "unverified: no method could check the claim".
func identityText(c *Crawler) string {
	switch c.Identity {
	case IdentityVerified:
		if len(c.IdentityMethods) == 0 {
			return "verified"
		}
		return "verified by " + strings.Join(c.IdentityMethods, ", ")
	case IdentityUnverified:
		return "unverified: no method could check the claim"
	case IdentityPending:
		return "pending: the check had not finished when the request was decided"
	case IdentityUnconfirmed:
		return "unconfirmed: the check neither confirmed nor refuted the claim"
	case IdentityForged:
		return "forged: the claim failed its identity check"
	case IdentityNone:
		return "no claim checked"
	}
	return clean(c.Identity)
}

var addressColumns = []column[AddressCount]{
	{"ADDRESS", false, func(a *AddressCount) string { return clean(a.Address) }},
	{"REQUESTS", true, func(a *AddressCount) string { return commas(a.Requests) }},
	{"VIOLATIONS", true, func(a *AddressCount) string { return commas(a.Violations) }},
}

var userAgentColumns = []column[UserAgentCount]{
	{"REQUESTS", true, func(u *UserAgentCount) string {
		if u.Error > 0 {
			return "~" + commas(u.Requests)
		}
		return commas(u.Requests)
	}},
	{"USER-AGENT", false, func(u *UserAgentCount) string { return clean(u.UserAgent) }},
}

// requestColumns list requests; the target, the widest, last.
var requestColumns = []column[Request]{
	{"TIME (UTC)", false, func(r *Request) string { return timeOrUnknown(r.Time) }},
	{"INSTANCE", false, func(r *Request) string { return clean(r.Instance) }},
	{"CLIENT IP", false, func(r *Request) string { return clean(r.ClientIP) }},
	{"RULE", false, func(r *Request) string { return "line " + itoa(r.RuleLine) + " " + clean(r.Rule) }},
	{"JUDGED AGAINST", false, judgedText},
	{"COMPLIANCE", false, complianceText},
	{"METHOD", false, func(r *Request) string { return clean(r.Method) }},
	{"TARGET", false, targetText},
}

var fetchColumns = []column[Fetch]{
	{"FIRST (UTC)", false, func(f *Fetch) string { return timeOrUnknown(f.First) }},
	{"LAST (UTC)", false, func(f *Fetch) string { return timeOrUnknown(f.Last) }},
	{"COUNT", true, func(f *Fetch) string { return commas(f.Count) }},
	{"INSTANCE", false, func(f *Fetch) string { return clean(f.Instance) }},
	{"CLIENT IP", false, func(f *Fetch) string { return clean(f.ClientIP) }},
	{"VERSION", false, func(f *Fetch) string { return clean(f.Version) }},
	{"LINK", false, func(f *Fetch) string { return f.Link }},
}
