package audit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The golden tests read ../testdata/audit/compliance.log, the log of a real
// Caddy (see testdata/audit/README.md), and compare each output format
// with testdata/audit/golden; -update rewrites the golden files.
var update = flag.Bool("update", false, "rewrite ../testdata/audit/golden from the outputs")

const testdataDir = "../../testdata/audit"

// readLog reads a file of testdata/audit, named in reports by its base
// name, so that the outputs do not depend on where the tests run.
func readLog(t *testing.T, a *Auditor, name string) InputStats {
	t.Helper()
	f, err := os.Open(filepath.Join(testdataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := a.Read(name, f)
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return st
}

// golden compares got with the golden file name, or rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdataDir, "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n%s", name, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + itoa(int64(i+1)) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}

// TestComplianceLog checks what the golden files show against the
// requests TestAuditLogGenerate sent
// (caddymodule/integration/auditlog_gen_test.go), so that a regenerated
// log that lost a case fails here and not only as a diff.
func TestComplianceLog(t *testing.T) {
	a := New(Options{})
	readLog(t, a, "compliance.log")
	r := a.Report()
	type want struct {
		requests, denied, grace, violations, afterFetch int64
		fetched                                         bool
		topPath                                         string
		versions                                        int
	}
	wants := map[string]want{
		"GPTBot at www.example.com":          {8, 8, 0, 8, 8, true, "/blog/post.html", 1},
		"CCBot at www.example.com":           {4, 4, 0, 4, 0, false, "/blog/post.html", 1},
		"Bytespider at blog.example.com":     {5, 4, 1, 3, 0, false, "/drafts/next.html", 2},
		"bingbot at www.example.com":         {3, 2, 0, 2, 2, true, "/%70rivate/report.html", 1},
		"curl at www.example.com":            {3, 2, 0, 2, 0, false, "/private/report.html", 1},
		"python-requests at www.example.com": {2, 2, 0, 2, 0, false, "/search", 1},
		"AhrefsBot at www.example.com":       {2, 1, 0, 1, 0, false, "//private/report.html", 1},
		"(none) at www.example.com":          {1, 1, 0, 1, 0, false, "/private/", 1},
		"Applebot at blog.example.com":       {4, 2, 2, 0, 0, true, "", 2},
		"Googlebot at www.example.com":       {4, 0, 0, 0, 0, true, "", 1},
		"ClaudeBot at www.example.com":       {2, 0, 0, 0, 0, true, "", 1},
		"GPTBot at blog.example.com":         {1, 0, 0, 0, 0, false, "", 1},
	}
	if len(r.Crawlers) != len(wants) {
		t.Errorf("%d crawlers, want %d", len(r.Crawlers), len(wants))
	}
	for _, c := range r.Crawlers {
		w, ok := wants[c.String()]
		if !ok {
			t.Errorf("unexpected crawler %s", c.String())
			continue
		}
		top := ""
		if len(c.TopPaths) > 0 {
			top = c.TopPaths[0].Path
		}
		got := want{c.Requests, c.Denied, c.Grace, c.Violations, c.ViolationsAfterFetch, c.FetchedRobots, top, len(c.RobotsVersions)}
		if got != w {
			t.Errorf("%s: %+v, want %+v", c.String(), got, w)
		}
	}
	if r.Total.Records != 39 || r.Total.Skipped["other_logger"] == 0 || r.OnlyDenials {
		t.Errorf("records %d, skipped %v, only denials %v", r.Total.Records, r.Total.Skipped, r.OnlyDenials)
	}
}

// TestOlderSchema reads records that lack the fields added since the first
// record schema (grace, reading, robots_source, agent_fetched_robots,
// automation, robots_fetched_at), with times as Caddy's other time_format
// options write them; see the package documentation.
func TestOlderSchema(t *testing.T) {
	a := New(Options{})
	st := readLog(t, a, "older-schema.log")
	r := a.Report()
	if st.Records != 7 || len(st.Skipped) != 0 {
		t.Fatalf("read %d records, skipped %v; want 7, none", st.Records, st.Skipped)
	}
	wantMissing := Missing{Time: 2, Agent: 1, Host: 1, URI: 1, Grace: 7, AgentFetchedRobots: 7, RobotsHash: 2, Compliance: 7, Mode: 2}
	if r.Missing != wantMissing {
		t.Errorf("Missing = %+v, want %+v", r.Missing, wantMissing)
	}
	at := func(sec, ms int) time.Time { return time.Date(2026, 11, 20, 8, 0, sec, ms*1e6, time.UTC) }
	if !r.First.Equal(at(1, 250)) || !r.Last.Equal(at(5, 0)) {
		t.Errorf("First, Last = %v, %v; want %v, %v", r.First, r.Last, at(1, 250), at(5, 0))
	}
	gpt := r.Crawlers[0]
	if gpt.String() != "GPTBot at example.com" || gpt.Requests != 4 || gpt.Violations != 4 || gpt.Grace != 0 ||
		gpt.FetchedRobots || gpt.ViolationsAfterFetch != 0 || !gpt.FirstSeen.Equal(at(1, 250)) || !gpt.LastSeen.Equal(at(3, 500)) {
		t.Errorf("GPTBot (two spellings, one record without a time): %+v", gpt)
	}
	if len(gpt.TopPaths) != 3 || gpt.TopPaths[0] != (PathCount{Path: "/private/a.html", Count: 2}) || gpt.TopPaths[1].Path != "/private/b.html" {
		t.Errorf("GPTBot paths (queries dropped): %+v", gpt.TopPaths)
	}
	if len(gpt.RobotsVersions) != 2 || gpt.RobotsVersions[0] != (VersionCount{"1111111111111111", 2}) {
		t.Errorf("GPTBot versions: %+v", gpt.RobotsVersions)
	}
}

// TestFilters checks each filter over the real Caddy log.
func TestFilters(t *testing.T) {
	all := New(Options{})
	readLog(t, all, "compliance.log")
	full := all.Report()
	mid := full.First.Add(full.Last.Sub(full.First) / 2).Truncate(time.Second)
	tests := []struct {
		name   string
		filter Filter
		keep   func(c *Crawler) bool // which crawlers remain
	}{
		{"host", Filter{Host: "BLOG.example.com"}, func(c *Crawler) bool { return c.Host == "blog.example.com" }},
		{"host with port", Filter{Host: "blog.example.com:443"}, func(c *Crawler) bool { return false }},
		{"agent", Filter{Agent: "gptbot"}, func(c *Crawler) bool { return c.Agent == "GPTBot" }},
		{"agent and host", Filter{Agent: "GPTBOT", Host: "www.example.com"}, func(c *Crawler) bool { return c.Agent == "GPTBot" && c.Host == "www.example.com" }},
		{"no agent", Filter{Agent: "none-such"}, func(c *Crawler) bool { return false }},
	}
	for _, tt := range tests {
		a := New(Options{Filter: tt.filter})
		readLog(t, a, "compliance.log")
		r := a.Report()
		var wantRecords int64
		var want []string
		for i := range full.Crawlers {
			if c := &full.Crawlers[i]; tt.keep(c) {
				want = append(want, c.String())
				wantRecords += c.Requests
			}
		}
		var got []string
		for i := range r.Crawlers {
			got = append(got, r.Crawlers[i].String())
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") || r.Total.Records-r.Total.Filtered != wantRecords {
			t.Errorf("%s: crawlers %q (%d records), want %q (%d)", tt.name, got, r.Total.Records-r.Total.Filtered, want, wantRecords)
		}
	}

	// Since and Until split the records at mid, whatever the agent.
	before := New(Options{Filter: Filter{Until: mid}})
	after := New(Options{Filter: Filter{Since: mid}})
	readLog(t, before, "compliance.log")
	readLog(t, after, "compliance.log")
	rb, ra := before.Report(), after.Report()
	if kept := (rb.Total.Records - rb.Total.Filtered) + (ra.Total.Records - ra.Total.Filtered); kept != full.Total.Records || rb.Total.Filtered == 0 || ra.Total.Filtered == 0 {
		t.Errorf("until %v keeps %d, since keeps %d; want %d together, both some", mid, rb.Total.Records-rb.Total.Filtered, ra.Total.Records-ra.Total.Filtered, full.Total.Records)
	}
	if !rb.Last.Before(mid) || ra.First.Before(mid) {
		t.Errorf("until %v: last %v; since: first %v", mid, rb.Last, ra.First)
	}
	// A record without a time is left out by a time filter.
	older := New(Options{Filter: Filter{Since: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}})
	readLog(t, older, "older-schema.log")
	if r := older.Report(); r.Total.Filtered != 2 {
		t.Errorf("since 2000 over older-schema.log: %d filtered, want the 2 without a time", r.Total.Filtered)
	}
}

// TestHostMatches checks the host filter's port handling.
func TestHostMatches(t *testing.T) {
	tests := []struct {
		host, filter string
		want         bool
	}{
		{"example.com", "example.com", true},
		{"Example.COM", "example.com", true},
		{"example.com:8443", "example.com", true},
		{"example.com:8443", "example.com:8443", true},
		{"example.com:8443", "example.com:443", false},
		{"example.com", "example.com:443", false},
		{"www.example.com", "example.com", false},
		{"[::1]:8080", "[::1]", true},
		{"::1", "::1", true},
		{"fe80::1", "fe80:", false},
		{"example.com:", "example.com", false},
	}
	for _, tt := range tests {
		if got := hostMatches([]byte(tt.host), tt.filter); got != tt.want {
			t.Errorf("hostMatches(%q, %q) = %v, want %v", tt.host, tt.filter, got, tt.want)
		}
	}
}

// itoa writes n in decimal.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
