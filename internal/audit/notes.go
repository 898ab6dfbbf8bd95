package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"
)

// Notes are the caveats of a report, in plain sentences, shared by its
// table and HTML forms (package render) and its evidence. Each is
// computed from the report's own numbers, and printed only when what it
// says is true of them.
func (r *Report) Notes() []string {
	var n []string
	add := func(format string, args ...any) { n = append(n, fmt.Sprintf(format, args...)) }
	if r.OnlyDenials {
		s := "No allowed requests were recorded; with log_allowed on they would be. Without them, RATE is the share of violations among denials, not among all requests"
		if everyRate(r, 1) {
			s += ", so every rate is 100%"
		}
		add("%s.", s)
	}
	m := r.Missing
	if m.Time > 0 {
		add("Records without a readable time: %s; they are counted, but not in first or last seen, nor over time.", words.Commas(m.Time))
	}
	if l := r.Legacy; l.Denials > 0 {
		counted := words.PluralVerb(l.Violations, "counted as a violation", "counted as violations")
		if g := l.Denials - l.Violations; g > 0 {
			counted += ", " + words.Commas(g) + " as grace"
		}
		add("%s from records without compliance (record version 1), which cannot tell protective denials (an alternate spelling of the path, a fail-closed denial) from violations: %s.",
			words.PluralVerb(l.Denials, "denial comes", "denials come"), counted)
		if l.WithoutGrace > 0 {
			add("%s of them lack grace too (an older record schema still): they count as violations even where a robots.txt change had just disallowed the path.", words.Commas(l.WithoutGrace))
		}
	}
	if k := countRows(r, func(c *Crawler) bool { return c.FetchUnknown }); k > 0 {
		whose := "their records"
		if k == 1 {
			whose = "its records"
		}
		add("%s robots.txt fetched \"unknown\": %s do not say whether the crawler had been served robots.txt (an older record schema), and no robots.txt serve in the logs links to it.",
			words.PluralVerb(int64(k), "row shows", "rows show"), whose)
	}
	if m.RobotsHash > 0 {
		add("Records without robots_hash: %s; the robots.txt version they were decided by is unknown.", words.Commas(m.RobotsHash))
	}
	if slices.ContainsFunc(r.Crawlers, estimated) { // forgeries' paths are not listed
		add("Path counts marked ~ are estimates: the crawler asked for more distinct paths than are counted (%d); each count is at most its ±error above the true one.", r.PathCounters)
	}
	if f := r.Fetches; f.Dropped > 0 {
		add("%s not kept for linking (past %s kept by site and client or token): a crawler they would have linked may show robots.txt fetched \"no\".",
			words.PluralVerb(f.Dropped, "robots.txt serve was", "robots.txt serves were"), words.Commas(MaxFetchKeys))
	}
	if f := r.Fetches; f.RowsPastIPs > 0 {
		add("%s from more than %d clients: a robots.txt fetch by one of the others links only if it was read before that client's first record.",
			words.PluralVerb(int64(f.RowsPastIPs), "row came", "rows came"), MaxClientIPs)
	}
	if f := r.Fetches; f.RowsPastTimes > 0 {
		add("AFTER FETCH is a lower bound for %s: of their violations without a fetch on record, only the first %s read are compared with a fetch that other logs show.",
			words.PluralVerb(int64(f.RowsPastTimes), "row", "rows"), words.Commas(MaxViolationTimes))
	}
	if e := r.EscalationStats; e.Dropped > 0 {
		add("%s not listed: past the %s kept, those that began latest.",
			words.PluralVerb(e.Dropped, "escalation's beginning is", "escalations' beginnings are"), words.Commas(int64(e.Max)))
	}
	if e := r.EscalationStats; e.DeniedUnlisted > 0 {
		why := "it is in an earlier log, or the filter left it out"
		if e.Dropped > 0 {
			why += ", or it was past the escalations kept"
		}
		add("%s to no escalation listed: the violation that began it is not among the records read (%s).",
			words.PluralVerb(e.DeniedUnlisted, "escalated denial belongs", "escalated denials belong"), why)
	}
	n = append(n, mergeNotes(r)...)
	for _, in := range r.Inputs {
		if in.Warning != "" {
			add("%s: %s.", words.InputName(in.Name), strings.TrimSuffix(in.Warning, "."))
		}
	}
	return n
}

// everyRate reports whether every crawler row has the violation rate v.
func everyRate(r *Report, v float64) bool {
	for i := range r.Crawlers {
		if r.Crawlers[i].ViolationRate != v {
			return false
		}
	}
	return len(r.Crawlers) > 0
}

// countRows counts the rows, of crawlers and forgeries, for which f holds.
func countRows(r *Report, f func(c *Crawler) bool) int {
	k := 0
	for _, rows := range [][]Crawler{r.Crawlers, r.Forgeries} {
		for i := range rows {
			if f(&rows[i]) {
				k++
			}
		}
	}
	return k
}

// estimated reports whether a row lists a path count that is an estimate.
func estimated(c Crawler) bool {
	for _, p := range c.TopPaths {
		if p.Error > 0 {
			return true
		}
	}
	return false
}

// mergeNotes say what the merged re-judgement changed and what it could
// not do.
func mergeNotes(r *Report) []string {
	var n []string
	m := r.Merge
	var moved []string
	for _, c := range []struct {
		n    int64
		text string
	}{
		{m.ViolationsToGrace, "recorded as violations are grace"},
		{m.ViolationsToProtective, "recorded as violations are protective"},
		{m.GraceToViolation, "recorded as grace are violations"},
		{m.GraceToProtective, "recorded as grace are protective"},
	} {
		if c.n > 0 {
			moved = append(moved, words.Commas(c.n)+" "+c.text)
		}
	}
	if len(moved) > 0 {
		n = append(n, fmt.Sprintf("Judged again across instances, against every robots.txt version served to the crawler on any of them within the day before: %s.", strings.Join(moved, ", ")))
	}
	if m.Unknown > 0 {
		what := "no text was found (give the storage directory, --storage)"
		if len(m.Texts.Storage) > 0 {
			what = "no text was found in " + words.Clean(strings.Join(m.Texts.Storage, ", "))
		}
		n = append(n, fmt.Sprintf("%s judged again against a version the audit could not read (%s, or a reading it cannot tell): counted as allowing, as the handler counts a version it no longer knows.",
			words.PluralVerb(m.Unknown, "denial was", "denials were"), what))
	}
	if m.Duplicates > 0 {
		n = append(n, fmt.Sprintf("%s left out: another record of the same request (a copy of a log, or an instance in front of another) is counted.",
			words.PluralVerb(m.Duplicates, "record was", "records were")))
	}
	if m.DuplicatesUnchecked > 0 {
		n = append(n, fmt.Sprintf("%s past the %s checked for copies, counted as read.",
			words.PluralVerb(m.DuplicatesUnchecked, "denial was", "denials were"), words.Commas(MaxDuplicateChecks)))
	}
	if t := m.Texts; t.Mismatched > 0 {
		n = append(n, fmt.Sprintf("%s content that does not hash to its name: not read.",
			words.PluralVerb(int64(t.Mismatched), "file of the storage directory holds", "files of the storage directory hold")))
	}
	return n
}
