package verify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// testLists are two lists on a local server: "gptbot" proves only GPTBot,
// "googlebot" proves Googlebot and GoogleOther.
func testLists(base string) []PublishedList {
	return []PublishedList{
		{Name: "gptbot", URL: base + "/gptbot.json", Tokens: []string{"GPTBot"}},
		{Name: "googlebot", URL: base + "/googlebot.json", Tokens: []string{"Googlebot", "GoogleOther"}},
	}
}

func TestRangesVerify(t *testing.T) {
	srv := newListServer(t, map[string]string{
		"/gptbot.json":    rangeJSON("20.171.206.0/24", "2001:db8:1::/48"),
		"/googlebot.json": rangeJSON("66.249.64.0/19"),
	})
	v := newTestVerifier(t, Config{lists: testLists(srv.URL), NoBuiltinReverseDNS: true, Now: newClock().Now})
	waitFor(t, v, "GPTBot", "20.171.206.1")
	waitFor(t, v, "Googlebot", "66.249.64.1")
	tests := []struct {
		token, addr string
		want        Result
	}{
		{"GPTBot", "20.171.206.9", Result{Outcome: Verified, Method: IPRanges}},
		{"gptbot", "20.171.206.9", Result{Outcome: Verified, Method: IPRanges}},        // tokens ignore case
		{"GPTBOT", "::ffff:20.171.206.9", Result{Outcome: Verified, Method: IPRanges}}, // mapped IPv4
		{"GPTBot", "2001:db8:1:2::5", Result{Outcome: Verified, Method: IPRanges}},     // IPv6
		{"GPTBot", "20.171.207.9", Result{Outcome: Forged, Method: IPRanges}},          // outside
		{"GPTBot", "66.249.64.1", Result{Outcome: Forged, Method: IPRanges}},           // Google's address proves no GPTBot
		{"Googlebot", "20.171.206.9", Result{Outcome: Forged, Method: IPRanges}},       // and the reverse
		{"GoogleOther", "66.249.70.1", Result{Outcome: Verified, Method: IPRanges}},    // a list proves several tokens
		{"ChatGPT-User", "20.171.206.9", Result{Outcome: Unverified}},                  // no method known
		{"", "20.171.206.9", Result{Outcome: Unverified}},                              // no token
		{strings.Repeat("x", 80), "20.171.206.9", Result{Outcome: Unverified}},         // overlong token
	}
	for _, tt := range tests {
		if got := v.Verify(tt.token, netip.MustParseAddr(tt.addr), nil); got != tt.want {
			t.Errorf("Verify(%q, %s) = %+v, want %+v", tt.token, tt.addr, got, tt.want)
		}
	}
	if !v.HasMethod("gptBOT") || v.HasMethod("ChatGPT-User") {
		t.Errorf("HasMethod: gptBOT %v, ChatGPT-User %v; want true, false", v.HasMethod("gptBOT"), v.HasMethod("ChatGPT-User"))
	}
}

// A token whose lists never loaded is Unconfirmed, neither Forged nor
// Pending: no answer is known to be on its way.
func TestRangesUnconfirmedUntilLoaded(t *testing.T) {
	srv := newListServer(t, map[string]string{"/googlebot.json": rangeJSON("66.249.64.0/19")})
	srv.set("/gptbot.json", "", 503) // GPTBot's list cannot be fetched
	v := newTestVerifier(t, Config{lists: testLists(srv.URL), NoBuiltinReverseDNS: true, Now: newClock().Now})
	waitFor(t, v, "Googlebot", "66.249.64.1")
	if got := v.Verify("GPTBot", netip.MustParseAddr("192.0.2.1"), nil); got != (Result{Outcome: Unconfirmed, Method: IPRanges}) {
		t.Errorf("Verify(GPTBot) before its list = %+v, want unconfirmed ip_ranges", got)
	}
}

// The last good copy is stored, and a restart without network uses it.
func TestRangesStoredCopy(t *testing.T) {
	clock := newClock()
	store := newMemStorage()
	srv := newListServer(t, map[string]string{
		"/gptbot.json":    rangeJSON("20.171.206.0/24"),
		"/googlebot.json": rangeJSON("66.249.64.0/19"),
	})
	lists := testLists(srv.URL)
	v1 := newTestVerifier(t, Config{lists: lists, Storage: store, NoBuiltinReverseDNS: true, Now: clock.Now})
	waitFor(t, v1, "GPTBot", "20.171.206.1")
	waitFor(t, v1, "Googlebot", "66.249.64.1")
	v1.Close()

	srv.set("/gptbot.json", "", 500)
	srv.set("/googlebot.json", "", 500)
	clock.Advance(time.Hour)
	var errs errList
	v2, err := New(Config{lists: lists, Storage: store, NoBuiltinReverseDNS: true, Now: clock.Now, Resolver: &fakeResolver{}, OnError: errs.add})
	if err != nil {
		t.Fatal(err)
	}
	v2.Start() // loads the stored copy before returning
	defer v2.Close()
	if got := v2.Verify("GPTBot", netip.MustParseAddr("20.171.206.1"), nil); got != (Result{Outcome: Verified, Method: IPRanges}) {
		t.Errorf("after restart offline: Verify(GPTBot) = %+v, want verified from the stored copy", got)
	}
	ages := v2.ListAges(clock.Now())
	if ages["gptbot"] != time.Hour || ages["googlebot"] != time.Hour {
		t.Errorf("ListAges = %v, want both 1h", ages)
	}
}

// A stored copy older than maxStoredAge is not used.
func TestRangesStaleStoredCopy(t *testing.T) {
	clock := newClock()
	store := newMemStorage()
	srv := newListServer(t, map[string]string{})
	srv.set("/gptbot.json", "", 500)
	lists := testLists(srv.URL)[:1]
	raw, _ := json.Marshal(storedList{Source: lists[0].URL, Fetched: clock.Now().Add(-maxStoredAge - time.Hour).Unix(),
		Body: json.RawMessage(rangeJSON("20.171.206.0/24"))})
	store.Store(context.Background(), storagePrefix+"gptbot", raw)
	v := newTestVerifier(t, Config{lists: lists, Storage: store, Now: clock.Now})
	if got := v.Verify("GPTBot", netip.MustParseAddr("20.171.206.1"), nil); got.Outcome != Unconfirmed {
		t.Errorf("with a stored copy older than %v: Verify = %+v, want unconfirmed", maxStoredAge, got)
	}
}

// A corrupt stored copy is ignored and reported.
func TestRangesCorruptStoredCopy(t *testing.T) {
	for _, body := range []string{`{not json`, `{"source":"SRC","fetched":1,"body":{"prefixes":[]}}`} {
		store := newMemStorage()
		srv := newListServer(t, map[string]string{})
		srv.set("/gptbot.json", "", 500)
		lists := testLists(srv.URL)[:1]
		clock := newClock()
		raw := strings.ReplaceAll(body, "SRC", lists[0].URL)
		raw = strings.Replace(raw, `"fetched":1`, `"fetched":`+jsonInt(clock.Now().Unix()), 1)
		store.Store(context.Background(), storagePrefix+"gptbot", []byte(raw))
		var errs errList
		v := newTestVerifier(t, Config{lists: lists, Storage: store, Now: clock.Now, OnError: errs.add})
		if got := v.Verify("GPTBot", netip.MustParseAddr("20.171.206.1"), nil); got.Outcome != Unconfirmed {
			t.Errorf("stored %q: Verify = %+v, want unconfirmed", body, got)
		}
		if !errs.has("stored copy is corrupt") {
			t.Errorf("stored %q: errors %v, want a corrupt stored copy reported", body, errs.all())
		}
	}
}

// Operators' lists replace the built-in list of a token, from a file or a
// URL; the built-in list still proves the tokens not overridden.
func TestRangesOverride(t *testing.T) {
	srv := newListServer(t, map[string]string{
		"/googlebot.json": rangeJSON("66.249.64.0/19"),
		"/mine.json":      rangeJSON("198.51.100.0/24"),
	})
	file := writeFile(t, "bots.json", rangeJSON("203.0.113.0/24"))
	v := newTestVerifier(t, Config{
		lists:               testLists(srv.URL),
		RangeOverrides:      []RangeOverride{{Token: "googlebot", Source: file}, {Token: "MyBot", Source: srv.URL + "/mine.json"}},
		NoBuiltinReverseDNS: true, Now: newClock().Now,
	})
	waitFor(t, v, "MyBot", "198.51.100.1")
	waitFor(t, v, "GoogleOther", "66.249.64.1")
	tests := []struct {
		token, addr string
		want        Outcome
	}{
		{"Googlebot", "203.0.113.5", Verified}, // the file, read at Start
		{"Googlebot", "66.249.64.1", Forged},   // the built-in list no longer proves it
		{"GoogleOther", "66.249.64.1", Verified},
		{"GoogleOther", "203.0.113.5", Forged},
		{"mybot", "198.51.100.7", Verified},
	}
	for _, tt := range tests {
		if got := v.Verify(tt.token, netip.MustParseAddr(tt.addr), nil); got.Outcome != tt.want {
			t.Errorf("Verify(%s, %s) = %+v, want %v", tt.token, tt.addr, got, tt.want)
		}
	}
	var names []string
	v.EachListAge(time.Now(), func(name string, _ time.Duration) { names = append(names, name) })
	if strings.Join(names, ",") != "googlebot,custom,custom" { // gptbot.json is 404: never loaded
		t.Errorf("EachListAge names = %v", names)
	}
}

func TestConfigValidation(t *testing.T) {
	bad := []Config{
		{RangeOverrides: []RangeOverride{{Token: "bad token", Source: "x.json"}}},
		{RangeOverrides: []RangeOverride{{Token: "Bot", Source: ""}}},
		{RangeOverrides: []RangeOverride{{Token: "Bot", Source: "https://"}}},
		{ReverseDNS: map[string][]string{"Bot": {"bad..domain"}}},
		{SignatureAgents: map[string][]string{"http://agent.example": {"Bot"}}},
		{SignatureAgents: map[string][]string{"https://agent.example/path": {"Bot"}}},
		{DNSCacheSize: -1},
		{DNSPositiveTTL: time.Second},
		{DNSNegativeTTL: 48 * time.Hour},
		{DNSConcurrency: 5000},
	}
	for _, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) = nil error, want one", c)
		}
	}
}

func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Minute, 2: 2 * time.Minute, 5: 16 * time.Minute, 40: maxBackoff} {
		if got := backoff(n); got != want {
			t.Errorf("backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

type errList struct {
	mu   sync.Mutex
	errs []error
}

func (l *errList) add(err error) { l.mu.Lock(); l.errs = append(l.errs, err); l.mu.Unlock() }

func (l *errList) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

func (l *errList) has(s string) bool {
	for _, e := range l.all() {
		if strings.Contains(e.Error(), s) {
			return true
		}
	}
	return false
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

type failTransport struct{ t *testing.T }

func (f failTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("network used before Start: %s", r.URL)
	return nil, errors.New("no network")
}

// New validates and builds; nothing is fetched or resolved before Start.
func TestNewDoesNoIO(t *testing.T) {
	res := &fakeResolver{}
	v, err := New(Config{WebBotAuth: true, Resolver: res, HTTPClient: &http.Client{Transport: failTransport{t}},
		Storage: newMemStorage()})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, tok := range []string{"Googlebot", "GPTBot", "bingbot", "Applebot", "CCBot", "ChatGPT-User", "YandexBot"} {
		if !v.HasMethod(tok) {
			t.Errorf("HasMethod(%s) = false with the built-in tables", tok)
		}
	}
	if got := v.Verify("GPTBot", netip.MustParseAddr("192.0.2.1"), nil); got != (Result{Outcome: Unconfirmed, Method: IPRanges}) {
		t.Errorf("Verify(GPTBot) before Start = %+v, want unconfirmed ip_ranges", got)
	}
	if got := v.Verify("Googlebot", netip.MustParseAddr("192.0.2.1"), nil); got != (Result{Outcome: Pending, Method: ReverseDNS}) {
		t.Errorf("Verify(Googlebot) before Start = %+v, want pending reverse_dns", got)
	}
	if res.ptrQ.Load() != 0 {
		t.Error("DNS used before Start")
	}
}
