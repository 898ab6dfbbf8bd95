package audit

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteTable writes the report as aligned text: a summary line, a table of
// crawlers, a table of forged claims, a table of user-triggered fetchers,
// a table of escalated crawlers, each violating crawler's top disallowed
// paths and robots.txt versions, then the skipped lines and notes. Times
// are UTC.
func (r *Report) WriteTable(w io.Writer) error {
	return r.writeTable(w, false)
}

// WriteTableDetail writes the table of WriteTable with, before the notes,
// each row's detail: its identity and how it was proven, its client
// addresses, User-Agent headers, violating requests and robots.txt
// fetches.
func (r *Report) WriteTableDetail(w io.Writer) error {
	return r.writeTable(w, true)
}

func (r *Report) writeTable(w io.Writer, detail bool) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "robots.txt compliance audit: "+r.headline())
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
	r.pathsText(bw)
	if detail {
		r.detailText(bw)
	}
	if notes := r.notes(); len(notes) > 0 {
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
func (r *Report) headline() string {
	var b strings.Builder
	b.WriteString(plural(r.Total.Records-r.Total.Filtered-r.Total.Duplicates, "record"))
	if r.Total.Filtered > 0 {
		fmt.Fprintf(&b, " (%s more left out by the filter)", commas(r.Total.Filtered))
	}
	if r.Total.Duplicates > 0 {
		fmt.Fprintf(&b, " (%s more of requests counted once)", commas(r.Total.Duplicates))
	}
	if f := r.Total.Fetches - r.Total.FetchesFiltered; f > 0 {
		fmt.Fprintf(&b, " and %s", pluralVerb(f, "robots.txt fetch", "robots.txt fetches"))
	}
	if len(r.Inputs) == 1 {
		fmt.Fprintf(&b, " from %s", inputName(r.Inputs[0].Name))
	} else {
		fmt.Fprintf(&b, " from %d inputs", len(r.Inputs))
	}
	if !r.First.IsZero() {
		fmt.Fprintf(&b, ", %s to %s UTC", timeText(r.First), timeText(r.Last))
	}
	if f := r.filterText(); f != "" {
		fmt.Fprintf(&b, "; %s", f)
	}
	return b.String()
}

// filterText describes the filter: "host example.com, since 2026-11-21
// 00:00:00"; "" for none.
func (r *Report) filterText() string {
	var parts []string
	f := r.Filter
	if f.Agent != "" {
		parts = append(parts, "agent "+clean(f.Agent))
	}
	if f.Host != "" {
		parts = append(parts, "host "+clean(f.Host))
	}
	if f.Mode != "" {
		parts = append(parts, "mode "+clean(f.Mode))
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
var crawlerColumns = []column[Crawler]{
	{"AGENT", false, func(c *Crawler) string { return clean(c.Agent) }},
	{"IDENTITY", false, func(c *Crawler) string { return clean(c.Identity) }},
	{"SITE", false, func(c *Crawler) string { return clean(c.Host) }},
	{"MODE", false, modeText},
	{"REQUESTS", true, func(c *Crawler) string { return commas(c.Requests) }},
	{"VIOLATIONS", true, func(c *Crawler) string { return commas(c.Violations) }},
	{"PROTECTIVE", true, func(c *Crawler) string { return commas(c.Protective) }},
	{"GRACE", true, func(c *Crawler) string { return commas(c.Grace) }},
	{"RATE", true, func(c *Crawler) string { return percent(c.ViolationRate) }},
	{"AFTER FETCH", true, func(c *Crawler) string { return commas(c.ViolationsAfterFetch) }},
	{"ROBOTS.TXT FETCHED", false, fetchedText},
	{"FIRST SEEN", false, func(c *Crawler) string { return timeText(c.FirstSeen) }},
	{"LAST SEEN", false, func(c *Crawler) string { return timeText(c.LastSeen) }},
}

// forgeryColumns are the forgeries table's columns: no rate, since the
// requests are no crawler's.
var forgeryColumns = []column[Crawler]{
	{"CLAIMED", false, agentText},
	{"SITE", false, func(c *Crawler) string { return clean(c.Host) }},
	{"MODE", false, modeText},
	{"REQUESTS", true, func(c *Crawler) string { return commas(c.Requests) }},
	{"DENIED", true, func(c *Crawler) string { return commas(c.Denied) }},
	{"CLIENT IPS", true, ipsText},
	{"ROBOTS.TXT FETCHED", false, fetchedText},
	{"FIRST SEEN", false, func(c *Crawler) string { return timeText(c.FirstSeen) }},
	{"LAST SEEN", false, func(c *Crawler) string { return timeText(c.LastSeen) }},
}

// userTriggeredColumns are the user-triggered fetchers table's columns:
// DISALLOWED, not VIOLATIONS, and no rate (see userTriggeredIntro).
var userTriggeredColumns = []column[Crawler]{
	{"AGENT", false, func(c *Crawler) string { return clean(c.Agent) }},
	{"IDENTITY", false, func(c *Crawler) string { return clean(c.Identity) }},
	{"SITE", false, func(c *Crawler) string { return clean(c.Host) }},
	{"MODE", false, modeText},
	{"REQUESTS", true, func(c *Crawler) string { return commas(c.Requests) }},
	{"DISALLOWED", true, func(c *Crawler) string { return commas(c.Violations) }},
	{"PROTECTIVE", true, func(c *Crawler) string { return commas(c.Protective) }},
	{"GRACE", true, func(c *Crawler) string { return commas(c.Grace) }},
	{"ROBOTS.TXT FETCHED", false, fetchedText},
	{"FIRST SEEN", false, func(c *Crawler) string { return timeText(c.FirstSeen) }},
	{"LAST SEEN", false, func(c *Crawler) string { return timeText(c.LastSeen) }},
}

// escalationColumns are the escalated crawlers table's columns; the
// target that began an escalation comes last, as the widest.
var escalationColumns = []column[Escalation]{
	{"AGENT", false, func(e *Escalation) string { return clean(e.Agent) }},
	{"IDENTITY", false, func(e *Escalation) string { return clean(e.Identity) }},
	{"CLIENT IP", false, escalationIPText},
	{"SITE", false, func(e *Escalation) string { return clean(e.Site) }},
	{"MODE", false, func(e *Escalation) string { return clean(e.Mode) }},
	{"SINCE", false, func(e *Escalation) string { return timeOrUnknown(e.Since) }},
	{"UNTIL", false, func(e *Escalation) string { return timeOrUnknown(e.Until) }},
	{"DENIED", true, func(e *Escalation) string { return commas(e.Denied) }},
	{"VIOLATIONS", true, func(e *Escalation) string { return commas(e.Violations) }},
	{"STARTED AT", false, func(e *Escalation) string { return timeOrUnknown(e.StartedAt) }},
	{"STARTED BY", false, func(e *Escalation) string { return clean(e.EscalatedBy) }},
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
func (r *Report) pathsText(w *bufio.Writer) {
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
		fmt.Fprintf(w, "\n  %s: %s, %s after fetching robots.txt\n", pairText(c), plural(c.Violations, "violation"), commas(c.ViolationsAfterFetch))
		width := 0
		for _, p := range c.TopPaths {
			width = max(width, len(countText(p)))
		}
		for _, p := range c.TopPaths {
			fmt.Fprintf(w, "    %*s  %s\n", width, countText(p), clean(p.Path))
		}
		fmt.Fprintf(w, "    robots.txt versions: %s\n", versionsText(c.RobotsVersions))
		if len(c.JudgedVersions) > 0 {
			fmt.Fprintf(w, "    violations judged against: %s\n", versionsText(c.JudgedVersions))
		}
	}
}

// versionsText lists versions with their counts: "a9c3… (8), 347d… (2)".
func versionsText(vs []VersionCount) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%s (%s)", clean(v.Hash), commas(v.Count)))
	}
	return strings.Join(parts, ", ")
}

// countText writes a path's count, "~12±3" when it is an estimate.
func countText(p PathCount) string {
	if p.Error > 0 {
		return fmt.Sprintf("~%s±%s", commas(p.Count), commas(p.Error))
	}
	return commas(p.Count)
}
