package enforce

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A crawler is tied to the versions it was served by its token first, by
// its client IP otherwise, within GraceWindow.
func TestServedLookup(t *testing.T) {
	s := NewServed(0)
	t0 := snapEpoch
	s.Note("https://a.example", []string{"ExampleBot"}, "192.0.2.1", "v1", t0)
	s.Note("https://a.example", []string{"Mozilla"}, "192.0.2.9", "v2", t0.Add(time.Minute))
	s.Note("https://a.example", []string{"examplebot"}, "192.0.2.1", "v2", t0.Add(time.Hour))

	cases := []struct {
		site, token, ip string
		now             time.Time
		want            string
		link            ServedLink
	}{
		{"https://a.example", "EXAMPLEBOT", "", t0.Add(2 * time.Hour), "[v2 v1]", LinkToken},
		{"https://a.example", "OtherBot", "192.0.2.9", t0.Add(2 * time.Hour), "[v2]", LinkIP},
		{"https://a.example", "ExampleBot", "", t0.Add(GraceWindow + 30*time.Minute), "[v2]", LinkToken},
		{"https://a.example", "ExampleBot", "", t0.Add(GraceWindow + 2*time.Hour), "[]", LinkNone},
		{"https://b.example", "ExampleBot", "192.0.2.1", t0.Add(time.Hour), "[]", LinkNone},
		{"https://a.example", "", "192.0.2.2", t0.Add(time.Hour), "[]", LinkNone},
	}
	for _, c := range cases {
		vs, link := s.Lookup(c.site, c.token, c.ip, c.now)
		var hashes []string
		for _, v := range vs {
			hashes = append(hashes, v.Hash)
		}
		if got := fmt.Sprint(hashes); got != c.want || link != c.link {
			t.Errorf("Lookup(%q, %q, %q, +%v) = %s, %v; want %s, %v", c.site, c.token, c.ip, c.now.Sub(t0), got, link, c.want, c.link)
		}
	}
}

// Whatever clients send, the table stays within its bounds.
func TestServedBounds(t *testing.T) {
	s := NewServed(100)
	now := snapEpoch
	long := strings.Repeat("a", 16<<10)
	for i := range 5000 {
		s.Note("https://a.example", []string{fmt.Sprintf("Bot%d", i), long}, fmt.Sprintf("10.0.%d.%d", i/256, i%256), fmt.Sprintf("h%d", i%20), now)
	}
	if n := s.Len(); n > 100 {
		t.Errorf("%d pairs, want at most 100", n)
	}
	for k := range s.pairs {
		if len(k.name) > maxServedName {
			t.Errorf("a pair named %d octets long", len(k.name))
		}
	}
	// One crawler served many versions keeps the newest.
	for i := range 3 * MaxServedVersions {
		s.Note("https://a.example", []string{"Busy"}, "", fmt.Sprintf("v%02d", i), now.Add(time.Duration(i)*time.Minute))
	}
	vs, _ := s.Lookup("https://a.example", "busy", "", now.Add(time.Hour))
	if len(vs) != MaxServedVersions || vs[0].Hash != fmt.Sprintf("v%02d", 3*MaxServedVersions-1) {
		t.Errorf("busy crawler: %d versions, newest %v; want %d, the last served", len(vs), vs, MaxServedVersions)
	}
}
