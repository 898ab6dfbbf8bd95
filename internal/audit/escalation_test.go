package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// escalatedLog is the hand-written log of escalated crawlers (see
// testdata/audit/README.md).
const escalatedLog = "v3-escalated.log"

// escT0 is when the escalations of the tests begin: 2026-11-24 10:00:00
// UTC, the time of escalatedLog's first record.
const escT0 = 1795514400

// escAt returns the time escT0 plus sec seconds.
func escAt(sec float64) time.Time {
	return time.Unix(escT0, 0).Add(time.Duration(math.Round(sec * float64(time.Second)))).UTC()
}

// escLine writes a version 3 decision of agent on https://example.com from
// client ip, of a crawler escalated ("block", for an hour, by /private/a)
// since escT0 plus since seconds, written half a second later; began marks
// the record whose violation began the escalation. more adds or replaces
// fields (nil removes one).
func escLine(agent, identity, ip, verdict, compliance string, since float64, began bool, more ...any) string {
	f := []any{"record_version", 3, "client_ip", ip, "identity", identity, "ts", escT0 + since + 0.5,
		"escalation", "block", "escalated_since", escT0 + since, "escalated_until", escT0 + since + 3600, "escalated_by", "/private/a"}
	if began {
		f = append(f, "escalation_began", true)
	}
	return v2(agent, verdict, compliance, append(f, more...)...)
}

// escBegan and escDenied write the beginning of RogueBot's escalation at
// 192.0.2.1, since escT0 plus since seconds, and a request it refused.
func escBegan(since float64) string {
	return escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", since, true)
}

func escDenied(since float64) string {
	return escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", since, false)
}

// escSummary writes each escalation listed on one line: agent, identity,
// address, site, mode, since (seconds after escT0), denials and
// violations.
func escSummary(r *Report) []string {
	var out []string
	for i := range r.Escalations {
		e := &r.Escalations[i]
		since := "unknown"
		if !e.Since.IsZero() {
			since = fmt.Sprintf("+%g", e.Since.Sub(escAt(0)).Seconds())
		}
		ip := e.ClientIP // a verified crawler's escalation holds at any address
		if e.Identity == IdentityVerified {
			ip = "(any)"
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %s %s denied %d, %d violations", e.Agent, e.Identity, ip, e.Site, e.Mode, since, e.Denied, e.Violations))
	}
	return out
}

// TestEscalatedLog checks the escalations of the hand-written log against
// what each of its records illustrates (testdata/audit/README.md).
func TestEscalatedLog(t *testing.T) {
	a := New(Options{})
	readLog(t, a, escalatedLog)
	r := a.Report()
	type want struct {
		agent, identity, ip, site, mode string
		since, until, started           time.Time
		by                              string
		denied, violations              int64
	}
	wants := []want{
		// Its first violation blocks it at its address for an hour: an
		// allowed path blocked (protective), then a violation.
		{"RogueBot", "unverified", "198.51.100.9", "https://www.example.com", "block", escAt(0.0001), escAt(3600.0001), escAt(0.000123), "/private/a", 2, 1},
		// The same token from another address: an escalation of its own.
		{"RogueBot", "unverified", "198.51.100.10", "https://www.example.com", "block", escAt(4.0001), escAt(3604.0001), escAt(4.000123), "/private/c", 0, 0},
		// Verified: escalated wherever it asks from, a day long; its
		// allowed request while escalated is not a denial.
		{"GPTBot", "verified", "", "https://blog.example.com", "enforce", escAt(5.0001), escAt(86405.0001), escAt(5.000123), "/drafts/x", 1, 1},
		// The same crawler on another site: another escalation.
		{"GPTBot", "verified", "", "https://www.example.com", "block", escAt(8.0001), escAt(3608.0001), escAt(8.000123), "/private/z", 0, 0},
		// A forger is escalated at its own address, not the crawler it
		// claims.
		{"Googlebot", "forged", "203.0.113.66", "https://www.example.com", "block", escAt(9.0001), escAt(3609.0001), escAt(9.000123), "/private/g", 1, 0},
		// Once the first escalation ended, a new violation begins another.
		{"RogueBot", "unverified", "198.51.100.9", "https://www.example.com", "block", escAt(3605.0001), escAt(7205.0001), escAt(3605.000123), "/private/d", 1, 0},
	}
	var got []want
	for _, e := range r.Escalations {
		got = append(got, want{e.Agent, e.Identity, e.ClientIP, e.Site, e.Mode, e.Since, e.Until, e.StartedAt, e.EscalatedBy, e.Denied, e.Violations})
	}
	if len(got) != len(wants) {
		t.Errorf("%d escalations, want %d:\n%s", len(got), len(wants), strings.Join(escSummary(r), "\n"))
	}
	for i := range min(len(got), len(wants)) {
		if got[i] != wants[i] {
			t.Errorf("escalation %d:\n got  %+v\n want %+v", i, got[i], wants[i])
		}
	}
	// CCBot's denial belongs to an escalation that began before the log.
	if st := r.EscalationStats; st != (EscalationStats{DeniedUnlisted: 1, Max: DefaultMaxEscalations}) {
		t.Errorf("escalation stats %+v", st)
	}
	// The rows count the same records as before: a block of an allowed
	// path is protective, and ExampleBot's protective denial escalates
	// nothing.
	if rogue := r.Crawlers[0]; rogue.String() != "RogueBot (unverified) at https://www.example.com" || rogue.Violations != 4 || rogue.Protective != 2 {
		t.Errorf("first row %s: %d violations, %d protective", rogue.String(), rogue.Violations, rogue.Protective)
	}
}

// TestEscalationKey checks which records count for which escalation: the
// handler's key (site and token, and the address unless the crawler was
// verified) with the time it began.
func TestEscalationKey(t *testing.T) {
	long := "/" + strings.Repeat("x", 2*MaxPathLength)
	tests := []struct {
		name     string
		log      string
		opts     Options
		want     []string
		unlisted int64
	}{
		{"verified: one escalation wherever it asks from",
			escLine("GPTBot", "verified", "192.0.2.1", "deny", "violation", 0, true) + escLine("GPTBot", "verified", "192.0.2.2", "deny", "violation", 0, false),
			Options{}, []string{"GPTBot verified (any) https://example.com block +0 denied 1, 1 violations"}, 0},
		{"unverified: one escalation per address",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true) + escLine("RogueBot", "unverified", "192.0.2.2", "deny", "violation", 0, false),
			Options{}, []string{"RogueBot unverified 192.0.2.1 https://example.com block +0 denied 0, 0 violations"}, 1},
		{"a forged claim at its address",
			escLine("Googlebot", "forged", "203.0.113.66", "deny", "violation", 0, true) + escLine("Googlebot", "forged", "203.0.113.66", "deny", "protective", 0, false, "reason", "escalated"),
			Options{}, []string{"Googlebot forged 203.0.113.66 https://example.com block +0 denied 1, 0 violations"}, 0},
		{"site and token compared case-insensitively",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "site", "https://Example.COM") + escLine("roguebot", "unverified", "192.0.2.1", "deny", "violation", 0, false),
			Options{}, []string{"RogueBot unverified 192.0.2.1 https://Example.COM block +0 denied 1, 1 violations"}, 0},
		{"a later beginning is another escalation",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 7200, true) + escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true) +
				escLine("RogueBot", "unverified", "192.0.2.1", "deny", "protective", 7200, false),
			Options{}, []string{"RogueBot unverified 192.0.2.1 https://example.com block +0 denied 0, 0 violations", "RogueBot unverified 192.0.2.1 https://example.com block +7200 denied 1, 0 violations"}, 0},
		{"an allowed request while escalated is no denial",
			escLine("GPTBot", "verified", "192.0.2.1", "deny", "violation", 0, true) + escLine("GPTBot", "verified", "192.0.2.1", "allow", "allowed", 0, false, "escalation", "enforce"),
			Options{}, []string{"GPTBot verified (any) https://example.com block +0 denied 0, 0 violations"}, 0},
		{"times as strings, as time_format iso8601 writes them",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "escalated_since", "2026-11-24T10:00:00Z") +
				escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, false, "escalated_since", "2026-11-24T11:00:00+0100"),
			Options{}, []string{"RogueBot unverified 192.0.2.1 https://example.com block +0 denied 1, 1 violations"}, 0},
		{"escalation_began false begins nothing",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, false, "escalation_began", false),
			Options{}, nil, 1},
		{"an empty escalation is none",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "escalation", "") + escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, false, "escalation", nil),
			Options{}, nil, 0},
		{"a beginning read twice is one escalation",
			strings.Repeat(escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true), 2) + escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, false),
			Options{}, []string{"RogueBot unverified 192.0.2.1 https://example.com block +0 denied 1, 1 violations"}, 0},
		{"no time it began",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "escalated_since", nil) + escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, false, "escalated_since", "never"),
			Options{}, []string{"RogueBot unverified 192.0.2.1 https://example.com block unknown denied 1, 1 violations"}, 0},
		{"the filter leaves the beginning out",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true) + escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, false, "ts", escT0+10),
			Options{Filter: Filter{Since: escAt(5)}}, nil, 1},
		{"a mode and a target past their bounds are cut",
			escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "escalation", "blockblockblockblock", "escalated_by", long),
			Options{}, []string{"RogueBot unverified 192.0.2.1 https://example.com blockblockblockb +0 denied 0, 0 violations"}, 0},
	}
	for _, tt := range tests {
		a := New(tt.opts)
		if _, err := a.Read("test.log", strings.NewReader(tt.log)); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		if got := escSummary(r); !slices.Equal(got, tt.want) {
			t.Errorf("%s: escalations\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		if r.EscalationStats.DeniedUnlisted != tt.unlisted || r.EscalationStats.Dropped != 0 {
			t.Errorf("%s: stats %+v, want %d denials unlisted", tt.name, r.EscalationStats, tt.unlisted)
		}
		for _, e := range r.Escalations {
			if len(e.EscalatedBy) > MaxPathLength {
				t.Errorf("%s: escalated_by of %d octets kept", tt.name, len(e.EscalatedBy))
			}
		}
	}
}

// TestEscalationSpellings checks that of two records of one beginning
// (two copies of a log) in other spellings, the least of each is shown,
// whichever was read first.
func TestEscalationSpellings(t *testing.T) {
	one := escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "site", "https://example.COM", "escalated_by", "/private/b", "ts", escT0+2)
	two := escLine("roguebot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "site", "https://Example.com", "escalated_by", "/private/a", "escalated_until", escT0+7200)
	want := Escalation{Site: "https://Example.com", Agent: "RogueBot", Identity: "unverified", ClientIP: "192.0.2.1", Mode: "block",
		Since: escAt(0), Until: escAt(7200), EscalatedBy: "/private/a", StartedAt: escAt(0.5), Instance: "test.log"}
	for _, log := range []string{one + two, two + one} {
		a := New(Options{})
		if _, err := a.Read("test.log", strings.NewReader(log)); err != nil {
			t.Fatal(err)
		}
		if r := a.Report(); len(r.Escalations) != 1 || r.Escalations[0] != want {
			t.Errorf("escalations %+v\nwant %+v", r.Escalations, want)
		}
	}
}

// TestEscalationFields checks what is listed of a beginning: its bounds
// (numbers or strings), the target that began it and its record's time.
func TestEscalationFields(t *testing.T) {
	log := escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, true, "escalated_until", "2026-11-24T11:00:00Z", "escalated_by", "/private/a?x=1") +
		escLine("RogueBot", "unverified", "192.0.2.1", "deny", "violation", 0, false, "uri", "/private/b")
	a := New(Options{})
	if _, err := a.Read("test.log", strings.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	want := Escalation{Site: "https://example.com", Agent: "RogueBot", Identity: "unverified", ClientIP: "192.0.2.1", Mode: "block",
		Since: escAt(0), Until: escAt(3600), EscalatedBy: "/private/a?x=1", StartedAt: escAt(0.5), Denied: 1, Violations: 1, Instance: "test.log"}
	if len(r.Escalations) != 1 || r.Escalations[0] != want {
		t.Errorf("escalations %+v\nwant %+v", r.Escalations, want)
	}
}

// TestEscalationsBound checks MaxEscalations: the escalations that began
// latest are kept, each with all its denials, the others counted, and the
// result is the same in any order of the lines.
func TestEscalationsBound(t *testing.T) {
	var lines []string
	for i := range 6 {
		ip := fmt.Sprintf("192.0.2.%d", i)
		since := float64(i * 60)
		lines = append(lines, escLine("RogueBot", "unverified", ip, "deny", "violation", since, true))
		for range i {
			lines = append(lines, escLine("RogueBot", "unverified", ip, "deny", "protective", since, false))
		}
	}
	want := []string{
		"RogueBot unverified 192.0.2.3 https://example.com block +180 denied 3, 0 violations",
		"RogueBot unverified 192.0.2.4 https://example.com block +240 denied 4, 0 violations",
		"RogueBot unverified 192.0.2.5 https://example.com block +300 denied 5, 0 violations",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 30 {
		if round > 0 {
			rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		}
		a := New(Options{MaxEscalations: 3})
		if _, err := a.Read("test.log", strings.NewReader(strings.Join(lines, ""))); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		if got := escSummary(r); !slices.Equal(got, want) {
			t.Fatalf("round %d: escalations\n%s\nwant\n%s", round, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// The three that began first, with 0, 1 and 2 denials.
		if st := r.EscalationStats; st != (EscalationStats{Dropped: 3, DeniedUnlisted: 3, Max: 3}) {
			t.Fatalf("round %d: stats %+v", round, st)
		}
	}
}

// TestParseLineEscalation checks the escalation fields read from a record
// as the handler writes it.
func TestParseLineEscalation(t *testing.T) {
	const rec = `{"level":"info","ts":1795680654.4566991,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":3,"site":"http://127.0.0.1:45469","uri":"/private/a","agent":"RogueBot","verdict":"deny","mode":"log","compliance":"violation","client_ip":"198.51.100.9","escalation":"block","escalated_since":1795680654.4566813,"escalated_until":"2026-11-26T09:30:54Z","escalated_by":"/private/\u0061","escalation_began":true}`
	var s scanner
	var r rawRecord
	if _, ok := s.parseLine([]byte(rec), &r); !ok {
		t.Fatal("record not read")
	}
	for _, f := range []struct{ name, got, want string }{
		{"escalation", string(r.escalation), "block"},
		{"escalated_since", string(r.escSince), "1795680654.4566813"},
		{"escalated_until", string(r.escUntil), "2026-11-26T09:30:54Z"},
		{"escalated_by", string(r.escalatedBy), "/private/a"},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.name, f.got, f.want)
		}
	}
	all := hasEscalation | hasEscalationBegan | hasEscalatedSince | hasEscalatedUntil | hasEscalatedBy
	if r.escalationBegan != triTrue || r.escSinceString || !r.escUntilString || r.has&all != all {
		t.Errorf("escalation_began %v, since a string %v, until a string %v, has %b", r.escalationBegan, r.escSinceString, r.escUntilString, r.has)
	}
	// Fields of the wrong type are absent.
	const wrong = `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny","escalation":1,"escalated_since":true,"escalated_until":null,"escalated_by":["/"],"escalation_began":"true"}`
	if _, ok := s.parseLine([]byte(wrong), &r); !ok {
		t.Fatal("record not read")
	}
	if r.has&all != 0 || r.escalationBegan != triAbsent {
		t.Errorf("fields of the wrong type: has %b, escalation_began %v; want none", r.has, r.escalationBegan)
	}
}
