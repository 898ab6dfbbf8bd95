package render

import (
	"cmp"
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// csvHeader are the columns of the csv format: those of the first
// version, in their places, then those added since.
var csvHeader = []string{
	"agent", "host", "requests", "allowed", "denied", "grace", "violations", "violation_rate",
	"violations_after_fetch", "fetched_robots", "fetched_by", "first_seen", "last_seen",
	"top_paths", "robots_versions",
	"identity", "mode", "protective", "fetched_link", "client_ips", "judged_versions",
	"fetcher_class", "client_addresses", "user_agents", "violating_requests", "robots_fetches",
}

// CSV writes one row per crawler, then one per forgery (identity
// "forged"), then one per user-triggered fetcher (fetcher_class
// "user_triggered"), after a header row. host is the site when records name one.
// Times are RFC 3339 in UTC ("" when unknown); violation_rate is a
// fraction. top_paths holds one "count path" per line (paths have no line
// breaks), count prefixed with "~" when it is an estimate;
// robots_versions and judged_versions one "hash count" per line (hash
// "(none)" when unknown); client_ips is a count, "64+" past
// MaxClientIPs. An agent or host that a spreadsheet would read as a
// formula (starting with =, +, -, @, tab or CR) is prefixed with "'".
func CSV(w io.Writer, r *audit.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, rows := range [][]audit.Crawler{r.Crawlers, r.Forgeries, r.UserTriggered} {
		for i := range rows {
			if err := cw.Write(csvRow(&rows[i])); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRow(c *audit.Crawler) []string {
	var paths []string
	for _, p := range c.TopPaths {
		n := strconv.FormatInt(p.Count, 10)
		if p.Error > 0 {
			n = "~" + n
		}
		paths = append(paths, n+" "+p.Path)
	}
	return []string{
		noFormula(c.Agent), noFormula(c.Host),
		itoa(c.Requests), itoa(c.Allowed), itoa(c.Denied), itoa(c.Grace), itoa(c.Violations),
		strconv.FormatFloat(c.ViolationRate, 'f', 4, 64),
		itoa(c.ViolationsAfterFetch), strconv.FormatBool(c.FetchedRobots),
		rfc3339(c.FetchedBy), rfc3339(c.FirstSeen), rfc3339(c.LastSeen),
		strings.Join(paths, "\n"), csvVersions(c.RobotsVersions),
		noFormula(c.Identity), c.Mode, itoa(c.Protective), c.FetchedLink, ipsText(c), csvVersions(c.JudgedVersions),
		c.FetcherClass, noFormula(addressLines(c)), noFormula(userAgentLines(c)), noFormula(requestLines(c.ViolatingRequests, c.ViolatingRequestsMore)),
		noFormula(fetchLines(c)),
	}
}

func csvVersions(vs []audit.VersionCount) string {
	var out []string
	for _, v := range vs {
		out = append(out, cmp.Or(v.Hash, noneText)+" "+strconv.FormatInt(v.Count, 10))
	}
	return strings.Join(out, "\n")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// noFormula keeps a spreadsheet from reading a cell as a formula (OWASP's
// advice on CSV injection).
func noFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
