package enforce

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// An escalation is the crawler's: its verified token, or an unverified
// claim's token and address; it ends when its time is up; and it survives
// a save and a restore.
func TestViolators(t *testing.T) {
	v := NewViolators(0)
	t0 := testEpoch
	const site = "https://a.example"
	if v.Lookup(site, "RogueBot", "192.0.2.1", false, t0) != nil {
		t.Fatal("an empty table holds an escalation")
	}
	if !v.Begin(site, "RogueBot", "192.0.2.1", false, t0, time.Hour, Escalation{URI: "/private/a"}) {
		t.Fatal("Begin = false on an empty table")
	}
	if v.Begin(site, "roguebot", "192.0.2.1", false, t0.Add(time.Minute), time.Hour, Escalation{URI: "/private/b"}) {
		t.Error("a second Begin while one is in force began another")
	}
	cases := []struct {
		name     string
		token    string
		ip       string
		verified bool
		at       time.Duration
		want     bool
	}{
		{"the violator", "ROGUEBOT", "192.0.2.1", false, time.Minute, true},
		{"its token from another address", "RogueBot", "192.0.2.2", false, time.Minute, false},
		{"its token verified", "RogueBot", "192.0.2.1", true, time.Minute, false},
		{"past its time", "RogueBot", "192.0.2.1", false, time.Hour, false},
	}
	for _, c := range cases {
		if got := v.Lookup(site, c.token, c.ip, c.verified, t0.Add(c.at)) != nil; got != c.want {
			t.Errorf("%s: escalated %v, want %v", c.name, got, c.want)
		}
	}
	if e := v.Lookup(site, "RogueBot", "192.0.2.1", false, t0); e == nil || e.URI != "/private/a" || !e.Until.Equal(t0.Add(time.Hour)) {
		t.Errorf("the escalation %+v, want the first violation's, until an hour on", e)
	}
	v.Begin(site, "Googlebot", "66.249.66.1", true, t0, time.Hour, Escalation{URI: "/x"})
	if v.Lookup(site, "googlebot", "203.0.113.9", true, t0) == nil {
		t.Error("a verified token's escalation does not follow it to another address")
	}

	b, err := json.Marshal(v.Save(t0.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	var saved []EscalatedCrawler
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	r := NewViolators(0)
	r.Restore(saved, t0.Add(30*time.Minute))
	if r.Len() != 2 || r.Lookup(site, "RogueBot", "192.0.2.1", false, t0.Add(30*time.Minute)) == nil {
		t.Errorf("restored %d escalations, without the violator's: want both", r.Len())
	}
	late := NewViolators(0)
	late.Restore(saved, t0.Add(2*time.Hour))
	if late.Len() != 0 {
		t.Errorf("restored %d escalations past their time, want none", late.Len())
	}
}

// Whatever clients send, the table holds at most its bound, names cut
// short; a full table makes room with the escalation ending soonest.
func TestViolatorsBound(t *testing.T) {
	v := NewViolators(100)
	t0 := testEpoch
	long := strings.Repeat("a", 1<<10)
	for i := range 1000 {
		v.Begin("https://a.example", fmt.Sprintf("Bot%d", i), fmt.Sprintf("10.0.%d.%d", i/256, i%256), false,
			t0.Add(time.Duration(i)*time.Second), time.Hour, Escalation{URI: long})
		v.Begin("https://a.example", long, "10.1.0.1", false, t0, time.Hour, Escalation{})
	}
	if n := v.Len(); n > 100 {
		t.Errorf("%d escalations held, want at most 100", n)
	}
	for k, e := range v.m {
		if len(k.token) > maxServedToken || len(e.URI) > maxEscalationURI {
			t.Errorf("an escalation keeps %d octets of token and %d of target", len(k.token), len(e.URI))
		}
	}
	if v.Lookup("https://a.example", "Bot999", "10.0.3.231", false, t0.Add(999*time.Second)) == nil {
		t.Error("the newest escalation was made room for")
	}
}
