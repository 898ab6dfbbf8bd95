package enforce

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// ip parses an address for the tests.
func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

// An escalation is the crawler's: its proven token, or an unproven
// claim's token and address (an IPv6 /64, unmapped); it ends when its
// time is up; and it survives a save and a restore.
func TestViolators(t *testing.T) {
	v := NewViolators(0)
	t0 := testEpoch
	const site = "https://a.example"
	if v.Lookup(site, "RogueBot", ip("192.0.2.1"), false, t0) != nil {
		t.Fatal("an empty table holds an escalation")
	}
	if !v.Begin(site, "RogueBot", ip("192.0.2.1"), false, t0, time.Hour, Escalation{URI: "/private/a"}) {
		t.Fatal("Begin = false on an empty table")
	}
	if v.Begin(site, "roguebot", ip("192.0.2.1"), false, t0.Add(time.Minute), time.Hour, Escalation{URI: "/private/b"}) {
		t.Error("a second Begin while one is in force began another")
	}
	v.Begin(site, "V6Bot", ip("2001:db8:1:2::10"), false, t0, time.Hour, Escalation{URI: "/x"})
	cases := []struct {
		name   string
		token  string
		addr   string
		proven bool
		at     time.Duration
		want   bool
	}{
		{"the violator", "ROGUEBOT", "192.0.2.1", false, time.Minute, true},
		{"the violator, its address mapped", "RogueBot", "::ffff:192.0.2.1", false, time.Minute, true},
		{"its token from another address", "RogueBot", "192.0.2.2", false, time.Minute, false},
		{"its token proven", "RogueBot", "192.0.2.1", true, time.Minute, false},
		{"past its time", "RogueBot", "192.0.2.1", false, time.Hour, false},
		{"another address of its IPv6 /64", "V6Bot", "2001:db8:1:2::99", false, time.Minute, true},
		{"another IPv6 /64", "V6Bot", "2001:db8:1:3::10", false, time.Minute, false},
	}
	for _, c := range cases {
		if got := v.Lookup(site, c.token, ip(c.addr), c.proven, t0.Add(c.at)) != nil; got != c.want {
			t.Errorf("%s: escalated %v, want %v", c.name, got, c.want)
		}
	}
	if e := v.Lookup(site, "RogueBot", ip("192.0.2.1"), false, t0); e == nil || e.URI != "/private/a" || !e.Until.Equal(t0.Add(time.Hour)) {
		t.Errorf("the escalation %+v, want the first violation's, until an hour on", e)
	}
	v.Begin(site, "Googlebot", ip("66.249.66.1"), true, t0, time.Hour, Escalation{URI: "/x"})
	if v.Lookup(site, "googlebot", ip("203.0.113.9"), true, t0) == nil {
		t.Error("a proven token's escalation does not follow it to another address")
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
	if r.Len() != 3 || r.Lookup(site, "RogueBot", ip("192.0.2.1"), false, t0.Add(30*time.Minute)) == nil ||
		r.Lookup(site, "V6Bot", ip("2001:db8:1:2::5"), false, t0.Add(30*time.Minute)) == nil {
		t.Errorf("restored %d escalations, or without the violators': want all 3", r.Len())
	}
	late := NewViolators(0)
	late.Restore(saved, t0.Add(2*time.Hour))
	if late.Len() != 0 {
		t.Errorf("restored %d escalations past their time, want none", late.Len())
	}
}

// Whatever clients send, the table holds at most its bound, names cut
// short; a full table makes room with the escalation begun first.
func TestViolatorsBound(t *testing.T) {
	v := NewViolators(100)
	t0 := testEpoch
	long := strings.Repeat("a", 1<<10)
	for i := range 1000 {
		v.Begin("https://a.example", fmt.Sprintf("Bot%d", i), ip(fmt.Sprintf("10.0.%d.%d", i/256, i%256)), false,
			t0.Add(time.Duration(i)*time.Second), time.Hour, Escalation{URI: long})
		v.Begin("https://a.example", long, ip("10.1.0.1"), false, t0, time.Hour, Escalation{})
	}
	if n := v.Len(); n > 100 {
		t.Errorf("%d escalations held, want at most 100", n)
	}
	v.unproven.each(func(k violatorKey, e *Escalation) bool {
		if len(k.token) > maxServedToken || len(e.URI) > maxEscalationURI {
			t.Errorf("an escalation keeps %d octets of token and %d of target", len(k.token), len(e.URI))
		}
		return true
	})
	if v.Lookup("https://a.example", "Bot999", ip("10.0.3.231"), false, t0.Add(999*time.Second)) == nil {
		t.Error("the newest escalation was made room for")
	}
}

// TestViolatorsFlood checks what one address cannot do: it cannot push
// out another client's escalation, nor a proven crawler's, however many
// names it violates under, and changing names does not get it out of its
// own: past its share, the address itself is escalated.
func TestViolatorsFlood(t *testing.T) {
	v := NewViolators(0)
	t0 := testEpoch
	const site = "https://a.example"
	v.Begin(site, "RealBot", ip("198.51.100.7"), false, t0, time.Hour, Escalation{URI: "/private/real"})
	v.Begin(site, "GPTBot", ip("192.0.2.1"), true, t0, time.Hour, Escalation{URI: "/private/gpt"})
	flooder := ip("203.0.113.66")
	v.Begin(site, "MadeUp0", flooder, false, t0, time.Hour, Escalation{})
	for i := 1; i <= 10_050; i++ {
		v.Begin(site, fmt.Sprintf("MadeUp%d", i), flooder, false, t0.Add(time.Millisecond), time.Hour, Escalation{})
	}
	now := t0.Add(time.Second)
	if v.Lookup(site, "RealBot", ip("198.51.100.7"), false, now) == nil {
		t.Error("one address's flood pushed out another client's escalation")
	}
	if v.Lookup(site, "gptbot", ip("203.0.113.1"), true, now) == nil {
		t.Error("one address's flood pushed out a proven crawler's escalation")
	}
	if n := v.unproven.groupLen(addressKey(flooder).String()); n > maxPerAddress {
		t.Errorf("the flooding address holds %d escalations, want at most %d", n, maxPerAddress)
	}
	for _, name := range []string{"MadeUp0", "MadeUp10050", "AnyOtherName"} {
		if v.Lookup(site, name, flooder, false, now) == nil {
			t.Errorf("the flooding address escapes its escalation as %s", name)
		}
	}
	if v.Lookup(site, "MadeUp1", ip("203.0.113.67"), false, now) != nil {
		t.Error("the address's neighbour is escalated")
	}
	if v.Lookup("https://b.example", "MadeUp1", flooder, false, now) != nil {
		t.Error("the address is escalated on another site")
	}
}
