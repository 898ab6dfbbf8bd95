package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// TestEmpty checks that a report of nothing is written in every format,
// and the table says there are no records.
func TestEmpty(t *testing.T) {
	r := textReport(t, "")
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Write(&b, r, f); err != nil {
			t.Errorf("Write(%s) of an empty report: %v", f, err)
		}
		if f == FormatTable && !strings.Contains(b.String(), "No compliance records.") {
			t.Errorf("empty table:\n%s", b.String())
		}
	}
}

// TestCleanText checks that record-derived text cannot drive a terminal,
// nor a spreadsheet.
func TestCleanText(t *testing.T) {
	r := textReport(t, `{"ts":1795294383,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"h\u001b[31m","uri":"/\u001b]0;title\u0007","agent":"=cmd","verdict":"deny"}`)
	var table, csv bytes.Buffer
	if err := Table(&table, r); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&csv, r); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(table.Bytes(), "\x1b\x07") || !strings.Contains(table.String(), `h\x1b[31m`) {
		t.Errorf("table lets control characters through:\n%q", table.String())
	}
	if !strings.Contains(csv.String(), "\n'=cmd,") {
		t.Errorf("csv: a formula is not neutralised:\n%s", csv.String())
	}
}

// TestNoRecordsMessage checks that the table and the page say "No
// compliance records." only when there are none: forgeries are records.
func TestNoRecordsMessage(t *testing.T) {
	for _, tt := range []struct {
		name string
		log  string
		want bool
	}{
		{"nothing", "", true},
		{"a serve only", `{"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":2,"site":"https://example.com","client_ip":"192.0.2.1","agents":["A"],"ts":1795341601,"uri":"/robots.txt"}` + "\n", true},
		{"forgeries only", decision("GPTBot", "deny", "violation", "identity", "forged"), false},
		{"a crawler", decision("A", "allow", "allowed"), false},
	} {
		r := textReport(t, tt.log)
		var table, page strings.Builder
		if err := Table(&table, r); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&page, r); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(table.String(), "No compliance records."); got != tt.want {
			t.Errorf("%s: the table says no records: %v, want %v\n%s", tt.name, got, tt.want, table.String())
		}
		if got := strings.Contains(page.String(), `<p id="no-records">No compliance records.</p>`); got != tt.want {
			t.Errorf("%s: the page says no records: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestUserTriggered checks that every format shows a user-triggered
// fetcher's rows, and the table lists them apart, as disallowed requests.
func TestUserTriggered(t *testing.T) {
	r := textReport(t, decision("ChatGPT-User", "deny", "violation", "identity", "verified", "fetcher_class", "user_triggered")+
		decision("GPTBot", "deny", "violation", "identity", "verified", "uri", "/q"))
	if len(r.UserTriggered) != 1 || len(r.Crawlers) != 1 {
		t.Fatalf("user-triggered %d, crawlers %d; want 1 each", len(r.UserTriggered), len(r.Crawlers))
	}
	for _, f := range Formats {
		var b strings.Builder
		if err := Write(&b, r, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "ChatGPT-User") {
			t.Errorf("%s: no ChatGPT-User", f)
		}
	}
	var b strings.Builder
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), userTriggeredIntro) || !strings.Contains(b.String(), "DISALLOWED") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestCutAndCapped checks that text says when a figure is cut or capped:
// a target cut at the audit's bound, a row past the clients it keeps.
func TestCutAndCapped(t *testing.T) {
	if got := requestLine(&audit.Request{Target: "/long", TargetCut: true}); !strings.Contains(got, "/long…(cut)") {
		t.Errorf("a cut target: %q", got)
	}
	if got := requestLine(&audit.Request{Target: "/short"}); strings.Contains(got, "(cut)") {
		t.Errorf("a whole target: %q", got)
	}
	if got := ipsText(&audit.Crawler{ClientIPs: audit.MaxClientIPs, ClientIPsMore: true}); got != "64+" {
		t.Errorf("past the clients kept: %q, want 64+", got)
	}
	if got := ipsText(&audit.Crawler{ClientIPs: 3}); got != "3" {
		t.Errorf("3 clients: %q", got)
	}
}
