package audit

import (
	"strings"
	"testing"
)

// TestSiteFilter checks the Host filter against sites and hosts.
func TestSiteFilter(t *testing.T) {
	tests := []struct {
		filter, site, host string
		want               bool
	}{
		{"example.com", "https://example.com", "", true},
		{"example.com", "https://example.com:8443", "", true},
		{"example.com", "http://example.com", "", true},
		{"example.com", "", "example.com:8443", true},
		{"example.com", "https://www.example.com", "", false},
		{"EXAMPLE.com", "https://example.com", "", true},
		{"example.com:443", "https://example.com", "", true},
		{"example.com:443", "http://example.com", "", false},
		{"example.com:80", "http://example.com", "", true},
		{"example.com:443", "https://example.com:8443", "", false},
		{"https://example.com", "https://example.com", "", true},
		{"https://example.com", "https://example.com:443", "", true},
		{"https://example.com:443", "https://example.com", "", true},
		{"https://example.com/", "https://example.com", "", true},
		{"https://example.com", "http://example.com", "", false},
		{"https://example.com", "https://example.com:8443", "", false},
		{"https://example.com", "", "example.com", true},
		{"http://localhost:8081", "http://localhost:8081", "", true},
		{"HTTP://LOCALHOST:8081", "http://localhost:8081", "", true},
		{"http://localhost:8081", "https://localhost:8081", "", false},
		{"localhost:8081", "http://localhost:8081", "", true},
		{"localhost", "http://localhost:8081", "", true},
		{"localhost:8081", "", "localhost:8081", true},
		{"[::1]:8081", "http://[::1]:8081", "", true},
		{"[::1]", "http://[::1]:8081", "", true},
	}
	for _, tt := range tests {
		rec := &rawRecord{}
		rec.host = []byte(tt.host)
		if tt.site != "" {
			rec.site, rec.has = []byte(tt.site), hasSite
			rec.host = []byte("ignored.example")
		}
		if got := siteMatches(rec, tt.filter); got != tt.want {
			t.Errorf("siteMatches(site %q, host %q; %q) = %v, want %v", tt.site, tt.host, tt.filter, got, tt.want)
		}
	}
}

// TestModeFilter checks --mode: records of the other mode, and records
// without a mode, are left out.
func TestModeFilter(t *testing.T) {
	log := v2("A", "deny", "violation", "mode", "log") + v2("A", "deny", "violation", "mode", "enforce") +
		v2("A", "allow", "allowed", "mode", "enforce") + v2("A", "allow", "allowed", "mode", nil)
	for _, tt := range []struct {
		mode           string
		kept, filtered int64
		rowMode        string
	}{
		{"", 4, 0, "enforce+log"},
		{"log", 1, 3, "log"},
		{"enforce", 2, 2, "enforce"},
	} {
		a := New(Options{Filter: Filter{Mode: tt.mode}})
		if _, err := a.Read("mode.log", strings.NewReader(log)); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		if r.Total.Records-r.Total.Filtered != tt.kept || r.Total.Filtered != tt.filtered || r.Crawlers[0].Mode != tt.rowMode {
			t.Errorf("mode %q: kept %d, filtered %d, row mode %q; want %d, %d, %q", tt.mode, r.Total.Records-r.Total.Filtered, r.Total.Filtered, r.Crawlers[0].Mode, tt.kept, tt.filtered, tt.rowMode)
		}
	}
}
