package verify

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// TestFlood sends 100,000 forged Googlebot claims from distinct addresses
// and checks that DNS traffic stays within the rate limit's budget over the
// fake clock's elapsed time, that the cache stays within its cap, and (by
// goleak in TestMain) that no goroutine outlives Close.
func TestFlood(t *testing.T) {
	const (
		claims    = 100000
		rate      = 20
		burst     = 50
		cacheSize = 1024
		step      = 10000 // claims per fake second
	)
	clock := newClock()
	res := &fakeResolver{} // every PTR: NXDOMAIN
	var limited, lookups atomic.Int64
	v, err := New(Config{
		NoBuiltinLists: true, Resolver: res, Now: clock.Now,
		DNSRate: rate, DNSBurst: burst, DNSCacheSize: cacheSize,
		OnEvent: func(ev Event) {
			if ev.Kind == EventDNSLookup {
				if ev.Result == "rate_limited" {
					limited.Add(1)
				} else {
					lookups.Add(1)
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	v.Start()
	start := clock.Now()
	base := netip.MustParseAddr("10.0.0.0").As4()
	pending, unconfirmed := 0, 0
	for i := range claims {
		if i > 0 && i%step == 0 {
			clock.Advance(time.Second)
		}
		a := base
		a[1], a[2], a[3] = byte(i>>16), byte(i>>8), byte(i)
		switch v.Verify("Googlebot", netip.AddrFrom4(a), nil).Outcome {
		case Pending:
			pending++
		case Unconfirmed:
			unconfirmed++
		}
	}
	elapsed := clock.Now().Sub(start)
	budget := int64(burst + rate*elapsed.Seconds())
	accepted := int64(claims) - limited.Load()
	waitUntil(t, func() bool { return lookups.Load() == accepted })
	entries := v.dns.len()
	v.Close()

	if q := res.ptrQ.Load(); q > budget || q != accepted {
		t.Errorf("PTR queries = %d (accepted %d), budget %d over %v", q, accepted, budget, elapsed)
	}
	if res.fwdQ.Load() != 0 {
		t.Errorf("forward queries = %d, want 0 (no PTR name)", res.fwdQ.Load())
	}
	if entries > cacheSize {
		t.Errorf("cache entries = %d, cap %d", entries, cacheSize)
	}
	// The claims the rate limit refused are unconfirmed, and only they
	// pending: no answer is on their way, and a flood must not buy the
	// crawler's rights.
	if pending+unconfirmed != claims || int64(unconfirmed) != limited.Load() {
		t.Errorf("%d pending and %d unconfirmed of %d first claims, %d refused by the rate limit: want the refused unconfirmed, the rest pending",
			pending, unconfirmed, claims, limited.Load())
	}
	t.Logf("%d claims over %v of fake time: %d DNS queries (budget %d), %d refused by the rate limit, %d cache entries (cap %d)",
		claims, elapsed, res.ptrQ.Load(), budget, limited.Load(), entries, cacheSize)
}

// TestFloodCacheCap lifts the rate limit so that every claim is looked up:
// the cache still holds at most its cap.
func TestFloodCacheCap(t *testing.T) {
	const claims, cacheSize = 20000, 512
	res := &fakeResolver{}
	var done atomic.Int64
	v := newTestVerifier(t, Config{NoBuiltinLists: true, Resolver: res, Now: newClock().Now,
		DNSRate: 1e9, DNSBurst: 1e9, DNSCacheSize: cacheSize,
		OnEvent: func(ev Event) {
			if ev.Kind == EventDNSLookup && ev.Result != "rate_limited" {
				done.Add(1)
			}
		}})
	base := netip.MustParseAddr("10.0.0.0").As4()
	for i := range claims {
		a := base
		a[1], a[2], a[3] = byte(i>>16), byte(i>>8), byte(i)
		v.Verify("Googlebot", netip.AddrFrom4(a), nil)
		if n := v.dns.len(); n > cacheSize {
			t.Fatalf("after %d claims: %d cache entries, cap %d", i+1, n, cacheSize)
		}
	}
	waitUntil(t, func() bool { return done.Load() == res.ptrQ.Load() && len(v.dnsQueue) == 0 })
	if n := v.dns.len(); n > cacheSize {
		t.Errorf("cache entries = %d, cap %d", n, cacheSize)
	}
	t.Logf("%d claims, %d lookups, %d cache entries (cap %d)", claims, res.ptrQ.Load(), v.dns.len(), cacheSize)
}
