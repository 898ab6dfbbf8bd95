package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"
)

// Table writes the report as aligned text: a summary line, a table of
// crawlers, a table of forged claims, a table of user-triggered fetchers,
// a table of escalated crawlers, each violating crawler's top disallowed
// paths and robots.txt versions, then the skipped lines and notes. Times
// are UTC.
func Table(w io.Writer, r *audit.Report) error {
	return writeTable(w, r, false)
}

// TableDetail writes the table of Table with, before the notes,
// each row's detail: its identity and how it was proven, its client
// addresses, User-Agent headers, violating requests and robots.txt
// fetches.
func TableDetail(w io.Writer, r *audit.Report) error {
	return writeTable(w, r, true)
}

func writeTable(w io.Writer, r *audit.Report, detail bool) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "robots.txt compliance audit: "+headline(r))
	if s := skippedText(r.Total); s != "" {
		fmt.Fprintf(bw, "Skipped lines: %s.\n", s)
	}
	if len(r.Crawlers) == 0 && len(r.Forgeries) == 0 && len(r.UserTriggered) == 0 {
		fmt.Fprintln(bw, "\nNo compliance records.")
	}
	if len(r.Crawlers) > 0 {
		bw.WriteString("\n")
		writeColumns(bw, crawlerColumns, r.Crawlers)
	}
	if len(r.Forgeries) > 0 {
		fmt.Fprintf(bw, "\n%s\n\n", forgeriesIntro)
		writeColumns(bw, forgeryColumns, r.Forgeries)
	}
	if len(r.UserTriggered) > 0 {
		fmt.Fprintf(bw, "\n%s\n\n", userTriggeredIntro)
		writeColumns(bw, userTriggeredColumns, r.UserTriggered)
	}
	if len(r.Escalations) > 0 {
		fmt.Fprintf(bw, "\n%s\n\n", escalationsIntro)
		writeColumns(bw, escalationColumns, r.Escalations)
	}
	pathsText(r, bw)
	if detail {
		detailText(r, bw)
	}
	if notes := r.Notes(); len(notes) > 0 {
		bw.WriteString("\nNotes:\n")
		for _, n := range notes {
			fmt.Fprintf(bw, "- %s\n", n)
		}
	}
	return bw.Flush()
}

// forgeriesIntro heads the forgeries in the table and HTML formats.
const forgeriesIntro = "Forged claims: requests that claimed a crawler's product token and failed its identity check. They are not that crawler's, and count in none of its rows."

// headline sums up what was read: "412 records and 9 robots.txt fetches
// from 2 inputs, 2026-11-21 20:56:01 to 2026-11-21 20:56:09 UTC".
func headline(r *audit.Report) string {
	var b strings.Builder
	b.WriteString(words.Plural(r.Total.Records-r.Total.Filtered-r.Total.Duplicates, "record"))
	if r.Total.Filtered > 0 {
		fmt.Fprintf(&b, " (%s more left out by the filter)", words.Commas(r.Total.Filtered))
	}
	if r.Total.Duplicates > 0 {
		fmt.Fprintf(&b, " (%s more of requests counted once)", words.Commas(r.Total.Duplicates))
	}
	if f := r.Total.Fetches - r.Total.FetchesFiltered; f > 0 {
		fmt.Fprintf(&b, " and %s", words.PluralVerb(f, "robots.txt fetch", "robots.txt fetches"))
	}
	if len(r.Inputs) == 1 {
		fmt.Fprintf(&b, " from %s", words.InputName(r.Inputs[0].Name))
	} else {
		fmt.Fprintf(&b, " from %d inputs", len(r.Inputs))
	}
	if !r.First.IsZero() {
		fmt.Fprintf(&b, ", %s to %s UTC", timeText(r.First), timeText(r.Last))
	}
	if f := filterText(r); f != "" {
		fmt.Fprintf(&b, "; %s", f)
	}
	return b.String()
}

// filterText describes the filter: "host example.com, since 2026-11-21
// 00:00:00"; "" for none.
func filterText(r *audit.Report) string {
	var parts []string
	f := r.Filter
	if f.Agent != "" {
		parts = append(parts, "agent "+words.Clean(f.Agent))
	}
	if f.Host != "" {
		parts = append(parts, "host "+words.Clean(f.Host))
	}
	if f.Mode != "" {
		parts = append(parts, "mode "+words.Clean(f.Mode))
	}
	if !f.Since.IsZero() {
		parts = append(parts, "since "+timeText(f.Since))
	}
	if !f.Until.IsZero() {
		parts = append(parts, "until "+timeText(f.Until))
	}
	return strings.Join(parts, ", ")
}

// column is a column of a text table of rows of T; numeric ones align
// right.
type column[T any] struct {
	title string
	right bool
	cell  func(c *T) string
}

// crawlerColumns are the crawler table's columns.
var crawlerColumns = []column[audit.Crawler]{
	{"AGENT", false, func(c *audit.Crawler) string { return words.Clean(c.Agent) }},
	{"IDENTITY", false, func(c *audit.Crawler) string { return words.Clean(c.Identity) }},
	{"SITE", false, func(c *audit.Crawler) string { return words.Clean(c.Host) }},
	{"MODE", false, modeText},
	{"REQUESTS", true, func(c *audit.Crawler) string { return words.Commas(c.Requests) }},
	{"VIOLATIONS", true, func(c *audit.Crawler) string { return words.Commas(c.Violations) }},
	{"PROTECTIVE", true, func(c *audit.Crawler) string { return words.Commas(c.Protective) }},
	{"GRACE", true, func(c *audit.Crawler) string { return words.Commas(c.Grace) }},
	{"RATE", true, func(c *audit.Crawler) string { return percent(c.ViolationRate) }},
	{"AFTER FETCH", true, func(c *audit.Crawler) string { return words.Commas(c.ViolationsAfterFetch) }},
	{"ROBOTS.TXT FETCHED", false, (*audit.Crawler).Fetched},
	{"FIRST SEEN", false, func(c *audit.Crawler) string { return timeText(c.FirstSeen) }},
	{"LAST SEEN", false, func(c *audit.Crawler) string { return timeText(c.LastSeen) }},
}

// forgeryColumns are the forgeries table's columns: no rate, since the
// requests are no crawler's.
var forgeryColumns = []column[audit.Crawler]{
	{"CLAIMED", false, (*audit.Crawler).Name},
	{"SITE", false, func(c *audit.Crawler) string { return words.Clean(c.Host) }},
	{"MODE", false, modeText},
	{"REQUESTS", true, func(c *audit.Crawler) string { return words.Commas(c.Requests) }},
	{"DENIED", true, func(c *audit.Crawler) string { return words.Commas(c.Denied) }},
	{"CLIENT IPS", true, ipsText},
	{"ROBOTS.TXT FETCHED", false, (*audit.Crawler).Fetched},
	{"FIRST SEEN", false, func(c *audit.Crawler) string { return timeText(c.FirstSeen) }},
	{"LAST SEEN", false, func(c *audit.Crawler) string { return timeText(c.LastSeen) }},
}

// userTriggeredColumns are the user-triggered fetchers table's columns:
// DISALLOWED, not VIOLATIONS, and no rate (see userTriggeredIntro).
var userTriggeredColumns = []column[audit.Crawler]{
	{"AGENT", false, func(c *audit.Crawler) string { return words.Clean(c.Agent) }},
	{"IDENTITY", false, func(c *audit.Crawler) string { return words.Clean(c.Identity) }},
	{"SITE", false, func(c *audit.Crawler) string { return words.Clean(c.Host) }},
	{"MODE", false, modeText},
	{"REQUESTS", true, func(c *audit.Crawler) string { return words.Commas(c.Requests) }},
	{"DISALLOWED", true, func(c *audit.Crawler) string { return words.Commas(c.Violations) }},
	{"PROTECTIVE", true, func(c *audit.Crawler) string { return words.Commas(c.Protective) }},
	{"GRACE", true, func(c *audit.Crawler) string { return words.Commas(c.Grace) }},
	{"ROBOTS.TXT FETCHED", false, (*audit.Crawler).Fetched},
	{"FIRST SEEN", false, func(c *audit.Crawler) string { return timeText(c.FirstSeen) }},
	{"LAST SEEN", false, func(c *audit.Crawler) string { return timeText(c.LastSeen) }},
}

// escalationColumns are the escalated crawlers table's columns; the
// target that began an escalation comes last, as the widest.
var escalationColumns = []column[audit.Escalation]{
	{"AGENT", false, func(e *audit.Escalation) string { return words.Clean(e.Agent) }},
	{"IDENTITY", false, func(e *audit.Escalation) string { return words.Clean(e.Identity) }},
	{"CLIENT IP", false, escalationIPText},
	{"SITE", false, func(e *audit.Escalation) string { return words.Clean(e.Site) }},
	{"MODE", false, func(e *audit.Escalation) string { return words.Clean(e.Mode) }},
	{"SINCE", false, func(e *audit.Escalation) string { return timeOrUnknown(e.Since) }},
	{"UNTIL", false, func(e *audit.Escalation) string { return timeOrUnknown(e.Until) }},
	{"DENIED", true, func(e *audit.Escalation) string { return words.Commas(e.Denied) }},
	{"VIOLATIONS", true, func(e *audit.Escalation) string { return words.Commas(e.Violations) }},
	{"STARTED AT", false, func(e *audit.Escalation) string { return timeOrUnknown(e.StartedAt) }},
	{"STARTED BY", false, func(e *audit.Escalation) string { return words.Clean(e.EscalatedBy) }},
}

// writeColumns writes rows as an aligned table under the columns' titles.
func writeColumns[T any](w *bufio.Writer, cols []column[T], rows []T) {
	writeIndented(w, "", cols, rows)
}

// writeIndented is writeColumns with each line after indent.
func writeIndented[T any](w *bufio.Writer, indent string, cols []column[T], rows []T) {
	cells := [][]string{make([]string, len(cols))}
	for i, col := range cols {
		cells[0][i] = col.title
	}
	for i := range rows {
		row := make([]string, len(cols))
		for j, col := range cols {
			row[j] = col.cell(&rows[i])
		}
		cells = append(cells, row)
	}
	widths := make([]int, len(cols))
	for _, row := range cells {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range cells {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				line.WriteString("  ")
			}
			if cols[i].right {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		w.WriteString(indent + strings.TrimRight(line.String(), " ") + "\n")
	}
}

// pathsText lists, for each crawler with violations, its top disallowed
// paths and the robots.txt versions its records were judged against.
func pathsText(r *audit.Report, w *bufio.Writer) {
	first := true
	for i := range r.Crawlers {
		c := &r.Crawlers[i]
		if c.Violations == 0 {
			continue
		}
		if first {
			w.WriteString("\nTop disallowed paths:\n")
			first = false
		}
		fmt.Fprintf(w, "\n  %s: %s, %s after fetching robots.txt\n", c.String(), words.Plural(c.Violations, "violation"), words.Commas(c.ViolationsAfterFetch))
		width := 0
		for _, p := range c.TopPaths {
			width = max(width, len(countText(p)))
		}
		for _, p := range c.TopPaths {
			fmt.Fprintf(w, "    %*s  %s\n", width, countText(p), words.Clean(p.Path))
		}
		fmt.Fprintf(w, "    robots.txt versions: %s\n", versionsText(c.RobotsVersions))
		if len(c.JudgedVersions) > 0 {
			fmt.Fprintf(w, "    violations judged against: %s\n", versionsText(c.JudgedVersions))
		}
	}
}

// versionsText lists versions with their counts: "a9c3… (8), 347d… (2)".
func versionsText(vs []audit.VersionCount) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%s (%s)", words.Clean(v.Hash), words.Commas(v.Count)))
	}
	return strings.Join(parts, ", ")
}

// countText writes a path's count, "~12±3" when it is an estimate.
func countText(p audit.PathCount) string {
	if p.Error > 0 {
		return fmt.Sprintf("~%s±%s", words.Commas(p.Count), words.Commas(p.Error))
	}
	return words.Commas(p.Count)
}
