package audit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// logLine writes a line of the robots_enforce logger: a decision, unless
// msg is given in fields, with the fields given (name, value pairs).
func logLine(fields ...any) string {
	m := map[string]any{record.Name: record.Logger, record.Msg: record.MsgDecision, "ts": 1795341600.5}
	for i := 0; i < len(fields); i += 2 {
		if fields[i+1] == nil {
			delete(m, fields[i].(string))
			continue
		}
		m[fields[i].(string)] = fields[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// v2 writes a version 2 decision of agent on https://example.com.
func v2(agent, verdict, compliance string, more ...any) string {
	return logLine(append([]any{"record_version", 2, "site", "https://example.com", "host", "example.com",
		"agent", agent, "verdict", verdict, "compliance", compliance, "mode", "enforce",
		"robots_hash", "1111111111111111", "served_robots", false, "identity", "unverified", "uri", "/p", "client_ip", "192.0.2.1"}, more...)...)
}

// v1 writes a version 1 decision (no compliance) of agent on example.com.
func v1(agent, verdict string, more ...any) string {
	return logLine(append([]any{"host", "example.com", "agent", agent, "verdict", verdict, "mode", "log",
		"robots_hash", "1111111111111111", "agent_fetched_robots", false, "grace", false, "uri", "/p"}, more...)...)
}

// noteKeys name the notes a report can print, by a phrase of each.
var noteKeys = map[string]string{
	"no-allowed":   "No allowed requests were recorded; with log_allowed on they would be.",
	"all-100":      "so every rate is 100%",
	"time":         "without a readable time",
	"legacy":       "from records without compliance (record version 1)",
	"legacy-grace": "lack grace too",
	"unknown":      `robots.txt fetched "unknown"`,
	"hash":         "Records without robots_hash",
	"paths":        "Path counts marked ~",
	"dropped":      "not kept for linking",
	"ips":          "clients: a robots.txt fetch by one of the others",
	"times":        "AFTER FETCH is a lower bound",
	"warning":      "zstd-compressed",
	"esc-dropped":  "not listed: past the",
	"esc-unlisted": "to no escalation listed",
}

// notesOf returns the keys of the notes printed.
func notesOf(notes []string) []string {
	var keys []string
	for k, phrase := range noteKeys {
		for _, n := range notes {
			if strings.Contains(n, phrase) {
				keys = append(keys, k)
				break
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// paths writes violations of the paths given with their counts.
func paths(pc ...any) string {
	var b strings.Builder
	for i := 0; i < len(pc); i += 2 {
		for range pc[i+1].(int) {
			b.WriteString(v2("A", "deny", "violation", "uri", pc[i]))
		}
	}
	return b.String()
}

// TestNotesOfLimits checks the notes of limits too large to reach in a
// test, from a report's numbers.
func TestNotesOfLimits(t *testing.T) {
	for _, tt := range []struct {
		f    FetchStats
		want []string
	}{
		{FetchStats{Serves: 5}, nil},
		{FetchStats{Dropped: 1}, []string{"dropped"}},
		{FetchStats{Dropped: 2, RowsPastIPs: 3}, []string{"dropped", "ips"}},
		{FetchStats{RowsPastTimes: 1}, []string{"times"}},
	} {
		r := &Report{Fetches: tt.f}
		if got := notesOf(r.Notes()); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: notes %q, want %q", tt.f, got, tt.want)
		}
	}
}

// TestNotes checks that each note is printed when, and only when, what it
// says is true of the report's numbers.
func TestNotes(t *testing.T) {
	manyIPs := ""
	for i := range MaxClientIPs + 1 {
		manyIPs += v2("Spider", "allow", "allowed", "client_ip", fmt.Sprintf("192.0.2.%d", i))
	}
	tests := []struct {
		name   string
		log    string
		opts   Options
		want   []string
		phrase string // a phrase one of the notes must have, besides
	}{
		{"a complete version 2 log", v2("A", "allow", "allowed") + v2("A", "deny", "violation"), Options{}, nil, ""},
		{"only violations", v2("A", "deny", "violation") + v2("B", "deny", "violation"), Options{}, []string{"all-100", "no-allowed"}, ""},
		// All denials grace: the rate is 0%, and the note must not say 100%.
		{"only grace", v2("A", "deny", "grace") + v2("B", "deny", "violation"), Options{}, []string{"no-allowed"}, ""},
		{"only protective", v2("A", "deny", "protective"), Options{}, []string{"no-allowed"}, ""},
		// An allowed request recorded anywhere: log_allowed was on.
		{"allowed by a forger only", v2("A", "deny", "violation") + v2("GPTBot", "allow", "allowed", "identity", "forged"), Options{}, nil, ""},
		{"no records, a serve", logLine(record.Msg, record.MsgServed, "site", "https://example.com", "agents", []string{"A"}), Options{}, nil, ""},
		{"no time", v2("A", "allow", "allowed", "ts", nil), Options{}, []string{"time"}, ""},
		{"no time, filtered by time", v2("A", "allow", "allowed", "ts", nil) + v2("A", "allow", "allowed"), Options{Filter: Filter{Mode: "enforce", Since: time.Unix(1795341600, 0)}}, nil, ""},
		{"version 1, grace false", v1("A", "allow") + v1("A", "deny"), Options{}, []string{"legacy"}, "1 denial comes from records without compliance (record version 1), which cannot tell protective denials (an alternate spelling of the path, a fail-closed denial) from violations: 1 counted as a violation."},
		{"version 1, grace true", v1("A", "allow") + v1("A", "deny", "grace", true) + v1("A", "deny"), Options{}, []string{"legacy"}, "2 denials come from records without compliance (record version 1), which cannot tell protective denials (an alternate spelling of the path, a fail-closed denial) from violations: 1 counted as a violation, 1 as grace."},
		{"version 1 without grace", v1("A", "allow") + v1("A", "deny", "grace", nil), Options{}, []string{"legacy", "legacy-grace"}, "1 of them lack grace too"},
		{"version 1 without grace, allowed only", v1("A", "allow", "grace", nil), Options{}, nil, ""},
		{"version 1 without agent_fetched_robots", v1("A", "allow", "agent_fetched_robots", nil), Options{}, []string{"unknown"}, "1 row shows"},
		{"... linked by a serve that credits its token", v1("A", "allow", "agent_fetched_robots", nil) + logLine(record.Msg, record.MsgServed, "host", "example.com", "agents", []string{"a"}, "credited_agents", []string{"a"}), Options{}, nil, ""},
		{"... not by one that does not", v1("A", "allow", "agent_fetched_robots", nil) + logLine(record.Msg, record.MsgServed, "host", "example.com", "agents", []string{"a"}), Options{}, []string{"unknown"}, ""},
		{"no robots_hash", v2("A", "allow", "allowed", "robots_hash", nil), Options{}, []string{"hash"}, ""},
		{"many client IPs", manyIPs, Options{}, []string{"ips"}, "1 row came from more than 64 clients"},
		{"zstd", "\x28\xb5\x2f\xfd", Options{}, []string{"warning"}, ""},
		// Three paths in two counters: the third takes over a counter, and
		// its count, listed, is an estimate.
		{"paths estimated", paths("/a", 5, "/b", 5, "/c", 1), Options{PathCounters: 2, TopPaths: 2}, []string{"all-100", "no-allowed", "paths"}, ""},
		// The same, but only the exact count is listed.
		{"paths evicted, not listed", paths("/a", 10, "/b", 1, "/c", 1), Options{PathCounters: 2, TopPaths: 1}, []string{"all-100", "no-allowed"}, ""},
		{"an escalation and its denials", v2("A", "allow", "allowed") + escBegan(0) + escDenied(0), Options{}, nil, ""},
		{"a denial whose escalation began before the log", v2("A", "allow", "allowed") + escDenied(0), Options{}, []string{"esc-unlisted"},
			"1 escalated denial belongs to no escalation listed: the violation that began it is not among the records read (it is in an earlier log, or the filter left it out)."},
		{"escalations past the bound", v2("A", "allow", "allowed") + escBegan(60) + escBegan(0) + escBegan(120), Options{MaxEscalations: 1}, []string{"esc-dropped"},
			"2 escalations' beginnings are not listed: past the 1 kept, those that began latest."},
		{"... with their denials", v2("A", "allow", "allowed") + escBegan(60) + escDenied(0) + escBegan(0), Options{MaxEscalations: 1}, []string{"esc-dropped", "esc-unlisted"},
			"1 escalation's beginning is not listed: past the 1 kept, those that began latest.\n1 escalated denial belongs to no escalation listed: the violation that began it is not among the records read (it is in an earlier log, or the filter left it out, or it was past the escalations kept)."},
	}
	for _, tt := range tests {
		a := New(tt.opts)
		if _, err := a.Read("test.log", strings.NewReader(tt.log)); err != nil {
			t.Fatal(err)
		}
		notes := a.Report().Notes()
		if got := notesOf(notes); !slices.Equal(got, tt.want) {
			t.Errorf("%s: notes %q, want %q:\n%s", tt.name, got, tt.want, strings.Join(notes, "\n"))
		}
		if tt.phrase != "" && !strings.Contains(strings.Join(notes, "\n"), tt.phrase) {
			t.Errorf("%s: no note says %q:\n%s", tt.name, tt.phrase, strings.Join(notes, "\n"))
		}
	}
}
