package audit

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testLog returns the real Caddy log of testdata/audit.
func testLog(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataDir, "compliance.log"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// crawlersOf returns the report's crawlers as text, to compare reports
// of logs read under different names: the instances (the logs' names,
// since the records name none) are left out.
func crawlersOf(t *testing.T, r *Report) string {
	t.Helper()
	for _, rows := range [][]Crawler{r.Crawlers, r.Forgeries, r.UserTriggered} {
		for i := range rows {
			for j := range rows[i].ViolatingRequests {
				rows[i].ViolatingRequests[j].Instance = ""
			}
			for j := range rows[i].RobotsFetches {
				rows[i].RobotsFetches[j].Instance = ""
			}
		}
	}
	b, err := json.Marshal([][]Crawler{r.Crawlers, r.Forgeries, r.UserTriggered})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func auditBytes(t *testing.T, name string, in []byte) (*Report, InputStats) {
	t.Helper()
	a := New(Options{})
	st, err := a.Read(name, bytes.NewReader(in))
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return a.Report(), st
}

// TestReadGzip checks that gzip is found by its magic number, not by the
// name, and that concatenated members (as appended rotations) are read.
func TestReadGzip(t *testing.T) {
	log := testLog(t)
	plain, _ := auditBytes(t, "compliance.log", log)
	want := crawlersOf(t, plain)
	z := gzipped(t, log)

	r, st := auditBytes(t, "compliance.log.1", z) // rotated, no .gz suffix
	if !st.Gzip || st.Warning != "" || crawlersOf(t, r) != want {
		t.Errorf("gzip without .gz: gzip %v, warning %q, crawlers differ: %v", st.Gzip, st.Warning, crawlersOf(t, r) != want)
	}
	r, st = auditBytes(t, "compliance.log.gz", log) // named .gz, but plain
	if st.Gzip || crawlersOf(t, r) != want {
		t.Errorf("plain named .gz: gzip %v, crawlers differ: %v", st.Gzip, crawlersOf(t, r) != want)
	}

	half := bytes.Index(log[len(log)/2:], []byte("\n")) + len(log)/2 + 1
	two := append(gzipped(t, log[:half]), gzipped(t, log[half:])...)
	r, st = auditBytes(t, "two-members.gz", two)
	if st.Warning != "" || crawlersOf(t, r) != want {
		t.Errorf("two gzip members: warning %q, crawlers differ: %v", st.Warning, crawlersOf(t, r) != want)
	}
}

// TestReadDamagedGzip checks that a gzip stream cut short, or damaged,
// ends its input with a warning, keeping the lines read before.
func TestReadDamagedGzip(t *testing.T) {
	log := testLog(t)
	z := gzipped(t, log)
	corrupt := bytes.Clone(z)
	for i := len(corrupt) / 2; i < len(corrupt)/2+64; i++ {
		corrupt[i] ^= 0x55
	}
	badTrailer := bytes.Clone(z)
	badTrailer[len(badTrailer)-8] ^= 0xff // the CRC-32
	tests := []struct {
		name        string
		in          []byte
		warning     string
		someRecords bool
	}{
		{"truncated", z[:len(z)*2/3], "ends early", true},
		{"truncated in the trailer", z[:len(z)-3], "ends early", true},
		{"corrupt", corrupt, "damaged", true},
		{"bad checksum", badTrailer, "damaged", true},
		{"header only", z[:4], "damaged gzip header", false},
		{"magic only", z[:2], "damaged gzip header", false},
	}
	for _, tt := range tests {
		a := New(Options{})
		st, err := a.Read(tt.name, bytes.NewReader(tt.in))
		if err != nil {
			t.Errorf("%s: error %v, want a warning", tt.name, err)
			continue
		}
		if !strings.Contains(st.Warning, tt.warning) || (st.Records > 0) != tt.someRecords || st.Records >= 39 && tt.name == "truncated" {
			t.Errorf("%s: warning %q, %d records; want %q, some: %v", tt.name, st.Warning, st.Records, tt.warning, tt.someRecords)
		}
		if notes := strings.Join(a.Report().Notes(), "\n"); !strings.Contains(notes, tt.warning) {
			t.Errorf("%s: the report's notes do not give the warning:\n%s", tt.name, notes)
		}
	}
}

// TestReadZstd checks that a zstd file is named as such, not read as text.
func TestReadZstd(t *testing.T) {
	_, st := auditBytes(t, "robots.log.zst", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0})
	if !strings.Contains(st.Warning, "zstd") || st.Lines != 0 {
		t.Errorf("zstd: warning %q, %d lines", st.Warning, st.Lines)
	}
}

// TestReadEmpty checks that empty input makes an empty report.
func TestReadEmpty(t *testing.T) {
	r, st := auditBytes(t, "empty.log", nil)
	if st.Lines != 0 || len(r.Crawlers) != 0 || r.OnlyDenials || r.Buckets.Count != 0 {
		t.Errorf("empty input: %+v, %+v", st, r)
	}
	if _, st := auditBytes(t, "empty.gz", gzipped(t, nil)); st.Warning != "" || st.Lines != 0 {
		t.Errorf("empty gzip: %+v", st)
	}
}

// TestReadSkippedLines checks that every kind of line that is not a record
// is counted by kind, and none stops the reading.
func TestReadSkippedLines(t *testing.T) {
	const rec = `{"ts":1795294383.5,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"example.com","uri":"/x","agent":"GPTBot","verdict":"deny","grace":false,"agent_fetched_robots":false,"robots_hash":"h"}`
	lines := []string{
		rec,
		"",
		"   ",
		"2026/11/21 20:56:01.123\tINFO\thttp.handlers.robots_enforce\trobots.txt decision",
		`{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny",}`,
		rec[:len(rec)/2],
		`{"level":"info","logger":"http.log.access.log0","msg":"handled request"}`,
		`{"level":"warn","logger":"http.handlers.robots_enforce","msg":"robots.txt fetch failed"}`,
		`{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"perhaps"}`,
		`{"a":"` + strings.Repeat("x", MaxLineLength) + `"}`,
		`{"a":"` + strings.Repeat("y", readBufferSize*2) + `",` + rec[1:], // long, but a record
		rec, // the last line, without a newline
	}
	_, st := auditBytes(t, "mixed.log", []byte(strings.Join(lines, "\n")))
	want := map[string]int64{"blank": 2, "not_json": 1, "malformed": 1, "truncated": 1, "too_long": 1, "other_logger": 1, "other_message": 1, "invalid_record": 1}
	if st.Lines != int64(len(lines)) || st.Records != 3 || !equalCounts(st.Skipped, want) {
		t.Errorf("lines %d, records %d, skipped %v; want %d, 3, %v", st.Lines, st.Records, st.Skipped, len(lines), want)
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// failingReader gives its data, then an error.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadError checks that a failure of the input itself is an error,
// plain or compressed, and that what came before it counts.
func TestReadError(t *testing.T) {
	log := testLog(t)
	boom := errors.New("device gone")
	for _, in := range []struct {
		name string
		data []byte
	}{{"plain", log}, {"gzip", gzipped(t, log)[:2000]}} {
		a := New(Options{})
		st, err := a.Read(in.name, &failingReader{data: in.data, err: boom})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), in.name) {
			t.Errorf("%s: error %v, want %v naming the input", in.name, err, boom)
		}
		if st.Records == 0 || len(a.Report().Inputs) != 1 {
			t.Errorf("%s: %d records before the error, %d inputs reported", in.name, st.Records, len(a.Report().Inputs))
		}
	}
	if _, err := New(Options{}).ReadFile(filepath.Join(t.TempDir(), "missing.log")); err == nil {
		t.Error("ReadFile of a missing file: no error")
	}
}

// TestMaxCrawlers checks that rows past the limit are counted together,
// forgeries apart from crawlers.
func TestMaxCrawlers(t *testing.T) {
	var b strings.Builder
	for _, agent := range []string{"A", "B", "a", "C", "D", "B", "E!", "F!"} {
		identity, name := "", agent
		if strings.HasSuffix(agent, "!") {
			identity, name = ",\"identity\":\"forged\"", strings.TrimSuffix(agent, "!")
		}
		b.WriteString(`{"ts":1795294383,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"h","uri":"/p","agent":"` + name + `","verdict":"deny"` + identity + `}` + "\n")
	}
	a := New(Options{MaxCrawlers: 2})
	if _, err := a.Read("many.log", strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	var got []string
	for _, rows := range [][]Crawler{r.Crawlers, r.Forgeries} {
		for i := range rows {
			got = append(got, rows[i].String()+"="+itoa(rows[i].Requests))
		}
	}
	if want := "A at h=2; B at h=2; (other) at (other)=2; forged (other) at (other)=2"; strings.Join(got, "; ") != want {
		t.Errorf("rows %q, want %q", strings.Join(got, "; "), want)
	}
}
