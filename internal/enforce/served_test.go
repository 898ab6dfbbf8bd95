package enforce

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// servedHashes returns the hashes of vs, for comparisons.
func servedHashes(vs []ServedVersion) string {
	var hashes []string
	for _, v := range vs {
		hashes = append(hashes, v.Hash)
	}
	return fmt.Sprint(hashes)
}

// A fetch counts for a product token only when the client proved it, and
// otherwise for the same client alone (its address, an IPv6 /64, and its
// names): never for another crawler at its address, nor for the real
// crawler when a forger, or anyone claiming a token no method can prove,
// fetched under its name.
func TestServedLookup(t *testing.T) {
	s := NewServed(0)
	t0 := testEpoch
	site := "https://a.example"
	note := func(ip string, names, proven []string, agent, version string, at time.Duration) {
		s.Note(&Serving{Site: site, Addr: netip.MustParseAddr(ip), Names: names, Proven: proven, Agent: agent,
			Version: version, At: t0.Add(at)})
	}
	// The verified Googlebot fetched v1 from its own address; a forger
	// fetched v2 under its name from another.
	note("66.249.66.1", []string{"googlebot"}, []string{"googlebot"}, "", "v1", 0)
	note("203.0.113.5", []string{"googlebot"}, nil, "", "v2", time.Minute)
	// GPTBot fetched v2 from an address ExampleBot shares.
	note("192.0.2.1", []string{"gptbot"}, []string{"gptbot"}, "", "v2", 0)
	// A client with no token, by its header.
	note("192.0.2.9", nil, nil, "x11", "v1", 0)
	// A token no method proves counts for the client that fetched alone.
	note("192.0.2.7", []string{"examplebot"}, nil, "", "v1", time.Hour)
	// A crawler fetching from an IPv6 address, and from an IPv4 address a
	// proxy wrote mapped.
	note("2001:db8:1:2::10", []string{"v6bot"}, nil, "", "v1", 0)
	note("::ffff:198.51.100.4", []string{"mappedbot"}, nil, "", "v2", 0)

	cases := []struct {
		name string
		a    Asker
		now  time.Duration
		want string
		link ServedLink
	}{
		{"verified Googlebot elsewhere: its own fetch only", Asker{Token: "googlebot", Proven: true, Addr: netip.MustParseAddr("66.249.66.9"), Names: []string{"googlebot"}}, 2 * time.Hour, "[v1]", LinkToken},
		{"the forger: its own fetch", Asker{Token: "googlebot", Addr: netip.MustParseAddr("203.0.113.5"), Names: []string{"googlebot"}}, 2 * time.Hour, "[v2]", LinkClient},
		{"a forger from elsewhere: nothing", Asker{Token: "googlebot", Addr: netip.MustParseAddr("203.0.113.6"), Names: []string{"googlebot"}}, 2 * time.Hour, "[]", LinkNone},
		{"ExampleBot at GPTBot's address: nothing of GPTBot's", Asker{Token: "otherbot", Addr: netip.MustParseAddr("192.0.2.1"), Names: []string{"otherbot"}}, 2 * time.Hour, "[]", LinkNone},
		{"GPTBot from its address, unproven: as the client", Asker{Token: "gptbot", Addr: netip.MustParseAddr("192.0.2.1"), Names: []string{"gptbot"}}, 2 * time.Hour, "[v2]", LinkClient},
		{"the same client by another of its names", Asker{Token: "mj12bot", Addr: netip.MustParseAddr("192.0.2.1"), Names: []string{"mj12bot", "gptbot"}}, 2 * time.Hour, "[v2]", LinkClient},
		{"no token: same address and header", Asker{Addr: netip.MustParseAddr("192.0.2.9"), Agent: "x11"}, 2 * time.Hour, "[v1]", LinkClient},
		{"no token: same address, another header", Asker{Addr: netip.MustParseAddr("192.0.2.9"), Agent: "mac"}, 2 * time.Hour, "[]", LinkNone},
		{"an unprovable token from elsewhere: nothing", Asker{Token: "examplebot", Proven: true, Addr: netip.MustParseAddr("198.51.100.1"), Names: []string{"examplebot"}}, 2 * time.Hour, "[]", LinkNone},
		{"an unprovable token from its own address", Asker{Token: "examplebot", Addr: netip.MustParseAddr("192.0.2.7"), Names: []string{"examplebot"}}, 2 * time.Hour, "[v1]", LinkClient},
		{"another address of the same IPv6 /64", Asker{Token: "v6bot", Addr: netip.MustParseAddr("2001:db8:1:2::99"), Names: []string{"v6bot"}}, time.Hour, "[v1]", LinkClient},
		{"another IPv6 /64", Asker{Token: "v6bot", Addr: netip.MustParseAddr("2001:db8:1:3::10"), Names: []string{"v6bot"}}, time.Hour, "[]", LinkNone},
		{"the mapped address, unmapped", Asker{Token: "mappedbot", Addr: netip.MustParseAddr("198.51.100.4"), Names: []string{"mappedbot"}}, time.Hour, "[v2]", LinkClient},
		{"past the grace window", Asker{Token: "googlebot", Proven: true}, robotstxt.GraceWindow + 2*time.Hour, "[]", LinkNone},
		{"another site", Asker{Token: "googlebot", Proven: true}, time.Hour, "[]", LinkNone},
	}
	for _, c := range cases {
		lookupSite := site
		if c.name == "another site" {
			lookupSite = "https://b.example"
		}
		vs, link := s.Lookup(lookupSite, &c.a, t0.Add(c.now))
		if got := servedHashes(vs); got != c.want || link != c.link {
			t.Errorf("%s: Lookup(%+v) = %s, %v; want %s, %v", c.name, c.a, got, link, c.want, c.link)
		}
	}
}

// Whatever clients send, the table stays within its bounds, and one
// address inventing names pushes out only its own pairs.
func TestServedBounds(t *testing.T) {
	s := NewServed(100)
	now := testEpoch
	long := strings.Repeat("a", 16<<10)
	s.Note(&Serving{Site: "https://a.example", Addr: netip.MustParseAddr("192.0.2.50"), Names: []string{"realbot"},
		Version: "v1", At: now})
	for i := range 5000 {
		tok := fmt.Sprintf("bot%d", i)
		s.Note(&Serving{Site: "https://a.example", Addr: netip.MustParseAddr("10.0.0.1"),
			Names: []string{tok, long}, Version: fmt.Sprintf("h%d", i%20), At: now})
	}
	if n := s.Len(); n > 100 {
		t.Errorf("%d pairs, want at most 100", n)
	}
	if n := s.pairs.groupLen("10.0.0.1"); n > servedPerAddress {
		t.Errorf("one address holds %d pairs, want at most %d", n, servedPerAddress)
	}
	s.pairs.each(func(k servedKey, _ *servedVersions) bool {
		if len(k.name) > maxServedToken {
			t.Errorf("a pair named %d octets long", len(k.name))
		}
		return true
	})
	if vs, _ := s.Lookup("https://a.example", &Asker{Addr: netip.MustParseAddr("192.0.2.50"), Names: []string{"realbot"}}, now); len(vs) != 1 {
		t.Errorf("another client's fetch was pushed out by one address's flood: %v", vs)
	}
	// One crawler served many versions keeps the newest.
	for i := range 3 * MaxServedVersions {
		s.Note(&Serving{Site: "https://a.example", Proven: []string{"busy"},
			Version: fmt.Sprintf("v%02d", i), At: now.Add(time.Duration(i) * time.Minute)})
	}
	vs, _ := s.Lookup("https://a.example", &Asker{Token: "busy", Proven: true}, now.Add(time.Hour))
	if len(vs) != MaxServedVersions || vs[0].Hash != fmt.Sprintf("v%02d", 3*MaxServedVersions-1) {
		t.Errorf("busy crawler: %d versions, newest %v; want %d, the last served", len(vs), vs, MaxServedVersions)
	}
}

// What crawlers were served survives a restart, within GraceWindow, keyed
// as it was noted; pairs saved before fetches were credited by proof are
// not restored, and a saved IPv6 address is keyed by its /64.
func TestServedSaveRestore(t *testing.T) {
	s := NewServed(0)
	t0 := testEpoch
	s.Note(&Serving{Site: "https://a.example", Addr: netip.MustParseAddr("192.0.2.1"), Names: []string{"examplebot"}, Proven: []string{"examplebot"}, Version: "v1", At: t0})
	s.Note(&Serving{Site: "https://a.example", Addr: netip.MustParseAddr("192.0.2.2"), Names: []string{"googlebot"}, Version: "v2", At: t0})
	s.Note(&Serving{Site: "https://a.example", Proven: []string{"oldbot"}, Version: "v0", At: t0.Add(-2 * robotstxt.GraceWindow)})
	b, err := json.Marshal(s.Save())
	if err != nil {
		t.Fatal(err)
	}
	var saved []SavedServed
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	saved = append(saved,
		SavedServed{Site: "https://a.example", Name: "192.0.2.3", Versions: []ServedVersion{{"v9", t0}}},                         // an old "ip" pair
		SavedServed{Site: "https://a.example", Kind: "client", Name: "2001:db8::7 v6bot", Versions: []ServedVersion{{"v3", t0}}}) // an address saved whole
	r := NewServed(0)
	r.Restore(saved, t0.Add(time.Hour))
	if vs, link := r.Lookup("https://a.example", &Asker{Token: "examplebot", Proven: true}, t0.Add(time.Hour)); fmt.Sprint(vs) != fmt.Sprint([]ServedVersion{{"v1", t0}}) || link != LinkToken {
		t.Errorf("restored token lookup = %v, %v", vs, link)
	}
	if vs, link := r.Lookup("https://a.example", &Asker{Token: "googlebot", Addr: netip.MustParseAddr("192.0.2.2"), Names: []string{"googlebot"}}, t0.Add(time.Hour)); servedHashes(vs) != "[v2]" || link != LinkClient {
		t.Errorf("restored client lookup = %v, %v", vs, link)
	}
	if vs, _ := r.Lookup("https://a.example", &Asker{Token: "googlebot", Addr: netip.MustParseAddr("192.0.2.3"), Names: []string{"googlebot"}}, t0.Add(time.Hour)); len(vs) != 0 {
		t.Errorf("an old ip pair was restored: %v", vs)
	}
	if vs, _ := r.Lookup("https://a.example", &Asker{Addr: netip.MustParseAddr("2001:db8::99"), Names: []string{"v6bot"}}, t0.Add(time.Hour)); servedHashes(vs) != "[v3]" {
		t.Errorf("a saved IPv6 address not keyed by its /64: %v", vs)
	}
	if n := r.Len(); n != 4 {
		t.Errorf("%d pairs restored, want 4 (ExampleBot by token and client, Googlebot's client, the IPv6 client; the old serves left out)", n)
	}
}
