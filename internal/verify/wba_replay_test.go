package verify

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// replayVerifier is a verifier whose agent https://signature-agent.test
// speaks for TestBot (and Googlebot, which has reverse DNS too), with the
// RFC 9421 Ed25519 key pinned: no directory to wait for.
func replayVerifier(t testing.TB, clock *fakeClock, extra Config) *Verifier {
	cfg := extra
	cfg.WebBotAuth = true
	cfg.Now = clock.Now
	cfg.SignatureAgents = map[string][]string{"https://signature-agent.test": {"TestBot", "Googlebot"}}
	cfg.AgentKeys = map[string]string{"https://signature-agent.test": pinnedRFCKeyFile}
	return newTestVerifier(t, cfg)
}

// signedAt returns a request signed with the RFC 9421 key, created at
// created and valid for life, under label, with nonce when not empty.
func signedAt(t testing.TB, label, nonce string, created int64, life time.Duration) *http.Request {
	t.Helper()
	r := rfcTestRequest()
	r.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	params := fmt.Sprintf(`("@authority" "signature-agent";key="a");created=%d;expires=%d;keyid="%s"`,
		created, created+int64(life/time.Second), rfcEd25519Thumbprint)
	if nonce != "" {
		params += `;nonce="` + nonce + `"`
	}
	sign(t, r, label+"="+params+`;tag="web-bot-auth"`)
	return r
}

// relabeled returns a copy of r whose signature's label is label: RFC
// 9421 §7.2.5 lets anyone relabel, the label not being signed.
func relabeled(r *http.Request, label string) *http.Request {
	c := r.Clone(r.Context())
	for _, h := range []string{"Signature", "Signature-Input"} {
		v := c.Header.Get(h)
		c.Header.Set(h, label+v[strings.IndexByte(v, '='):])
	}
	return c
}

// A signature verifies once per client: again from its first client (a
// retry), from the remembered path or after it was forgotten there; from
// another client it is Replayed, however it is labelled, with a nonce or
// without one. An IPv6 client is its /64.
func TestWebBotAuthReplay(t *testing.T) {
	clock := newClock()
	now := clock.Now().Unix()
	v := replayVerifier(t, clock, Config{NoBuiltinReverseDNS: true})
	verified := Result{Outcome: Verified, Method: WebBotAuth}
	replayed := Result{Outcome: Replayed, Method: WebBotAuth}
	forget := func(r *http.Request) { v.wba.cache.slot(r.Header.Get("Signature")).Store(nil) }

	withNonce := signedAt(t, "s", "bm9uY2UtMQ", now-5, 5*time.Minute)
	noNonce := signedAt(t, "s", "", now-5, 5*time.Minute)
	otherNonce := signedAt(t, "s", "bm9uY2UtMg", now-5, 5*time.Minute)
	for _, tt := range []struct {
		name string
		addr string
		r    *http.Request
		pre  func()
		want Result
	}{
		{"nonce: first use", "203.0.113.5", withNonce, nil, verified},
		{"nonce: the same client again (remembered)", "203.0.113.5", withNonce, nil, verified},
		{"nonce: another client (remembered)", "198.51.100.9", withNonce, nil, replayed},
		{"nonce: another client, forgotten by the remembered path", "198.51.100.9", withNonce, func() { forget(withNonce) }, replayed},
		{"nonce: the first client, forgotten by the remembered path", "203.0.113.5", withNonce, func() { forget(withNonce) }, verified},
		{"nonce: relabelled, from another client", "198.51.100.9", relabeled(withNonce, "x"), nil, replayed},
		{"nonce: the first client as an IPv4-mapped address", "::ffff:203.0.113.5", withNonce, nil, verified},
		{"another nonce is another signature", "198.51.100.9", otherNonce, nil, verified},
		{"no nonce: first use", "2001:db8::1", noNonce, nil, verified},
		{"no nonce: the same /64", "2001:db8::2", noNonce, nil, verified},
		{"no nonce: another /64", "2001:db8:0:1::1", noNonce, nil, replayed},
		{"no nonce: relabelled, another /64", "2001:db8:0:1::1", relabeled(noNonce, "y"), nil, replayed},
		{"no nonce: relabelled, the first /64", "2001:db8::3", relabeled(noNonce, "y"), nil, verified},
	} {
		if tt.pre != nil {
			tt.pre()
		}
		if got := v.Verify("TestBot", netip.MustParseAddr(tt.addr), tt.r); got != tt.want {
			t.Errorf("%s: Verify(TestBot, %s) = %+v, want %+v", tt.name, tt.addr, got, tt.want)
		}
	}
	// A replay outranks an answer on its way: Googlebot's reverse DNS is
	// still to answer for the stranger's address.
	fresh := signedAt(t, "s", "bm9uY2UtMw", now-5, 5*time.Minute)
	if got := v.Verify("Googlebot", netip.MustParseAddr("203.0.113.5"), fresh); got != verified {
		t.Errorf("Googlebot's first use: %+v, want verified", got)
	}
	v2 := replayVerifier(t, clock, Config{ReverseDNS: map[string][]string{"Googlebot": {"googlebot.com"}}})
	v2.Verify("Googlebot", netip.MustParseAddr("203.0.113.5"), fresh)
	if got := v2.Verify("Googlebot", netip.MustParseAddr("198.51.100.9"), fresh); got != replayed {
		t.Errorf("a replay while reverse DNS is pending: %+v, want replayed", got)
	}
	if n := testing.AllocsPerRun(100, func() { v.Verify("TestBot", netip.MustParseAddr("198.51.100.9"), withNonce) }); n != 0 {
		t.Errorf("a remembered signature replayed: %v allocations per Verify, want 0", n)
	}
}

// A signature verifies for at most maxSignatureAge after its created,
// whatever its expires, and is remembered that long: its replay can never
// outlive the memory of its first use.
func TestWebBotAuthSignatureAge(t *testing.T) {
	clock := newClock()
	now := clock.Now().Unix()
	v := replayVerifier(t, clock, Config{})
	addr, stranger := netip.MustParseAddr("203.0.113.5"), netip.MustParseAddr("198.51.100.9")
	old := signedAt(t, "s", "b2xk", now-int64((maxSignatureAge+2*maxClockSkew)/time.Second), 48*time.Hour)
	if got := v.Verify("TestBot", addr, old); got != (Result{Outcome: Forged, Method: WebBotAuth}) {
		t.Errorf("created %v ago, expires in a day: %+v, want forged", maxSignatureAge+2*maxClockSkew, got)
	}
	long := signedAt(t, "s", "bG9uZw", now, 48*time.Hour)
	if got := v.Verify("TestBot", addr, long); got.Outcome != Verified {
		t.Fatalf("a new signature of 48 h: %+v, want verified", got)
	}
	// Up to its last valid second, its replay is told; past it, it is no
	// longer valid, and its memory may go.
	clock.Advance(maxSignatureAge + maxClockSkew)
	if got := v.Verify("TestBot", stranger, long); got.Outcome != Replayed {
		t.Errorf("at the end of its validity, from another client: %+v, want replayed", got)
	}
	clock.Advance(time.Second)
	if got := v.Verify("TestBot", stranger, long); got.Outcome != Forged {
		t.Errorf("past its validity, from another client: %+v, want forged", got)
	}
	v.Verify("TestBot", addr, signedAt(t, "s", "bmV4dA", clock.Now().Unix(), time.Minute)) // sweeps what expired
	if n := v.wba.replays.len(); n != 1 {
		t.Errorf("replay cache holds %d signatures, want 1: the expired one forgotten", n)
	}
}

// A full replay cache never lets a replay pass: a remembered signature
// from another client is still Replayed, and a new signature, which
// could not be remembered, is Unconfirmed (draft "Freshness and Replay":
// without the state, a signature is no proof that replay was ruled out)
// and said once per interval; once entries expire, new ones verify again.
func TestWebBotAuthReplayCacheFull(t *testing.T) {
	clock := newClock()
	now := clock.Now().Unix()
	var reports atomic.Int32
	v := replayVerifier(t, clock, Config{replayCacheSize: 2, OnError: func(error) { reports.Add(1) }})
	addr, stranger := netip.MustParseAddr("203.0.113.5"), netip.MustParseAddr("198.51.100.9")
	first := signedAt(t, "s", "MQ", now, time.Minute)
	second := signedAt(t, "s", "Mg", now, 10*time.Minute)
	third := signedAt(t, "s", "Mw", now, 10*time.Minute)
	for _, r := range []*http.Request{first, second} {
		if got := v.Verify("TestBot", addr, r); got.Outcome != Verified {
			t.Fatalf("filling: %+v, want verified", got)
		}
	}
	unconfirmed := Result{Outcome: Unconfirmed, Method: WebBotAuth}
	for i := range 3 {
		if got := v.Verify("TestBot", addr, third); got != unconfirmed {
			t.Errorf("full, a new signature (try %d): %+v, want %+v", i, got, unconfirmed)
		}
	}
	if got := v.Verify("TestBot", stranger, third); got != unconfirmed {
		t.Errorf("full, the new signature from another client: %+v, want %+v", got, unconfirmed)
	}
	for _, r := range []*http.Request{first, second} {
		v.wba.cache.slot(r.Header.Get("Signature")).Store(nil) // the slow path too
		if got := v.Verify("TestBot", stranger, r); got.Outcome != Replayed {
			t.Errorf("full, a remembered signature from another client: %+v, want replayed", got)
		}
	}
	if n := reports.Load(); n != 1 {
		t.Errorf("the full cache was reported %d times, want once per %v", n, replayReportInterval)
	}
	if n := v.wba.replays.len(); n != 2 {
		t.Errorf("the cache holds %d signatures, want its size, 2", n)
	}
	clock.Advance(time.Minute + maxClockSkew + time.Second) // first expires, second does not
	if got := v.Verify("TestBot", addr, third); got.Outcome != Verified {
		t.Errorf("after one expired, the new signature: %+v, want verified", got)
	}
	if got := v.Verify("TestBot", stranger, second); got.Outcome != Replayed {
		t.Errorf("after one expired, the other's replay: %+v, want replayed", got)
	}
}

// The replay cache against a model of its contract, over random
// operations: the first admission of a key from a client is admitFirst
// when there is room, admitFull when not; later ones are admitSame from
// that client and admitReplay from any other, full or not, until the
// entry's time; it never holds more than its size.
func TestReplayCacheModel(t *testing.T) {
	const size = 8
	rng := rand.New(rand.NewPCG(1, 2))
	c := newReplayCache(size)
	type entry struct {
		client clientKey
		until  int64
	}
	model := map[replayKey]entry{}
	now := int64(1_000_000)
	for i := range 20000 {
		now += rng.Int64N(3)
		for k, e := range model {
			if e.until < now {
				delete(model, k)
			}
		}
		var k replayKey
		k[0] = byte(rng.IntN(24))
		var client clientKey
		client[15] = byte(rng.IntN(3))
		until := now + rng.Int64N(40)
		var want admission
		switch e, ok := model[k]; {
		case ok && e.client == client:
			want = admitSame
		case ok:
			want = admitReplay
		case len(model) >= size:
			want = admitFull
		default:
			want, model[k] = admitFirst, entry{client, until}
		}
		if got := c.admit(k, client, until, now); got != want {
			t.Fatalf("op %d: admit(key %d, client %d) at %d = %v, want %v", i, k[0], client[15], now, got, want)
		}
		if n := c.len(); n > size || n != len(model) {
			t.Fatalf("op %d: cache holds %d, model %d, size %d", i, n, len(model), size)
		}
	}
}

// Concurrent first uses of one signature from many clients: exactly one
// is Verified, every other Replayed (the check and the record are one
// step, as the draft asks).
func TestWebBotAuthReplayConcurrent(t *testing.T) {
	clock := newClock()
	v := replayVerifier(t, clock, Config{})
	r := signedAt(t, "s", "Y29uY3VycmVudA", clock.Now().Unix(), time.Minute)
	var verified, replayed atomic.Int32
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch v.Verify("TestBot", netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), r).Outcome {
			case Verified:
				verified.Add(1)
			case Replayed:
				replayed.Add(1)
			}
		}()
	}
	wg.Wait()
	if verified.Load() != 1 || replayed.Load() != 31 {
		t.Errorf("32 clients at once: %d verified, %d replayed; want 1 and 31", verified.Load(), replayed.Load())
	}
}

// replayCacheMaxBytes is the memory a full cache of the default size may
// hold, as docs/verify.md states it.
const replayCacheMaxBytes = 9 << 20

// A full replay cache of the default size holds at most
// replayCacheMaxBytes.
func TestReplayCacheMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a cache of 65,536 entries")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := newReplayCache(defaultReplayCacheSize)
	for i := range defaultReplayCacheSize {
		var k replayKey
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		c.admit(k, clientOf(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})), int64(2_000_000+i%1000), 1_000_000)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	used := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d entries: %d bytes, %.0f per entry", c.len(), used, float64(used)/float64(c.len()))
	if c.len() != defaultReplayCacheSize {
		t.Fatalf("cache holds %d, want %d", c.len(), defaultReplayCacheSize)
	}
	if used > replayCacheMaxBytes {
		t.Errorf("a full cache holds %d bytes, more than the %d stated", used, replayCacheMaxBytes)
	}
	runtime.KeepAlive(c)
}
