package robotstxt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// bodyFetcher answers each URL with the body body gives it, and counts the
// fetches of each.
type bodyFetcher struct {
	body  func(url string) string
	mu    sync.Mutex
	calls map[string]int
}

func newBodyFetcher(body func(url string) string) *bodyFetcher {
	return &bodyFetcher{body: body, calls: make(map[string]int)}
}

func (f *bodyFetcher) Fetch(ctx context.Context, url string, limit int) (Response, error) {
	f.mu.Lock()
	f.calls[url]++
	f.mu.Unlock()
	body := f.body(url)
	r := Response{StatusCode: 200, Body: []byte(body[:min(len(body), limit)])}
	r.Truncated = len(body) > limit
	return r, nil
}

func (f *bodyFetcher) count(url string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[url]
}

// siteEvents counts what a Store's OnSite is told.
type siteEvents struct {
	mu sync.Mutex
	n  map[SiteEvent]int
}

func (e *siteEvents) note(ev SiteEvent, _ string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == nil {
		e.n = make(map[SiteEvent]int)
	}
	e.n[ev]++
}

func (e *siteEvents) count(ev SiteEvent) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n[ev]
}

// synthetic returns the first n octets of the 500 KiB synthetic file of
// ../../testdata/robots, cut after a line.
func synthetic(tb testing.TB, n int) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "robots", "synthetic-500k.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	b = b[:min(n, len(b))]
	return string(b[:strings.LastIndexByte(string(b), '\n')+1])
}

// liveHeap returns the heap in use after two collections.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A catch-all site's tenants, each answering a large robots.txt, arrive
// one after another, while ten sites are asked for between them: the
// octets held stay within MaxMemory, by the table's count and by the
// runtime's heap figures, the sites forgotten are forgotten for memory,
// and the ten are never fetched again.
func TestStoreMemoryBudget(t *testing.T) {
	const (
		budget  = MinMaxMemory
		tenants = 110
		hot     = 10
	)
	large := synthetic(t, 400<<10)
	base := liveHeap()
	clock := newManualClock()
	f := newBodyFetcher(func(string) string { return large })
	var events siteEvents
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.MaxMemory, c.NewHosts, c.OnSite = budget, 1<<20, events.note
	})
	hotHost := func(i int) string { return fmt.Sprintf("hot%d.example", i) }
	ask := func(host string) {
		t.Helper()
		if snap := s.Snapshot(t.Context(), host); snap.Robots == nil {
			t.Fatalf("Snapshot(%s): no file (%s)", host, snap.Err)
		}
		settle(t, s, host)
	}
	most := int64(0)
	for i := range tenants {
		if i%5 == 0 {
			for h := range hot {
				ask(hotHost(h))
			}
		}
		ask(fmt.Sprintf("tenant%d.example", i))
		clock.Advance(time.Second)
		most = max(most, s.Bytes())
		if b := s.Bytes(); b > budget {
			t.Fatalf("after tenant %d: the table counts %d octets held, more than max memory %d", i, b, budget)
		}
	}
	heap := liveHeap() - base
	t.Logf("%d tenants of %d KiB: at most %.1f MiB held, %.1f MiB at the end, %.1f MiB by the heap; forgotten %d for memory, %d for hosts",
		tenants, len(large)>>10, float64(most)/(1<<20), float64(s.Bytes())/(1<<20), float64(heap)/(1<<20),
		events.count(SiteForgottenMemory), events.count(SiteForgottenHosts))
	// The heap holds what the table counts, and the test's own few
	// octets: the store's caches and the fetcher's table.
	if heap > budget+budget/20 {
		t.Errorf("the heap holds %d octets more than before the store, more than max memory %d and 5%%", heap, budget)
	}
	if d := float64(heap-s.Bytes()) / float64(heap); d > 0.05 || d < -0.05 {
		t.Errorf("the table counts %d octets held, the heap %d: %+.1f%%, want within 5%%", s.Bytes(), heap, 100*d)
	}
	if events.count(SiteForgottenMemory) == 0 || events.count(SiteForgottenHosts) > 0 {
		t.Errorf("forgotten: %d for memory, %d for hosts; want some for memory and none for hosts",
			events.count(SiteForgottenMemory), events.count(SiteForgottenHosts))
	}
	for h := range hot {
		if n := f.count("https://" + hotHost(h) + "/robots.txt"); n != 1 {
			t.Errorf("%s, asked for between every five tenants, was fetched %d times, want once", hotHost(h), n)
		}
	}
}

// Below both bounds the table forgets nothing, whatever the mix of sizes:
// a stream of tenants, small and large, in a shuffled order, that holds
// less than MaxMemory in fewer than MaxHosts sites is fetched once each
// and never refused. Past the bound in octets, the sites forgotten for
// memory are counted, and so are their fetches again when they come back
// within their refresh.
func TestStoreKeepsWhatItAdmitsInOctets(t *testing.T) {
	const (
		maxHosts = 300
		small    = 240
	)
	big := synthetic(t, 400<<10)
	// As many large sites as fill four fifths of MaxMemory with the small
	// ones: more than the main part's three quarters.
	large := int(MinMaxMemory * 4 / 5 / siteWeight(NewVersion(nil, "https://large0.example/robots.txt", []byte(big), snapEpoch)))
	clock := newManualClock()
	f := newBodyFetcher(func(url string) string {
		if strings.HasPrefix(url, "https://large") {
			return big
		}
		return "User-agent: *\nDisallow: /private/\n" + strings.Repeat("Disallow: /p/\n", len(url)%40)
	})
	var events siteEvents
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.MaxHosts, c.MaxMemory, c.NewHosts, c.OnSite = maxHosts, MinMaxMemory, 1<<20, events.note
	})
	var hosts []string
	for i := range large {
		hosts = append(hosts, fmt.Sprintf("large%d.example", i))
	}
	if large+small >= maxHosts {
		t.Fatalf("%d large and %d small sites: more than max hosts %d", large, small, maxHosts)
	}
	for i := range small {
		hosts = append(hosts, fmt.Sprintf("small%d.example", i))
	}
	rng := rand.New(rand.NewPCG(3, 5))
	rng.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	visit := func(round int, list []string) {
		t.Helper()
		for _, i := range rng.Perm(len(list)) {
			snap := s.Snapshot(t.Context(), list[i])
			if snap.Refusal != RefusalNone || snap.Robots == nil {
				t.Fatalf("round %d: Snapshot(%s) refused (%q)", round, list[i], snap.Refusal)
			}
			waitUnpinned(t, s)
			clock.Advance(10 * time.Millisecond)
		}
		clock.Advance(time.Second)
	}
	for round := range 8 {
		visit(round, hosts[:min(len(hosts), (round+1)*len(hosts)/4)])
	}
	t.Logf("%d sites held in %.1f MiB", held(s), float64(s.Bytes())/(1<<20))
	for _, h := range hosts {
		if n := f.count("https://" + h + "/robots.txt"); n != 1 {
			t.Errorf("%s fetched %d times, want once: the table forgot it below its bounds", h, n)
		}
	}
	if n := events.count(SiteForgottenMemory) + events.count(SiteForgottenHosts) + events.count(SiteRefetched); n > 0 {
		t.Errorf("below the bounds, %d sites forgotten or fetched again, want none", n)
	}

	// Past the bound in octets: 40 large sites more, then every site again.
	var more []string
	for i := range 40 {
		more = append(more, fmt.Sprintf("large%d.example", large+i))
	}
	visit(8, more)
	forgotten := events.count(SiteForgottenMemory)
	if forgotten == 0 || events.count(SiteForgottenHosts) > 0 {
		t.Errorf("past max memory, %d sites forgotten for memory and %d for hosts; want some for memory only", forgotten, events.count(SiteForgottenHosts))
	}
	if b := s.Bytes(); b > MinMaxMemory {
		t.Errorf("the table counts %d octets held, more than max memory %d", b, int64(MinMaxMemory))
	}
	all := append(hosts, more...)
	visit(9, all)
	again := 0
	for _, h := range all {
		again += f.count("https://"+h+"/robots.txt") - 1
	}
	if got := events.count(SiteRefetched); got != again || again == 0 {
		t.Errorf("sites fetched again within their refresh: %d counted, %d seen; want them equal and more than none", got, again)
	}
	t.Logf("past the bound: %d forgotten for memory, %d fetched again", forgotten, again)
}

// A site whose file would hold more than a quarter of MaxMemory is held,
// read only as far as fits: the rules before the cut are enforced, those
// past it are not, the version is still named by the whole file, the
// cut is told, and the site is fetched once however often it is asked
// for.
func TestStoreCutsSiteTooLarge(t *testing.T) {
	whole := synthetic(t, 1<<20)
	one := siteWeight(NewVersion(nil, "https://big.example/robots.txt", []byte(whole), snapEpoch))
	var b strings.Builder
	b.WriteString("User-agent: cutbot\nDisallow: /early/\n\n")
	for i := range int(MinMaxMemory/4/one) + 2 {
		part := strings.ReplaceAll(whole, "llow: /", fmt.Sprintf("llow: /c%d/", i))
		b.WriteString(part)
	}
	b.WriteString("\nUser-agent: cutbot\nDisallow: /late/\n")
	body := b.String()
	clock := newManualClock()
	f := newBodyFetcher(func(string) string { return body })
	var events siteEvents
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.MaxMemory, c.MaxSize, c.OnSite = MinMaxMemory, 16<<20, events.note
	})
	snap := s.Snapshot(t.Context(), "big.example")
	settle(t, s, "big.example")
	if snap.Robots == nil {
		t.Fatalf("no file: %s", snap.Err)
	}
	w := siteWeight(snap)
	cut := "no size-limit diagnostic"
	for _, d := range snap.Robots.Diagnostics() {
		if d.Code == rules.CodeSizeLimit {
			cut = d.String()
		}
	}
	t.Logf("a file of %.1f MiB (%s): the site holds %.1f MiB, at most %.1f", float64(len(body))/(1<<20),
		cut, float64(w)/(1<<20), float64(MinMaxMemory/4)/(1<<20))
	if w > MinMaxMemory/4 || !snap.Truncated || events.count(SiteCut) != 1 {
		t.Errorf("the site holds %d octets (want at most %d), truncated %v (want true), cut told %d times (want once)",
			w, int64(MinMaxMemory/4), snap.Truncated, events.count(SiteCut))
	}
	if snap.Hash != VersionHash([]byte(body)) || snap.Robots.Size() != len(body) {
		t.Errorf("the version is named %s for a body of %d octets, want %s for %d: the whole file's", snap.Hash, snap.Robots.Size(), VersionHash([]byte(body)), len(body))
	}
	for _, tt := range []struct {
		path  string
		allow bool
	}{{"/early/x", false}, {"/late/x", true}} {
		if got := snap.Robots.Allowed("cutbot", tt.path); got != tt.allow {
			t.Errorf("Allowed(cutbot, %q) = %v, want %v: the rules before the cut are enforced, those past it not", tt.path, got, tt.allow)
		}
	}
	for range 5 {
		clock.Advance(time.Minute)
		s.Snapshot(t.Context(), "big.example")
	}
	if n := f.count("https://big.example/robots.txt"); n != 1 {
		t.Errorf("the site was fetched %d times, want once: held in part, it is held", n)
	}
	if b := s.Bytes(); b > MinMaxMemory/4+siteOverhead {
		t.Errorf("the table counts %d octets held, want the site's share at most", b)
	}
}

// fill repeats line, made from its number, to n octets.
func fill(n int, line func(i int) string) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(line(i))
	}
	return []byte(b.String()[:n])
}

// TestMinMaxMemory checks the reason for MinMaxMemory: a quarter of it
// holds any file read to 500 KiB, here files made to hold the most a line
// can make a site hold (a diagnostic, a group, a usage preference with
// members outside the vocabulary, a pattern Google reads otherwise, a
// floating rule, a record), with the index of its groups. With -v it
// prints what each holds.
func TestMinMaxMemory(t *testing.T) {
	const size = rules.DefaultMaxSize
	first := func(i int) string { // a group for the rules to be in
		if i == 0 {
			return "user-agent:*\n"
		}
		return ""
	}
	letters := func(i int) string {
		return string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
	}
	files := map[string][]byte{
		"synthetic":   []byte(synthetic(t, size)),
		"diagnostics": fill(size, func(i int) string { return "x\n" }),
		"groups":      fill(size, func(i int) string { return "user-agent:b" + letters(i) + "\ndisallow:/\n" }),
		"usage": fill(size, func(i int) string {
			return fmt.Sprintf("user-agent:*\ncontent-usage:/%d train-ai=n,a%d=?1,b%d,c%d\ncontent-signal:/%d search=no\n", i, i, i, i, i)
		}),
		"escaped":  fill(size, func(i int) string { return fmt.Sprintf("%sdisallow:/%%%02X*%d$\n", first(i), i%256, i) }),
		"floating": fill(size, func(i int) string { return fmt.Sprintf("user-agent:*\ndisallow:/*/%d/\n", i) }),
		"records":  fill(size, func(i int) string { return fmt.Sprintf("s:%d\n", i) }),
		"rules":    fill(size, func(i int) string { return fmt.Sprintf("%sallow:/%d\n", first(i), i) }),
	}
	for name, body := range files {
		w := siteWeight(NewVersion(nil, "https://made.example/robots.txt", body, snapEpoch))
		t.Logf("%-12s %d octets: the site holds %8d (%.1f×)", name, len(body), w, float64(w)/float64(len(body)))
		if w > MinMaxMemory/4 {
			t.Errorf("%s: a file of %d octets holds %d, more than a quarter of MinMaxMemory (%d): it would be read less far than 500 KiB",
				name, len(body), w, int64(MinMaxMemory/4))
		}
	}
}

// TestSiteOverhead checks siteOverhead against the runtime's heap figures:
// a store of many sites with a small file holds, per site, its
// snapshot's weight, its name and URL, and at most siteOverhead besides.
func TestSiteOverhead(t *testing.T) {
	const sites = 3000
	clock := newManualClock()
	f := newURLCounter("User-agent: *\nDisallow: /private/\n")
	s := newTestStore(t, f, clock, func(c *StoreConfig) { c.MaxHosts = 2 * sites; c.NewHosts = 1 << 20 })
	host := func(i int) string { return fmt.Sprintf("site%d.example", i) }
	for i := range 10 { // the caches' first allocations, out of the count
		s.Snapshot(t.Context(), host(sites+i))
	}
	waitUnpinned(t, s)
	before, countedBefore := liveHeap(), s.Bytes()
	for i := range sites {
		s.Snapshot(t.Context(), host(i))
		if i%2 == 0 { // half go to the main part
			clock.Advance(time.Second)
			s.Snapshot(t.Context(), host(i))
		}
	}
	waitUnpinned(t, s)
	heap, counted := float64(liveHeap()-before)/sites, float64(s.Bytes()-countedBefore)/sites
	snap := s.Snapshot(t.Context(), host(0))
	own := float64(siteWeight(snap) - siteOverhead)
	names := float64(len(host(0)) + len("https://") + len(host(0)) + len("/robots.txt"))
	t.Logf("per site: the heap holds %.0f octets, the table counts %.0f; its snapshot %.0f, names %.0f, the rest %.0f (siteOverhead %d)",
		heap, counted, own, names, heap-own-names, siteOverhead)
	if heap > counted {
		t.Errorf("per site the heap holds %.0f octets, more than the %.0f the table counts: siteOverhead %d is too small", heap, counted, siteOverhead)
	}
	if counted > 1.5*heap {
		t.Errorf("per site the table counts %.0f octets, more than half again the %.0f the heap holds", counted, heap)
	}
}

// OnSite is told of each site forgotten, by the bound that forgot it, of
// a site fetched again before its copy was due (not after), and of each
// refusal of a new site, by its cause.
func TestStoreSiteEvents(t *testing.T) {
	clock := newManualClock()
	f := newURLCounter("User-agent: *\nDisallow: /private/\n")
	var events siteEvents
	s := newTestStore(t, f, clock, func(c *StoreConfig) {
		c.MaxHosts, c.NewHosts, c.NewHostsPer, c.OnSite = 8, 23, time.Hour, events.note
	})
	host := func(i int) string { return fmt.Sprintf("site%d.example", i) }
	for i := range 20 {
		s.Snapshot(t.Context(), host(i))
		waitUnpinned(t, s)
	}
	if got, want := events.count(SiteForgottenHosts), 20-8; got != want || events.count(SiteForgottenMemory) != 0 {
		t.Errorf("20 sites asked for once, max hosts 8: %d forgotten for hosts, %d for memory; want %d and none",
			got, events.count(SiteForgottenMemory), want)
	}
	s.Snapshot(t.Context(), host(0)) // forgotten, its copy due in 24 hours
	waitUnpinned(t, s)
	if n := events.count(SiteRefetched); n != 1 {
		t.Errorf("a site forgotten within its refresh, asked for again: %d fetches again counted, want 1", n)
	}
	clock.Advance(MaxRefresh + time.Minute)
	s.Snapshot(t.Context(), host(1)) // forgotten, its copy due by now anyway
	waitUnpinned(t, s)
	if n := events.count(SiteRefetched); n != 1 {
		t.Errorf("a site forgotten past its refresh, asked for again: %d fetches again counted, want still 1", n)
	}
	for i := range 24 { // a day later the budget holds 23 first fetches, one spent above
		s.Snapshot(t.Context(), host(100+i))
		waitUnpinned(t, s)
	}
	if n := events.count(SiteRefusedNewHosts); n != 2 {
		t.Errorf("24 new sites, 22 first fetches left in the budget: %d refusals counted, want 2", n)
	}
}
