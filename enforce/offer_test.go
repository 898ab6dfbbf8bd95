package enforce

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

const (
	offerV1 = "User-agent: *\nDisallow: /private/\n"
	offerV2 = "User-agent: *\nDisallow: /drafts/\n"
)

// TestStoreOffer checks which answers a Store takes from a client's
// request, and what it makes of them.
func TestStoreOffer(t *testing.T) {
	for _, tt := range []struct {
		name  string
		offer Response
		take  bool
	}{
		{"a changed file", reply(http.StatusOK, offerV2).resp, true},
		{"the same file", reply(http.StatusOK, offerV1).resp, true},
		{"a file past the size limit", Response{StatusCode: http.StatusOK, Body: []byte(offerV2), Truncated: true}, true},
		{"a firewall's 403", reply(http.StatusForbidden, "").resp, false},
		{"404", reply(http.StatusNotFound, "").resp, false},
		{"500", reply(http.StatusInternalServerError, "").resp, false},
		{"429", reply(http.StatusTooManyRequests, "").resp, false},
		{"a redirect", reply(http.StatusMovedPermanently, "", "Location", "/robots-v2.txt").resp, false},
		{"a 206", reply(http.StatusPartialContent, offerV2).resp, false},
		{"a challenge page served with 200", reply(http.StatusOK, "<!DOCTYPE html><html><body>checking your browser</body></html>",
			"Content-Type", "text/html").resp, false},
		{"a binary body", reply(http.StatusOK, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03").resp, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := newManualClock()
			f := newScriptFetcher(serve(http.StatusOK, offerV1))
			s := newTestStore(t, f, clock, nil)
			first := s.Snapshot(t.Context(), "a.example")
			settle(t, s, "a.example")
			clock.Advance(time.Hour)

			if got := s.Offer("A.example", tt.offer); got != tt.take {
				t.Fatalf("Offer = %v, want %v", got, tt.take)
			}
			snap := s.Snapshot(t.Context(), "a.example")
			if !tt.take {
				if snap != first {
					t.Errorf("snapshot after a refused offer = %+v, want the one in force", snap)
				}
				return
			}
			if snap.CheckedAt != clock.Now() || snap.Source != first.Source {
				t.Errorf("snapshot checked at %v from %q, want %v from %q", snap.CheckedAt, snap.Source, clock.Now(), first.Source)
			}
			changed := string(tt.offer.Body) != offerV1
			if got := snap.Robots.Allowed("bot", "/private/x"); got != changed {
				t.Errorf("/private/x allowed = %v after the offer, want %v", got, changed)
			}
			if got := snap.Previous != nil; got != changed {
				t.Errorf("previous copy kept = %v, want %v (for its grace period)", got, changed)
			}
			if got := f.calls.Load(); got != 1 {
				t.Errorf("%d fetches, want 1: an offer is not a fetch", got)
			}
		})
	}
}

// TestStoreOfferNotOfferable checks the states in which a Store takes no
// offer: a host never fetched, a fetch in flight, a closed store.
func TestStoreOfferNotOfferable(t *testing.T) {
	offer := reply(http.StatusOK, offerV2).resp

	s := newTestStore(t, newScriptFetcher(serve(http.StatusOK, offerV1)), newManualClock(), nil)
	if s.Offerable("a.example") || s.Offer("a.example", offer) {
		t.Error("a host never fetched: offer taken, want refused")
	}
	if _, ok := s.hosts.Load("a.example"); ok {
		t.Error("an offer added a host, want only requests to add them")
	}

	release := make(chan struct{})
	f := newScriptFetcher(serve(http.StatusOK, offerV1))
	clock := newManualClock()
	s = newTestStore(t, f, clock, nil)
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	f.set(func(ctx context.Context, url string) (Response, error) {
		<-release
		return reply(http.StatusOK, offerV1).resp, nil
	})
	clock.Advance(25 * time.Hour) // due for refresh: the next request starts one
	s.Snapshot(t.Context(), "a.example")
	if s.Offerable("a.example") || s.Offer("a.example", offer) {
		t.Error("a fetch in flight: offer taken, want refused")
	}
	close(release)
	settle(t, s, "a.example")
	if s.Offerable("a.example") || s.Offer("a.example", offer) {
		t.Error("fetch ended a moment ago: offer taken, want refused for OfferInterval")
	}
	clock.Advance(OfferInterval)
	if !s.Offerable("a.example") {
		t.Errorf("fetch ended %v ago: not offerable, want offerable", OfferInterval)
	}
	if !s.Offer("a.example", offer) {
		t.Error("offer refused, want taken")
	}
	clock.Advance(OfferInterval / 2)
	if s.Offer("a.example", offer) {
		t.Errorf("a second offer %v after the first taken, want refused", OfferInterval/2)
	}

	s.Close()
	if s.Offerable("a.example") || s.Offer("a.example", offer) {
		t.Error("a closed store: offer taken, want refused")
	}
}

// TestStoreOnChange follows one host through fetches and an offer: OnChange
// hears of the first snapshot, of each new file, of a new failure and of
// its end, and of nothing that only confirms what is in force.
func TestStoreOnChange(t *testing.T) {
	type change struct {
		host, old, new string // "" for no snapshot; else access and file
	}
	describe := func(s *Snapshot) string {
		if s == nil {
			return ""
		}
		d := s.Access.String()
		if s.Robots != nil {
			d += " " + s.Hash[:4]
		}
		if s.Err != "" {
			d += " failing"
		}
		return d
	}
	var mu sync.Mutex
	var heard []change
	clock := newManualClock()
	f := newScriptFetcher(serve(http.StatusOK, offerV1))
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.OnChange = func(host string, old, new *Snapshot) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, change{host, describe(old), describe(new)})
		}
	})
	step := func(answer func(context.Context, string) (Response, error)) {
		t.Helper()
		f.set(answer)
		clock.Advance(25 * time.Hour) // past any refresh or backoff
		s.Snapshot(t.Context(), "a.example")
		settle(t, s, "a.example")
	}
	s.Snapshot(t.Context(), "a.example")
	settle(t, s, "a.example")
	v1 := describe(s.Snapshot(t.Context(), "a.example"))
	step(serve(http.StatusOK, offerV1)) // the same file: no news
	step(serve(http.StatusOK, offerV2))
	v2 := describe(s.Snapshot(t.Context(), "a.example"))
	step(serve(http.StatusServiceUnavailable, "")) // kept, but failing
	step(serve(http.StatusServiceUnavailable, "")) // the same failure: no news
	step(serve(http.StatusOK, offerV2))            // reachable again
	// Two offers of one file: the second is no news.
	for range 2 {
		clock.Advance(OfferInterval)
		if !s.Offer("a.example", reply(http.StatusOK, offerV1).resp) {
			t.Fatal("offer refused")
		}
	}

	want := []change{
		{"a.example", "", v1},
		{"a.example", v1, v2},
		{"a.example", v2, v2 + " failing"},
		{"a.example", v2 + " failing", v2},
		{"a.example", v2, v1},
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(heard) != fmt.Sprint(want) {
		t.Errorf("OnChange heard\n%v\nwant\n%v", heard, want)
	}
}
