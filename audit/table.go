package audit

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteTable writes the report as aligned text: a summary line, a table of
// crawlers, each violating crawler's top disallowed paths and robots.txt
// versions, then the skipped lines and notes. Times are UTC.
func (r *Report) WriteTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "robots.txt compliance audit: "+r.headline())
	if s := skippedText(r.Total); s != "" {
		fmt.Fprintf(bw, "Skipped lines: %s.\n", s)
	}
	if len(r.Crawlers) == 0 {
		fmt.Fprintln(bw, "\nNo compliance records.")
	} else {
		bw.WriteString("\n")
		r.crawlerTable(bw)
		r.pathsText(bw)
	}
	if notes := r.notes(); len(notes) > 0 {
		bw.WriteString("\nNotes:\n")
		for _, n := range notes {
			fmt.Fprintf(bw, "- %s\n", n)
		}
	}
	return bw.Flush()
}

// headline sums up what was read: "412 records from 2 inputs, 2026-11-21
// 20:56:01 to 2026-11-21 20:56:09 UTC".
func (r *Report) headline() string {
	var b strings.Builder
	b.WriteString(plural(r.Total.Records-r.Total.Filtered, "record"))
	if r.Total.Filtered > 0 {
		fmt.Fprintf(&b, " (%s more left out by the filter)", commas(r.Total.Filtered))
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
	if !f.Since.IsZero() {
		parts = append(parts, "since "+timeText(f.Since))
	}
	if !f.Until.IsZero() {
		parts = append(parts, "until "+timeText(f.Until))
	}
	return strings.Join(parts, ", ")
}

// tableHeader are the crawler table's columns; numeric ones align right.
var tableHeader = []struct {
	title string
	right bool
}{
	{"AGENT", false}, {"HOST", false}, {"REQUESTS", true}, {"DENIED", true}, {"GRACE", true},
	{"VIOLATIONS", true}, {"RATE", true}, {"AFTER FETCH", true}, {"ROBOTS.TXT FETCHED", false},
	{"FIRST SEEN", false}, {"LAST SEEN", false},
}

func (r *Report) crawlerTable(w *bufio.Writer) {
	rows := [][]string{make([]string, len(tableHeader))}
	for i, h := range tableHeader {
		rows[0][i] = h.title
	}
	for i := range r.Crawlers {
		c := &r.Crawlers[i]
		rows = append(rows, []string{
			clean(c.Agent), clean(c.Host), commas(c.Requests), commas(c.Denied), commas(c.Grace),
			commas(c.Violations), percent(c.ViolationRate), commas(c.ViolationsAfterFetch),
			fetchedText(c), timeText(c.FirstSeen), timeText(c.LastSeen),
		})
	}
	widths := make([]int, len(tableHeader))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				line.WriteString("  ")
			}
			if tableHeader[i].right {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		w.WriteString(strings.TrimRight(line.String(), " ") + "\n")
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
		var versions []string
		for _, v := range c.RobotsVersions {
			versions = append(versions, fmt.Sprintf("%s (%s)", clean(v.Hash), commas(v.Count)))
		}
		fmt.Fprintf(w, "    robots.txt versions: %s\n", strings.Join(versions, ", "))
	}
}

// countText writes a path's count, "~12±3" when it is an estimate.
func countText(p PathCount) string {
	if p.Error > 0 {
		return fmt.Sprintf("~%s±%s", commas(p.Count), commas(p.Error))
	}
	return commas(p.Count)
}
