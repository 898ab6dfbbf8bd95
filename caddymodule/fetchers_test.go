package caddymodule

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
)

// unitT0 is an arbitrary fixed instant: the tracker is given explicit times.
var unitT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func (f *robotsFetchers) unitLen() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

func TestRobotsFetchersNote(t *testing.T) {
	const (
		chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
		bing   = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
		gptbot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	)
	type query struct {
		host, agent string
		want        bool
	}
	for _, tt := range []struct {
		name    string
		host    string
		ua      string
		queries []query
		size    int // entries recorded
	}{
		{
			name: "crawler's own header",
			host: "example.com", ua: "Googlebot/2.1 (+http://www.google.com/bot.html)",
			queries: []query{
				{"example.com", "Googlebot", true},
				{"other.example", "Googlebot", false},
				{"example.com", "Bingbot", false},
				{"example.com", "", false},
			},
			size: 1,
		},
		{
			name: "host and agent compared case-insensitively",
			host: "Example.COM:8443", ua: "GoogleBot/2.1",
			queries: []query{
				{"example.com:8443", "googlebot", true},
				{"EXAMPLE.com:8443", "GOOGLEBOT", true},
				{"example.com", "googlebot", false}, // another port, another authority
			},
			size: 1,
		},
		{
			name: "crawler dressed as a browser",
			host: "example.com", ua: bing,
			queries: []query{
				{"example.com", "bingbot", true},
				{"example.com", "Mozilla", false},
				{"example.com", "compatible", false},
			},
			size: 1,
		},
		{
			name: "crawler in a browser-like product list",
			host: "example.com", ua: gptbot,
			queries: []query{
				{"example.com", "GPTBot", true},
				{"example.com", "AppleWebKit", false},
				{"example.com", "KHTML", false},
				{"example.com", "Gecko", false},
			},
			size: 1,
		},
		{
			name: "browser: generic tokens only, nothing recorded",
			host: "example.com", ua: chrome,
			queries: []query{
				{"example.com", "Mozilla", false},
				{"example.com", "Chrome", false},
				{"example.com", "Safari", false},
			},
			size: 0,
		},
		{
			name: "every non-generic token",
			host: "example.com", ua: "MyCrawler/1.0 curl/8.5.0",
			queries: []query{
				{"example.com", "mycrawler", true},
				{"example.com", "curl", true},
			},
			size: 2,
		},
		{
			name:    "no header",
			host:    "example.com",
			ua:      "",
			queries: []query{{"example.com", "", false}},
			size:    0,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newRobotsFetchers(100)
			f.note(tt.host, tt.ua, unitT0)
			for _, q := range tt.queries {
				if got := f.fetchedWithin(q.host, q.agent, unitT0, time.Minute); got != q.want {
					t.Errorf("after note(%q, %q): fetchedWithin(%q, %q) = %v, want %v", tt.host, tt.ua, q.host, q.agent, got, q.want)
				}
			}
			if got := f.unitLen(); got != tt.size {
				t.Errorf("after note(%q, %q): %d entries, want %d", tt.host, tt.ua, got, tt.size)
			}
		})
	}
}

// TestRobotsFetchersWindow checks fetchedWithin against the time of the
// latest fetch, with the record's window: a day (enforce.GraceWindow).
func TestRobotsFetchersWindow(t *testing.T) {
	f := newRobotsFetchers(100)
	f.note("example.com", "Googlebot/2.1", unitT0)
	for _, tt := range []struct {
		after time.Duration
		want  bool
	}{
		{0, true},
		{time.Hour, true},
		{23 * time.Hour, true},
		{enforce.GraceWindow, true},
		{enforce.GraceWindow + time.Nanosecond, false},
		{48 * time.Hour, false},
	} {
		now := unitT0.Add(tt.after)
		if got := f.fetchedWithin("example.com", "googlebot", now, enforce.GraceWindow); got != tt.want {
			t.Errorf("fetched at t0: fetchedWithin(t0+%v, %v) = %v, want %v", tt.after, enforce.GraceWindow, got, tt.want)
		}
	}

	// A later fetch moves the window.
	f.note("example.com", "Googlebot/2.1", unitT0.Add(30*time.Hour))
	if !f.fetchedWithin("example.com", "googlebot", unitT0.Add(48*time.Hour), enforce.GraceWindow) {
		t.Errorf("fetched again at t0+30h: fetchedWithin(t0+48h) = false, want true")
	}
	if got := f.unitLen(); got != 1 {
		t.Errorf("one agent noted twice: %d entries, want 1", got)
	}
}

// TestRobotsFetchersBound feeds more distinct agents than the bound: the map
// never grows past it, and the latest agent is always kept.
func TestRobotsFetchersBound(t *testing.T) {
	for _, max := range []int{10, 100, 400} {
		f := newRobotsFetchers(max)
		for i := range 3 * max {
			ua := fmt.Sprintf("%s/1.0", unitAgentName(i))
			f.note("example.com", ua, unitT0.Add(time.Duration(i)*time.Second))
			if n := f.unitLen(); n > max {
				t.Fatalf("max %d: %d entries after %d agents, want at most %d", max, n, i+1, max)
			}
			if !f.fetchedWithin("example.com", unitAgentName(i), unitT0.Add(time.Duration(i)*time.Second), time.Minute) {
				t.Fatalf("max %d: agent %d forgotten as soon as noted", max, i)
			}
		}
	}
}

// TestRobotsFetchersBoundManyTokens fills the tracker with one header that
// names more agents than it holds.
func TestRobotsFetchersBoundManyTokens(t *testing.T) {
	f := newRobotsFetchers(10)
	ua := ""
	for i := range enforce.MaxCandidates {
		ua += unitAgentName(i) + "/1.0 "
	}
	for host := range 3 {
		f.note(fmt.Sprintf("h%d.example", host), ua, unitT0)
		if n := f.unitLen(); n > 10 {
			t.Fatalf("%d entries after a header of %d agents, want at most 10", n, enforce.MaxCandidates)
		}
	}
}

// TestRobotsFetchersSmallBound checks the bound when it is under ten, where
// a tenth of it rounds to nothing.
func TestRobotsFetchersSmallBound(t *testing.T) {
	f := newRobotsFetchers(5)
	for i := range 50 {
		f.note("example.com", unitAgentName(i)+"/1.0", unitT0)
		if n := f.unitLen(); n > 5 {
			t.Fatalf("%d entries after %d agents, want at most 5", n, i+1)
		}
	}
}

// TestRobotsFetchersEvictsStaleFirst fills the tracker with stale and fresh
// entries: when it is full, the entries older than a day go, and every fresh
// one stays.
func TestRobotsFetchersEvictsStaleFirst(t *testing.T) {
	const max = 100
	f := newRobotsFetchers(max)
	for i := range 60 {
		f.note("example.com", unitAgentName(i)+"/1.0", unitT0)
	}
	now := unitT0.Add(enforce.GraceWindow + time.Hour)
	for i := 60; i < max; i++ {
		f.note("example.com", unitAgentName(i)+"/1.0", now)
	}
	if n := f.unitLen(); n != max {
		t.Fatalf("%d entries, want %d (full)", n, max)
	}
	f.note("example.com", "Newcomer/1.0", now)
	if n, want := f.unitLen(), max-60+1; n != want {
		t.Errorf("%d entries after the stale were dropped, want %d", n, want)
	}
	for i := 60; i < max; i++ {
		if !f.fetchedWithin("example.com", unitAgentName(i), now, time.Minute) {
			t.Errorf("fresh agent %s dropped while stale ones were there", unitAgentName(i))
		}
	}
	if !f.fetchedWithin("example.com", "newcomer", now, time.Minute) {
		t.Error("newcomer not recorded")
	}
}

func TestRobotsFetchersConcurrent(t *testing.T) {
	f := newRobotsFetchers(50)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				now := unitT0.Add(time.Duration(i) * time.Minute)
				name := unitAgentName(g*1000 + i)
				f.note("example.com", name+"/1.0", now)
				f.fetchedWithin("example.com", name, now, time.Hour)
			}
		})
	}
	wg.Wait()
	if n := f.unitLen(); n > 50 {
		t.Errorf("%d entries, want at most 50", n)
	}
}

// unitAgentName returns a distinct product token for each i: letters only,
// since a digit would end the token, and not one or two letters long,
// which would make it generic.
func unitAgentName(i int) string {
	b := []byte("Bot")
	for {
		b = append(b, byte('a'+i%26))
		i /= 26
		if i == 0 {
			return string(b)
		}
	}
}
