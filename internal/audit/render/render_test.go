package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// The tests read the logs of testdata/audit (see its README.md) through
// package audit, and compare what this package writes of them with
// testdata/audit/golden; -update rewrites the golden files.
var update = flag.Bool("update", false, "rewrite ../../../testdata/audit/golden from the outputs")

const testdataDir = "../../../testdata/audit"

// Logs of testdata/audit.
var (
	v2Logs       = []string{"v2-a.log", "v2-b.log"}
	v3Logs       = []string{"v3-a.log", "v3-b.log"}
	escalatedLog = "v3-escalated.log"
)

// readLog reads a file of testdata/audit into a, named in reports by its
// base name, so that the outputs do not depend on where the tests run.
func readLog(t *testing.T, a *audit.Auditor, name string) {
	t.Helper()
	f, err := os.Open(filepath.Join(testdataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := a.Read(name, f); err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
}

// readText reads log, named name, into a.
func readText(t *testing.T, a *audit.Auditor, name, log string) {
	t.Helper()
	if _, err := a.Read(name, strings.NewReader(log)); err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
}

// reportOf reads the logs of testdata/audit named, in order.
func reportOf(t *testing.T, names ...string) *audit.Report {
	t.Helper()
	a := audit.New(audit.Options{})
	for _, name := range names {
		readLog(t, a, name)
	}
	return a.Report()
}

// textReport reads one log given as text.
func textReport(t *testing.T, log string) *audit.Report {
	t.Helper()
	a := audit.New(audit.Options{})
	readText(t, a, "test.log", log)
	return a.Report()
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
	if bytes.Equal(got, want) {
		return
	}
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			t.Errorf("%s differs from the golden file from line %d (run with -update to accept):\n  want: %.300s\n  got:  %.300s",
				name, i+1, strings.Join(w[i:min(i+1, len(w))], ""), strings.Join(g[i:min(i+1, len(g))], ""))
			return
		}
	}
}

// decision writes a version 2 decision of agent on https://example.com,
// unverified, from 192.0.2.1; fields (name, value pairs) add to it or
// replace, and a nil value removes one.
func decision(agent, verdict, compliance string, fields ...any) string {
	m := map[string]any{record.Name: record.Logger, record.Msg: record.MsgDecision, record.TS: 1795341600.5,
		record.RecordVersion: 2, record.Site: "https://example.com", record.Host: "example.com", record.Agent: agent,
		record.Verdict: verdict, record.Compliance: compliance, record.Mode: "enforce", record.RobotsHash: "1111111111111111",
		record.ServedRobots: false, record.Identity: "unverified", record.URI: "/p", record.ClientIP: "192.0.2.1"}
	for i := 0; i+1 < len(fields); i += 2 {
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

// evidenceBadBot is the evidence package audit keeps as a golden file:
// BadBot's, over two instances' logs across a robots.txt change.
func evidenceBadBot(t *testing.T) *audit.Evidence {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataDir, "golden", "evidence-badbot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev audit.Evidence
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Sites) == 0 || len(ev.Sites[0].Violations) == 0 || len(ev.Sites[0].Versions) == 0 {
		t.Fatalf("the evidence golden file has no site with violations and versions")
	}
	return &ev
}
