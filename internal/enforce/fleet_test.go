package enforce

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// What two instances served, one holding the other's as its fleet
// overlay, is what one table that saw every serve would say: for every
// crawler, the same versions and the same link. A differential test over
// random serves split between the two.
func TestServedFleetDifferential(t *testing.T) {
	t0 := testEpoch
	sites := []string{"https://a.example", "https://b.example"}
	addrs := []string{"192.0.2.1", "192.0.2.2", "2001:db8:1:2::10", "2001:db8:1:2::99", "198.51.100.7"}
	names := []string{"gptbot", "claudebot", "examplebot"}
	versions := []string{"v1", "v2", "v3", "unavailable"}
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		here, there, whole := NewServed(0), NewServed(0), NewServed(0)
		for range 60 {
			sv := &Serving{Site: sites[r.IntN(len(sites))], Addr: netip.MustParseAddr(addrs[r.IntN(len(addrs))]),
				Names: []string{names[r.IntN(len(names))]}, Version: versions[r.IntN(len(versions))],
				At: t0.Add(time.Duration(r.IntN(30)) * time.Hour)}
			if r.IntN(2) == 0 {
				sv.Proven = sv.Names
			}
			if r.IntN(4) == 0 {
				sv.Names, sv.Proven, sv.Agent = nil, nil, "digest"
			}
			if r.IntN(2) == 0 {
				here.Note(sv)
			} else {
				there.Note(sv)
			}
			whole.Note(sv)
		}
		now := t0.Add(30 * time.Hour)
		if n := here.SetFleet([][]SavedServed{there.Save()}, now); n == 0 {
			t.Fatalf("seed %d: the overlay holds nothing", seed)
		}
		for _, site := range sites {
			for _, addr := range addrs {
				for _, name := range append(slices.Clone(names), "") {
					for _, proven := range []bool{false, true} {
						a := Asker{Token: name, Proven: proven, Addr: netip.MustParseAddr(addr), Names: []string{name}}
						if name == "" {
							a.Names, a.Agent = nil, "digest"
						}
						got, gotLink := here.Lookup(site, &a, now)
						want, wantLink := whole.Lookup(site, &a, now)
						if servedSet(got) != servedSet(want) || gotLink != wantLink {
							t.Fatalf("seed %d: Lookup(%s, %+v) with the fleet = %s %v, one table = %s %v",
								seed, site, a, servedSet(got), gotLink, servedSet(want), wantLink)
						}
					}
				}
			}
		}
		// What the table saves is its own: the fleet's pairs are never
		// echoed back.
		if got, want := len(here.Save()), here.Len(); got != want {
			t.Errorf("seed %d: Save holds %d pairs, the table %d of its own", seed, got, want)
		}
	}
}

// servedSet returns the versions and times of vs, sorted.
func servedSet(vs []ServedVersion) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Hash+"@"+v.At.Format(time.RFC3339))
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

// The overlay is bounded: MaxFleetServed pairs, those served last; serves
// past the grace window are left out; no parts removes it.
func TestServedFleetBounds(t *testing.T) {
	t0 := testEpoch
	var part []SavedServed
	for i := range MaxFleetServed + 500 {
		part = append(part, SavedServed{Site: "https://a.example", Kind: "token", Name: fmt.Sprintf("bot%d", i),
			Versions: []ServedVersion{{Hash: "v1", At: t0.Add(time.Duration(i) * time.Second)}}})
	}
	part = append(part, SavedServed{Site: "https://a.example", Kind: "token", Name: "oldbot",
		Versions: []ServedVersion{{Hash: "v1", At: t0.Add(-robotstxt.GraceWindow - time.Hour)}}})
	s := NewServed(0)
	now := t0.Add(4 * time.Hour) // after every serve
	if n := s.SetFleet([][]SavedServed{part, part}, now); n != MaxFleetServed || s.FleetLen() != MaxFleetServed {
		t.Fatalf("SetFleet held %d pairs (FleetLen %d), want %d", n, s.FleetLen(), MaxFleetServed)
	}
	lookup := func(tok string) string {
		vs, _ := s.Lookup("https://a.example", &Asker{Token: tok, Proven: true}, now)
		return servedHashes(vs)
	}
	if got := lookup(fmt.Sprintf("bot%d", MaxFleetServed+499)); got != "[v1]" {
		t.Errorf("the pair served last: %s, want [v1]", got)
	}
	if got := lookup("bot0"); got != "[]" {
		t.Errorf("the pair served first, past the bound: %s, want []", got)
	}
	if got := lookup("oldbot"); got != "[]" {
		t.Errorf("a serve past the grace window: %s, want []", got)
	}
	if s.Len() != 0 {
		t.Errorf("the table's own pairs: %d, want 0", s.Len())
	}
	s.SetFleet(nil, now)
	if s.FleetLen() != 0 || lookup(fmt.Sprintf("bot%d", MaxFleetServed+499)) != "[]" {
		t.Error("no parts left the overlay in place")
	}
}

// An escalation another instance began is in force here, as the one it
// began, with its end; none begins here over it; the one begun first
// stands fleet-wide, and one begun here later is made to end with it;
// what the table saves is its own.
func TestViolatorsFleet(t *testing.T) {
	t0 := testEpoch
	const site = "https://a.example"
	there := NewViolators(0)
	there.Begin(site, "RogueBot", ip("192.0.2.1"), false, t0, time.Hour, Escalation{URI: "/private/a"})
	there.Begin(site, "GPTBot", ip("20.0.0.1"), true, t0.Add(time.Minute), 2*time.Hour, Escalation{URI: "/private/b"})

	here := NewViolators(0)
	// Here, GPTBot was escalated later, for longer, before the fleet's
	// view came.
	here.Begin(site, "GPTBot", ip("20.0.0.9"), true, t0.Add(5*time.Minute), 24*time.Hour, Escalation{URI: "/private/c"})
	now := t0.Add(10 * time.Minute)
	if n := here.SetFleet([][]EscalatedCrawler{there.Save(now)}, now); n != 2 {
		t.Fatalf("SetFleet held %d, want 2", n)
	}
	if here.Len() != 3 || here.OwnLen() != 1 || here.FleetLen() != 2 {
		t.Errorf("Len %d, OwnLen %d, FleetLen %d; want 3, 1, 2", here.Len(), here.OwnLen(), here.FleetLen())
	}
	e := here.Lookup(site, "roguebot", ip("192.0.2.1"), false, now)
	if e == nil || e.URI != "/private/a" || !e.Until.Equal(t0.Add(time.Hour)) {
		t.Errorf("the fleet's escalation of RogueBot: %+v, want the one begun elsewhere, until an hour on", e)
	}
	if here.Lookup(site, "roguebot", ip("192.0.2.2"), false, now) != nil {
		t.Error("the fleet's escalation follows an unproven token to another address")
	}
	if here.Begin(site, "RogueBot", ip("192.0.2.1"), false, now, time.Hour, Escalation{URI: "/private/z"}) {
		t.Error("an escalation began here over the fleet's")
	}
	e = here.Lookup(site, "gptbot", ip("20.0.0.5"), true, now)
	if e == nil || e.URI != "/private/b" {
		t.Errorf("GPTBot, escalated here and elsewhere: %+v, want the one begun first (/private/b)", e)
	}
	if e := here.Lookup(site, "gptbot", ip("20.0.0.5"), true, t0.Add(2*time.Hour+time.Minute)); e != nil {
		t.Errorf("GPTBot past the end of the escalation begun first: %+v, want none (the later one ends with it)", e)
	}
	saved := here.Save(now)
	if len(saved) != 1 || saved[0].URI != "/private/c" || !saved[0].Until.Equal(t0.Add(2*time.Hour+time.Minute)) {
		t.Errorf("Save = %+v, want this table's own GPTBot escalation, ending with the fleet's", saved)
	}
	// Past its end the fleet's escalation is gone, and none is installed.
	later := t0.Add(3 * time.Hour)
	if n := here.SetFleet([][]EscalatedCrawler{there.Save(now)}, later); n != 0 || here.Len() != 1 {
		t.Errorf("SetFleet past every end held %d (Len %d), want 0 (1)", n, here.Len())
	}
	if here.Lookup(site, "roguebot", ip("192.0.2.1"), false, later) != nil {
		t.Error("an ended escalation of the fleet is in force")
	}
}

// An address escalated as a whole elsewhere is escalated here, whatever
// token it claims; the overlay holds at most MaxFleetEscalations of each
// kind, those begun last.
func TestViolatorsFleetWholeAddressAndBounds(t *testing.T) {
	t0 := testEpoch
	const site = "https://a.example"
	var part []EscalatedCrawler
	for i := range MaxFleetEscalations + 10 {
		part = append(part, EscalatedCrawler{Site: site, Token: fmt.Sprintf("bot%d", i), Since: t0.Add(time.Duration(i) * time.Second),
			Until: t0.Add(48 * time.Hour)})
	}
	part = append(part, EscalatedCrawler{Site: site, Token: "*", IP: "198.51.100.1", Since: t0, Until: t0.Add(time.Hour)})
	v := NewViolators(0)
	now := t0.Add(time.Minute)
	if n := v.SetFleet([][]EscalatedCrawler{part}, now); n != MaxFleetEscalations+1 {
		t.Fatalf("SetFleet held %d, want %d", n, MaxFleetEscalations+1)
	}
	if v.Lookup(site, "AnyName", ip("198.51.100.1"), false, now) == nil {
		t.Error("an address escalated as a whole elsewhere is not escalated here under another name")
	}
	if v.Begin(site, "NewName", ip("198.51.100.1"), false, now, time.Hour, Escalation{}) {
		t.Error("an escalation began for an address the fleet escalated as a whole")
	}
	if v.Lookup(site, fmt.Sprintf("bot%d", MaxFleetEscalations+9), netip.Addr{}, true, now) == nil {
		t.Error("the escalation begun last is not held")
	}
	if v.Lookup(site, "bot0", netip.Addr{}, true, now) != nil {
		t.Error("the escalation begun first, past the bound, is held")
	}
}
