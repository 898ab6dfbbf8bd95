package verify

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var errTest = errors.New("servfail")

// A claim is Pending only while the first lookup of its address runs, for
// at most PendingBound; a resolver that never answers leaves it
// Unconfirmed from then on, through the lookup's timeout, the failure, and
// every retry: a forger whose reverse zone never answers is never judged
// as the crawler it claims past the bound.
func TestPendingBound(t *testing.T) {
	clock := newClock()
	res := &fakeResolver{gate: make(chan struct{})} // never answers
	v := newTestVerifier(t, Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true, Resolver: res, Now: clock.Now,
		ReverseDNS: map[string][]string{"Googlebot": {"googlebot.com"}}})
	addr := netip.MustParseAddr("203.0.113.5")
	claim := func() Outcome { return v.Verify("Googlebot", addr, nil).Outcome }
	if got := claim(); got != Pending {
		t.Fatalf("first claim = %v, want pending: its answer is on its way", got)
	}
	clock.Advance(DefaultPendingBound - time.Millisecond)
	if got := claim(); got != Pending {
		t.Errorf("within the bound = %v, want pending", got)
	}
	clock.Advance(2 * time.Millisecond)
	if got := claim(); got != Unconfirmed {
		t.Errorf("past the bound = %v, want unconfirmed", got)
	}
	// Another address's first claim is pending again.
	if got := v.Verify("Googlebot", netip.MustParseAddr("203.0.113.6"), nil).Outcome; got != Pending {
		t.Errorf("another address's first claim = %v, want pending", got)
	}

	// A lookup that fails (as one that times out does, after
	// lookupTimeout) leaves the claim unconfirmed, and so does every retry.
	failing := &fakeResolver{ptrErr: errTest}
	v = newTestVerifier(t, Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true, Resolver: failing, Now: clock.Now,
		ReverseDNS: map[string][]string{"Googlebot": {"googlebot.com"}}})
	claim = func() Outcome { return v.Verify("Googlebot", addr, nil).Outcome }
	claim()
	waitUntil(t, func() bool { e := v.dns.get(addr); return e != nil && e.state == dnsFailed })
	if got := claim(); got != Unconfirmed {
		t.Errorf("after the lookup failed = %v, want unconfirmed", got)
	}
	clock.Advance(errorTTL + time.Second)
	if got := claim(); got != Unconfirmed {
		t.Errorf("while retrying = %v, want unconfirmed", got)
	}
	waitUntil(t, func() bool { return failing.ptrQ.Load() == 2 })
}

// Verified by any method wins; forged only when every method that applies
// says so.
func TestMethodPrecedence(t *testing.T) {
	clock := newClock()
	list := writeFile(t, "bot.json", rangeJSON("192.0.2.0/24"))
	res := &fakeResolver{ptr: map[string][]string{
		"198.51.100.1": {"crawl-1.bot.example"},
		"203.0.113.1":  {"host.elsewhere.example"},
	}, fwd: map[string][]string{"crawl-1.bot.example": {"198.51.100.1"}, "host.elsewhere.example": {"203.0.113.1"}}}
	v := newTestVerifier(t, Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true, Resolver: res, Now: clock.Now,
		RangeOverrides: []RangeOverride{{Token: "ExampleBot", Source: list}},
		ReverseDNS:     map[string][]string{"ExampleBot": {"bot.example"}}})
	for _, addr := range []string{"198.51.100.1", "203.0.113.1"} {
		waitFor(t, v, "ExampleBot", addr)
	}
	tests := []struct {
		addr string
		want Result
	}{
		{"192.0.2.7", Result{Outcome: Verified, Method: IPRanges}},      // in the list, no PTR: the list proves it
		{"198.51.100.1", Result{Outcome: Verified, Method: ReverseDNS}}, // not in the list, but its name is the crawler's
		{"203.0.113.1", Result{Outcome: Forged, Method: ReverseDNS}},    // neither: every method says no, the last named
	}
	for _, tt := range tests {
		if got := v.Verify("ExampleBot", netip.MustParseAddr(tt.addr), nil); got != tt.want {
			t.Errorf("Verify(ExampleBot, %s) = %+v, want %+v", tt.addr, got, tt.want)
		}
	}
}

// Local range list files are read by New, so that the first claim after a
// start is judged by them; a missing or malformed one is an error naming
// the file and, for a malformed one, the line.
func TestListFilesAtNew(t *testing.T) {
	good := writeFile(t, "good.json", rangeJSON("192.0.2.0/24"))
	v, err := New(Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true, Resolver: &fakeResolver{},
		RangeOverrides: []RangeOverride{{Token: "ExampleBot", Source: good}}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// No Start: nothing but New has run.
	for addr, want := range map[string]Outcome{"192.0.2.1": Verified, "203.0.113.1": Forged} {
		if got := v.Verify("ExampleBot", netip.MustParseAddr(addr), nil).Outcome; got != want {
			t.Errorf("before Start, Verify(ExampleBot, %s) = %v, want %v", addr, got, want)
		}
	}

	bad := []struct{ name, body, want string }{
		{"missing.json", "", "missing.json"},
		{"syntax.json", "{\n  \"prefixes\": [\n    {\"ipv4Prefix\": \"192.0.2.0/24\"},,\n  ]\n}\n", "syntax.json:3:"},
		{"entry.json", "{\n  \"prefixes\": [\n    {\"ipv4Prefix\": \"192.0.2.0/24\"},\n    {\"ipv4Prefix\": \"0.0.0.0/0\"}\n  ]\n}\n", "entry.json:4:"},
		{"type.json", "{\n  \"prefixes\":\n    \"none\"\n}\n", "type.json:3:"},
	}
	for _, b := range bad {
		path := t.TempDir() + "/" + b.name
		if b.body != "" {
			path = writeFile(t, b.name, b.body)
		}
		_, err := New(Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true, Resolver: &fakeResolver{},
			RangeOverrides: []RangeOverride{{Token: "ExampleBot", Source: path}}})
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("New with %s: error %v, want one naming %q", b.name, err, b.want)
		}
	}
}
