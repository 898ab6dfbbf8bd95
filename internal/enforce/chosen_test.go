package enforce

import (
	"fmt"
	"runtime"
	"testing"
	"weak"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// chosenRobots are robots.txt files whose groups a header's cached choice
// must follow: the same tokens in other groups, in another order, merged.
var chosenRobots = []string{
	"User-agent: GPTBot\nDisallow: /a\n\nUser-agent: Googlebot\nDisallow: /b\n",
	"User-agent: Googlebot\nDisallow: /b\n\nUser-agent: GPTBot\nUser-agent: Bingbot\nDisallow: /c\n",
	"User-agent: *\nDisallow: /\n",
	"User-agent: Mozilla\nDisallow: /m\n\nUser-agent: bingbot\nDisallow: /d\n",
	"User-agent: gptbot\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /e\n",
}

// TestChooseForAgreesWithChoose checks that a header's cached choice of
// groups is the choice made anew, whichever robots.txt the header goes
// to next, the same one again or another, and that a forged token is
// dropped whether or not a choice is cached.
func TestChooseForAgreesWithChoose(t *testing.T) {
	var snaps []*robotstxt.Snapshot
	for i, body := range chosenRobots {
		src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{Body: body})
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, src.Snapshot(t.Context(), fmt.Sprintf("site%d.example", i)))
	}
	headers := append([]string{"", "GPTBot", "Googlebot-Image/1.0 Googlebot/2.1", "Mozilla/5.0 (compatible; bingbot/2.0)"}, benchUserAgents...)
	d := NewDecider(Policy{}, nil)
	for round := range 3 {
		for i, snap := range snaps {
			for _, ua := range headers {
				for _, forged := range []string{"", "GPTBot"} {
					h := d.readHeader(ua)
					got := d.chooseFor(snap, h, forged)
					want := robotstxt.ChooseGroups(snap.Robots, &h.tokens)
					if forged != "" {
						want.Drop(forged)
					}
					if got != want {
						t.Errorf("round %d, robots %d, %q forged %q: chose %+v, want %+v", round, i, ua, forged, got, want)
					}
				}
			}
			// Go to the snapshots in another order each round.
			if round == 1 {
				snaps[i], snaps[len(snaps)-1-i] = snaps[len(snaps)-1-i], snaps[i]
			}
		}
	}
}

// TestChosenGroupsHoldNoRobots checks that a header's cached choice does
// not keep the robots.txt it was made in once nothing else holds it: the
// header cache outlives versions and hosts, and would otherwise keep one
// robots.txt per header.
func TestChosenGroupsHoldNoRobots(t *testing.T) {
	d := NewDecider(Policy{}, nil)
	gone := func() weak.Pointer[rules.Robots] {
		src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{Body: chosenRobots[0]})
		if err != nil {
			t.Fatal(err)
		}
		snap := src.Snapshot(t.Context(), "example.com")
		if m := d.chooseFor(snap, d.readHeader(testua.GPTBot), ""); !m.Named() {
			t.Fatal("GPTBot's group not chosen")
		}
		if c := d.readHeader(testua.GPTBot).chosen.Load(); c == nil {
			t.Fatal("no choice kept with the header")
		}
		return weak.Make(snap.Robots)
	}()
	for range 3 {
		runtime.GC()
	}
	if gone.Value() != nil {
		t.Error("the robots.txt is still held after its snapshot was dropped: the header's cached choice keeps it")
	}
	runtime.KeepAlive(d)
}
