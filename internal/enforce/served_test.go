package enforce

import (
	"encoding/json"
	"fmt"
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

// A fetch counts for a product token only when the client proved it (or
// nobody could), and otherwise for the same client alone: never for
// another crawler at its address, nor for the real crawler when a forger
// fetched under its name.
func TestServedLookup(t *testing.T) {
	s := NewServed(0)
	t0 := testEpoch
	site := "https://a.example"
	note := func(ip, ua string, tokens, credited []string, version string, at time.Duration) {
		s.Note(&Serving{Site: site, ClientIP: ip, UserAgent: ua, Tokens: tokens, Credited: credited, Version: version, At: t0.Add(at)})
	}
	// The verified Googlebot fetched v1 from its own address; a forger
	// fetched v2 under its name from another.
	note("66.249.66.1", "Googlebot/2.1", []string{"Googlebot"}, []string{"Googlebot"}, "v1", 0)
	note("203.0.113.5", "Googlebot/2.1", []string{"Googlebot"}, nil, "v2", time.Minute)
	// GPTBot fetched v2 from an address ExampleBot shares.
	note("192.0.2.1", "GPTBot/1.2", []string{"GPTBot"}, []string{"GPTBot"}, "v2", 0)
	// A client with no token, by its header.
	note("192.0.2.9", "Mozilla/5.0 (X11)", nil, nil, "v1", 0)
	// A token no method proves counts for it wherever it asks from.
	note("192.0.2.7", "ExampleBot/1.0", []string{"examplebot"}, []string{"examplebot"}, "v1", time.Hour)

	cases := []struct {
		name string
		a    Asker
		now  time.Duration
		want string
		link ServedLink
	}{
		{"verified Googlebot elsewhere: its own fetch only", Asker{Token: "googlebot", Credited: true, ClientIP: "66.249.66.9"}, 2 * time.Hour, "[v1]", LinkToken},
		{"the forger: its own fetch", Asker{Token: "Googlebot", ClientIP: "203.0.113.5"}, 2 * time.Hour, "[v2]", LinkClient},
		{"a forger from elsewhere: nothing", Asker{Token: "Googlebot", ClientIP: "203.0.113.6"}, 2 * time.Hour, "[]", LinkNone},
		{"ExampleBot at GPTBot's address: nothing of GPTBot's", Asker{Token: "OtherBot", Credited: true, ClientIP: "192.0.2.1"}, 2 * time.Hour, "[]", LinkNone},
		{"GPTBot from its address, uncredited: as the client", Asker{Token: "gptbot", ClientIP: "192.0.2.1"}, 2 * time.Hour, "[v2]", LinkClient},
		{"no token: same address and header", Asker{ClientIP: "192.0.2.9", UserAgent: "Mozilla/5.0 (X11)"}, 2 * time.Hour, "[v1]", LinkClient},
		{"no token: same address, another header", Asker{ClientIP: "192.0.2.9", UserAgent: "Mozilla/5.0 (Mac)"}, 2 * time.Hour, "[]", LinkNone},
		{"an unprovable token from anywhere", Asker{Token: "ExampleBot", Credited: true, ClientIP: "198.51.100.1"}, 2 * time.Hour, "[v1]", LinkToken},
		{"past the grace window", Asker{Token: "ExampleBot", Credited: true}, robotstxt.GraceWindow + 2*time.Hour, "[]", LinkNone},
		{"another site", Asker{Token: "googlebot", Credited: true}, time.Hour, "[]", LinkNone},
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

// Whatever clients send, the table stays within its bounds.
func TestServedBounds(t *testing.T) {
	s := NewServed(100)
	now := testEpoch
	long := strings.Repeat("a", 16<<10)
	for i := range 5000 {
		tok := fmt.Sprintf("Bot%d", i)
		s.Note(&Serving{Site: "https://a.example", ClientIP: fmt.Sprintf("10.0.%d.%d", i/256, i%256), UserAgent: long,
			Tokens: []string{tok, long}, Credited: []string{tok, long}, Version: fmt.Sprintf("h%d", i%20), At: now})
	}
	if n := s.Len(); n > 100 {
		t.Errorf("%d pairs, want at most 100", n)
	}
	for k := range s.pairs {
		if len(k.name) > maxServedToken+64 {
			t.Errorf("a pair named %d octets long", len(k.name))
		}
	}
	// One crawler served many versions keeps the newest.
	for i := range 3 * MaxServedVersions {
		s.Note(&Serving{Site: "https://a.example", Tokens: []string{"Busy"}, Credited: []string{"Busy"},
			Version: fmt.Sprintf("v%02d", i), At: now.Add(time.Duration(i) * time.Minute)})
	}
	vs, _ := s.Lookup("https://a.example", &Asker{Token: "busy", Credited: true}, now.Add(time.Hour))
	if len(vs) != MaxServedVersions || vs[0].Hash != fmt.Sprintf("v%02d", 3*MaxServedVersions-1) {
		t.Errorf("busy crawler: %d versions, newest %v; want %d, the last served", len(vs), vs, MaxServedVersions)
	}
}

// What crawlers were served survives a restart, within GraceWindow, keyed
// as it was noted; pairs saved before fetches were credited by proof are
// not restored.
func TestServedSaveRestore(t *testing.T) {
	s := NewServed(0)
	t0 := testEpoch
	s.Note(&Serving{Site: "https://a.example", ClientIP: "192.0.2.1", Tokens: []string{"ExampleBot"}, Credited: []string{"ExampleBot"}, Version: "v1", At: t0})
	s.Note(&Serving{Site: "https://a.example", ClientIP: "192.0.2.2", Tokens: []string{"Googlebot"}, Version: "v2", At: t0})
	s.Note(&Serving{Site: "https://a.example", Tokens: []string{"OldBot"}, Credited: []string{"OldBot"}, Version: "v0", At: t0.Add(-2 * robotstxt.GraceWindow)})
	b, err := json.Marshal(s.Save())
	if err != nil {
		t.Fatal(err)
	}
	var saved []SavedServed
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	saved = append(saved, SavedServed{Site: "https://a.example", Name: "192.0.2.3", Versions: []ServedVersion{{"v9", t0}}}) // an old "ip" pair
	r := NewServed(0)
	r.Restore(saved, t0.Add(time.Hour))
	if vs, link := r.Lookup("https://a.example", &Asker{Token: "examplebot", Credited: true}, t0.Add(time.Hour)); fmt.Sprint(vs) != fmt.Sprint([]ServedVersion{{"v1", t0}}) || link != LinkToken {
		t.Errorf("restored token lookup = %v, %v", vs, link)
	}
	if vs, link := r.Lookup("https://a.example", &Asker{Token: "Googlebot", ClientIP: "192.0.2.2"}, t0.Add(time.Hour)); servedHashes(vs) != "[v2]" || link != LinkClient {
		t.Errorf("restored client lookup = %v, %v", vs, link)
	}
	if vs, _ := r.Lookup("https://a.example", &Asker{Token: "Googlebot", Credited: true, ClientIP: "192.0.2.3"}, t0.Add(time.Hour)); len(vs) != 0 {
		t.Errorf("an old ip pair was restored: %v", vs)
	}
	if n := r.Len(); n != 3 {
		t.Errorf("%d pairs restored, want 3 (ExampleBot by token and client, Googlebot's client; the old serve left out)", n)
	}
}
