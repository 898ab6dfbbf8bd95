package audit

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"sync"
	"testing"
)

// benchLogSize is the size of the generated log the benchmarks read: large
// enough that every path counter fills and the time line widens to its
// final layout, small enough to build in a second.
const benchLogSize = 64 << 20

// benchLog, benchLogV2 and benchLogV3 are the generated logs of record
// versions 1, 2 and 3: BenchmarkAudit reads the log of version 1 that the
// audit's speed was first measured on, so that its figures compare across
// versions of the audit; BenchmarkAuditV2 and BenchmarkAuditV3 read what
// handlers of versions 2 and 3 write.
var (
	benchLog      = sync.OnceValue(func() []byte { return genBenchLog(1, false) })
	benchLogV2    = sync.OnceValue(func() []byte { return genBenchLog(2, false) })
	benchLogV3    = sync.OnceValue(func() []byte { return genBenchLog(3, false) })
	benchLogV3Esc = sync.OnceValue(func() []byte { return genBenchLog(3, true) })
)

func genBenchLog(version int, escalated bool) []byte {
	var b bytes.Buffer
	if err := genLog(&b, benchLogSize, 1, version, escalated); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// BenchmarkAudit reads 64 MiB of generated records of version 1 (see
// genLog) and builds the report; its MB/s is the audit's throughput.
func BenchmarkAudit(b *testing.B) {
	benchmarkAudit(b, benchLog())
}

// BenchmarkAuditV2 reads 64 MiB of generated records of version 2, with
// robots.txt serves, and builds the report.
func BenchmarkAuditV2(b *testing.B) {
	benchmarkAudit(b, benchLogV2())
}

// BenchmarkAuditV3 reads 64 MiB of generated records of version 3, with
// robots.txt serves that credit tokens, and builds the report.
func BenchmarkAuditV3(b *testing.B) {
	benchmarkAudit(b, benchLogV3())
}

// BenchmarkAuditV3Escalated reads the same records, a quarter of them of
// escalated crawlers (see genLog); BenchmarkAuditV3EscalatedBound keeps
// 1,000 of their 4,000 escalations, to measure the bound's evictions.
func BenchmarkAuditV3Escalated(b *testing.B) {
	benchmarkAudit(b, benchLogV3Esc())
}

func BenchmarkAuditV3EscalatedBound(b *testing.B) {
	benchmarkAuditWith(b, benchLogV3Esc(), Options{MaxEscalations: 1000})
}

// BenchmarkAuditV3Merged reads the records of version 3 as the command
// does: in two passes (ReadInputs), judging each denial again against
// the serves of every instance.
func BenchmarkAuditV3Merged(b *testing.B) {
	data := benchLogV3()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		a := New(Options{})
		in := Input{Name: "bench.log", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
		if err := a.ReadInputs([]Input{in}, nil); err != nil {
			b.Fatal(err)
		}
		a.Report()
	}
}

func benchmarkAudit(b *testing.B, data []byte) {
	benchmarkAuditWith(b, data, Options{})
}

func benchmarkAuditWith(b *testing.B, data []byte, opts Options) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		a := New(opts)
		if _, err := a.Read("bench.log", bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		a.Report()
	}
}

// BenchmarkAuditGzip reads the same log gzip-compressed; its MB/s counts
// the log's octets after decompression.
func BenchmarkAuditGzip(b *testing.B) {
	data := benchLog()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(data); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		a := New(Options{})
		if _, err := a.Read("bench.log.gz", bytes.NewReader(z.Bytes())); err != nil {
			b.Fatal(err)
		}
		a.Report()
	}
}

// BenchmarkParseLine measures the scanner alone on one record of version
// 1; BenchmarkParseLineV2 on one of version 2.
func BenchmarkParseLine(b *testing.B) {
	benchmarkParseLine(b, benchLog())
}

func BenchmarkParseLineV2(b *testing.B) {
	benchmarkParseLine(b, benchLogV2())
}

func benchmarkParseLine(b *testing.B, data []byte) {
	line := data[:bytes.IndexByte(data, '\n')+1]
	var s scanner
	var rec rawRecord
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.parseLine(line, &rec); !ok {
			b.Fatal("not a record")
		}
	}
}

// BenchmarkParseLineEncodingJSON decodes the same record with
// encoding/json into a struct of the fields the audit reads: the scanner's
// reason to be.
func BenchmarkParseLineEncodingJSON(b *testing.B) {
	data := benchLog()
	line := data[:bytes.IndexByte(data, '\n')+1]
	var rec struct {
		TS                 float64 `json:"ts"`
		Logger             string  `json:"logger"`
		Msg                string  `json:"msg"`
		Host               string  `json:"host"`
		URI                string  `json:"uri"`
		Agent              string  `json:"agent"`
		Verdict            string  `json:"verdict"`
		Grace              *bool   `json:"grace"`
		RobotsHash         *string `json:"robots_hash"`
		AgentFetchedRobots *bool   `json:"agent_fetched_robots"`
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if err := json.Unmarshal(line, &rec); err != nil {
			b.Fatal(err)
		}
	}
}
