package verify

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func googleResolver() *fakeResolver {
	return &fakeResolver{
		ptr: map[string][]string{
			"66.249.66.1":       {"crawl-66-249-66-1.googlebot.com."},                // genuine, trailing dot
			"66.249.66.2":       {"CRAWL-66-249-66-2.GoogleBot.COM"},                 // case
			"203.0.113.1":       {"evilgooglebot.com."},                              // not on a label boundary
			"203.0.113.2":       {"crawl-1.googlebot.com.attacker.example."},         // suffix elsewhere
			"203.0.113.3":       {"crawl-66-249-66-1.googlebot.com."},                // PTR claims a name that resolves elsewhere
			"203.0.113.4":       {"vm-1.bc.googleusercontent.com."},                  // Google Cloud customer
			"203.0.113.5":       {"rate-limited-proxy-1.google.com."},                // google.com also proves Googlebot
			"2001:4860:4801::1": {"crawl-2001-4860-4801--1.googlebot.com."},          // IPv6
			"157.55.39.1":       {"msnbot-157-55-39-1.search.msn.com."},              // bingbot
			"198.51.100.9":      {"x.example.", "crawl-198-51-100-9.googlebot.com."}, // second name confirms
		},
		fwd: map[string][]string{
			"crawl-66-249-66-1.googlebot.com":        {"66.249.66.1"},
			"crawl-66-249-66-2.googlebot.com":        {"66.249.66.2"},
			"evilgooglebot.com":                      {"203.0.113.1"},
			"crawl-1.googlebot.com.attacker.example": {"203.0.113.2"},
			"vm-1.bc.googleusercontent.com":          {"203.0.113.4"},
			"rate-limited-proxy-1.google.com":        {"203.0.113.5"},
			"crawl-2001-4860-4801--1.googlebot.com":  {"2001:4860:4801::1"},
			"msnbot-157-55-39-1.search.msn.com":      {"157.55.39.1"},
			"crawl-198-51-100-9.googlebot.com":       {"198.51.100.9"},
		},
	}
}

// Forward-confirmed reverse DNS, as Google's and Microsoft's verification
// pages describe it.
func TestReverseDNS(t *testing.T) {
	res := googleResolver()
	v := newTestVerifier(t, Config{Resolver: res, Now: newClock().Now})
	tests := []struct {
		token, addr string
		want        Outcome
	}{
		{"Googlebot", "66.249.66.1", Verified},
		{"googlebot", "66.249.66.2", Verified},
		{"Googlebot", "203.0.113.1", Forged},
		{"Googlebot", "203.0.113.2", Forged},
		{"Googlebot", "203.0.113.3", Forged},
		{"Googlebot", "203.0.113.4", Forged},
		{"Googlebot", "203.0.113.5", Verified},
		{"AdsBot-Google", "66.249.66.1", Forged}, // googlebot.com does not prove AdsBot
		{"Googlebot", "2001:4860:4801::1", Verified},
		{"Googlebot", "192.0.2.99", Forged}, // no PTR at all
		{"bingbot", "157.55.39.1", Verified},
		{"bingbot", "66.249.66.1", Forged},
		{"Googlebot", "198.51.100.9", Verified},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if got := v.Verify(tt.token, netip.MustParseAddr(tt.addr), nil); !seen[tt.addr] && got != (Result{Outcome: Pending, Method: ReverseDNS}) {
			t.Errorf("first Verify(%s, %s) = %+v, want pending reverse_dns", tt.token, tt.addr, got)
		}
		seen[tt.addr] = true
		if got := waitFor(t, v, tt.token, tt.addr); got != (Result{Outcome: tt.want, Method: ReverseDNS}) {
			t.Errorf("Verify(%s, %s) = %+v, want %v reverse_dns", tt.token, tt.addr, got, tt.want)
		}
	}
	// Names that cannot prove anything (evilgooglebot.com, *.attacker.example,
	// googleusercontent.com, x.example) are not looked up forward.
	if n := res.fwdQ.Load(); n != 7 {
		t.Errorf("forward queries = %d, want 7", n)
	}
}

// A configured suffix list replaces the built-in one for its token.
func TestReverseDNSOverride(t *testing.T) {
	res := googleResolver()
	v := newTestVerifier(t, Config{Resolver: res, Now: newClock().Now,
		ReverseDNS: map[string][]string{"Googlebot": {".googleusercontent.com."}, "MyBot": {"search.msn.com"}}})
	for _, tt := range []struct {
		token, addr string
		want        Outcome
	}{
		{"Googlebot", "203.0.113.4", Verified},
		{"Googlebot", "66.249.66.1", Forged},
		{"GoogleOther", "66.249.66.1", Verified}, // still built-in
		{"mybot", "157.55.39.1", Verified},
	} {
		if got := waitFor(t, v, tt.token, tt.addr); got.Outcome != tt.want {
			t.Errorf("Verify(%s, %s) = %+v, want %v", tt.token, tt.addr, got, tt.want)
		}
	}
}

// Answers are cached for their TTL, then looked up again while the stale
// answer is served; failures leave the claim Pending.
func TestReverseDNSCache(t *testing.T) {
	clock := newClock()
	res := googleResolver()
	v := newTestVerifier(t, Config{Resolver: res, Now: clock.Now})
	addr := "66.249.66.1"
	waitFor(t, v, "Googlebot", addr)
	for range 10 {
		v.Verify("Googlebot", netip.MustParseAddr(addr), nil)
	}
	if n := res.ptrQ.Load(); n != 1 {
		t.Fatalf("PTR queries after 11 claims = %d, want 1", n)
	}
	clock.Advance(DefaultPositiveTTL + time.Second)
	if got := v.Verify("Googlebot", netip.MustParseAddr(addr), nil); got.Outcome != Verified {
		t.Errorf("stale answer: Verify = %+v, want verified while refreshing", got)
	}
	waitQueries(t, res, 2)

	// A failed lookup is no verdict, and no answer is on its way:
	// Unconfirmed until errorTTL has passed.
	res.mu.Lock()
	res.ptrErr = errors.New("servfail")
	res.mu.Unlock()
	failed := netip.MustParseAddr("192.0.2.50")
	v.Verify("Googlebot", failed, nil)
	waitQueries(t, res, 3)
	waitUntil(t, func() bool { e := v.dns.get(failed); return e != nil && e.state == dnsFailed })
	if got := v.Verify("Googlebot", failed, nil); got != (Result{Outcome: Unconfirmed, Method: ReverseDNS}) {
		t.Errorf("after a failed lookup: Verify = %+v, want unconfirmed", got)
	}
	if n := res.ptrQ.Load(); n != 3 {
		t.Errorf("PTR queries = %d, want no retry before errorTTL", n)
	}
	clock.Advance(errorTTL + time.Second)
	v.Verify("Googlebot", failed, nil)
	waitQueries(t, res, 4)
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

func waitQueries(t *testing.T, res *fakeResolver, n int64) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for res.ptrQ.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("PTR queries = %d, want %d", res.ptrQ.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A resolver's panic is recovered and reported; the claim stays Pending.
func TestReverseDNSPanic(t *testing.T) {
	var errs errList
	res := &fakeResolver{panicky: true}
	v := newTestVerifier(t, Config{Resolver: res, Now: newClock().Now, OnError: errs.add})
	v.Verify("Googlebot", netip.MustParseAddr("66.249.66.1"), nil)
	deadline := time.Now().Add(testTimeout)
	for !errs.has("panic") {
		if time.Now().After(deadline) {
			t.Fatal("panic not reported")
		}
		time.Sleep(time.Millisecond)
	}
	if got := v.Verify("Googlebot", netip.MustParseAddr("66.249.66.1"), nil); got != (Result{Outcome: Unconfirmed, Method: ReverseDNS}) {
		t.Errorf("after a panic: Verify = %+v, want unconfirmed", got)
	}
}

func TestMatchSuffix(t *testing.T) {
	for _, tt := range []struct {
		name, suffix string
		want         bool
	}{
		{"googlebot.com", "googlebot.com", true},
		{"crawl-1.googlebot.com", "googlebot.com", true},
		{"evilgooglebot.com", "googlebot.com", false},
		{"googlebot.com.evil", "googlebot.com", false},
		{"oglebot.com", "googlebot.com", false},
		{".googlebot.com", "googlebot.com", true},
		{"", "googlebot.com", false},
	} {
		if got := matchSuffix(tt.name, tt.suffix); got != tt.want {
			t.Errorf("matchSuffix(%q, %q) = %v, want %v", tt.name, tt.suffix, got, tt.want)
		}
	}
	if _, ok := normalizeSuffix("Google.COM."); !ok || strings.ToLower("Google.COM") != "google.com" {
		t.Error("normalizeSuffix")
	}
}

// TestStartOnUse checks that a verifier built with StartOnUse starts its
// background work with the first claim it is asked about, and not before:
// the reverse DNS answer then comes, where an unstarted verifier would
// never look the address up.
func TestStartOnUse(t *testing.T) {
	res := googleResolver()
	v, err := New(Config{StartOnUse: true, Resolver: res, Now: newClock().Now, lists: []PublishedList{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	time.Sleep(10 * time.Millisecond)
	if n := res.ptrQ.Load(); n != 0 || v.asked.Load() {
		t.Fatalf("before any claim: %d lookups, started %v; want none", n, v.asked.Load())
	}
	if got := v.Verify("Googlebot", netip.MustParseAddr("66.249.66.1"), nil); got.Outcome != Pending {
		t.Fatalf("first Verify = %+v, want pending", got)
	}
	if got := waitFor(t, v, "Googlebot", "66.249.66.1"); got.Outcome != Verified {
		t.Errorf("after the first claim: %+v, want verified", got)
	}
}
