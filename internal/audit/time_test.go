package audit

import (
	"testing"
	"time"
)

// TestRecordTime checks the forms of "ts" that Caddy's time_format
// options write, and what is not read.
func TestRecordTime(t *testing.T) {
	want := time.Date(2026, 11, 21, 20, 53, 3, 243052000, time.UTC)
	tests := []struct {
		ts     string // as in the JSON line
		want   time.Time
		wantOK bool
	}{
		{`1795294383.243052`, want, true},                                         // unix_seconds_float, the default
		{`1795294383`, want.Truncate(time.Second), true},                          // whole seconds
		{`1795294383243.052`, want, true},                                         // unix_milli_float
		{`1795294383243052`, want, true},                                          // microseconds
		{`1795294383243052000`, want, true},                                       // unix_nano
		{`1.795294383243052e9`, want.Truncate(time.Microsecond), true},            // an exponent
		{`"2026-11-21T20:53:03.243052Z"`, want, true},                             // rfc3339_nano
		{`"2026-11-21T20:53:03Z"`, want.Truncate(time.Second), true},              // rfc3339
		{`"2026-11-21T21:53:03.243052+01:00"`, want, true},                        // with a zone
		{`"2026-11-21T21:53:03.243+0100"`, want.Truncate(time.Millisecond), true}, // zap's iso8601
		{`"2026-11-21T20:53:03.243052"`, want, true},                              // no zone: UTC
		{`"2026/11/21 20:53:03.243052"`, want, true},                              // wall_nano, read as UTC
		{`"21/Nov/2026:21:53:03 +0100"`, want.Truncate(time.Second), true},        // common_log
		{`"yesterday"`, time.Time{}, false},
		{`""`, time.Time{}, false},
		{`0`, time.Time{}, false},
		{`-1795294383`, time.Time{}, false},
		{`99999999999999999999999`, time.Time{}, false},
		{`"1795294383"`, time.Time{}, false}, // a number in a string is not read
	}
	for _, tt := range tests {
		line := `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny","ts":` + tt.ts + `}`
		var s scanner
		var r rawRecord
		if _, ok := s.parseLine([]byte(line), &r); !ok {
			t.Fatalf("ts %s: line not read", tt.ts)
		}
		ns, ok := recordTime(&r)
		got := time.Time{}
		if ok {
			got = time.Unix(0, ns).UTC()
		}
		// Floating point may miss by a microsecond.
		if ok != tt.wantOK || got.Sub(tt.want).Abs() > time.Microsecond {
			t.Errorf("recordTime(%s) = %v, %v; want %v, %v", tt.ts, got, ok, tt.want, tt.wantOK)
		}
	}
	if _, ok := recordTime(&rawRecord{}); ok {
		t.Error("recordTime without ts: ok")
	}
}

// TestParseTime checks the times the command's --since and --until take.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-20T08:30:00Z", time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)},
		{"2026-11-20T09:30:00+01:00", time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)},
		{"2026-11-20T08:30:00", time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)},
		{"2026-11-20T08:30", time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)},
		{"2026-11-20 08:30:15", time.Date(2026, 11, 20, 8, 30, 15, 0, time.UTC)},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)},
		{"90m", now.Add(-90 * time.Minute)},
		{"24h", now.Add(-24 * time.Hour)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{" 1h ", now.Add(-time.Hour)},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-24h", "0d", "7w", "2026-13-01", "1.5d"} {
		if got, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", bad, got)
		}
	}
}
