package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// bodyFetcher answers every robots.txt request with the body it holds.
type bodyFetcher struct {
	mu   sync.Mutex
	body string
}

func (f *bodyFetcher) set(body string) {
	f.mu.Lock()
	f.body = body
	f.mu.Unlock()
}

func (f *bodyFetcher) Fetch(context.Context, string, int) (robotstxt.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return robotstxt.Response{StatusCode: 200, Body: []byte(f.body)}, nil
}

// testInstance is a state of one instance, with a store fetching from
// fetch, saved in storage under the Caddy instance id instance.
type testInstance struct {
	st    *sharedState
	logs  *observer.ObservedLogs
	fetch *bodyFetcher
}

func newTestInstance(t *testing.T, storage certmagic.Storage, instance, body string) *testInstance {
	return newTestProcess(t, storage, instance, body, 0)
}

// newTestProcess is newTestInstance for the process of id pid, a live
// one (0: this one).
func newTestProcess(t *testing.T, storage certmagic.Storage, instance, body string, pid int) *testInstance {
	t.Helper()
	log, logs := observed()
	st := &sharedState{served: enforce.NewServed(0), violators: enforce.NewViolators(0)}
	st.logger.Store(log())
	st.persist = newPersisterOf(storage, testState, instance, st.log)
	if pid != 0 {
		st.persist.self.PID = pid
	}
	f := &bodyFetcher{body: body}
	store, err := robotstxt.NewStore(robotstxt.StoreConfig{Fetcher: f, Scheme: "http", OnVersion: st.persist.keepBody, Refresh: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st.source, st.store = store, store
	t.Cleanup(func() { store.Close() })
	st.persist.open(st)
	st.sync = newFleetSync(st)
	return &testInstance{st: st, logs: logs, fetch: f}
}

// snapshot asks for a.example's robots.txt, waiting for its first fetch.
func (ti *testInstance) snapshot(t *testing.T) *robotstxt.Snapshot {
	t.Helper()
	return ti.st.store.Snapshot(t.Context(), "a.example")
}

// settled waits until a.example's first fetch has ended whole: the
// snapshot is published a moment before the site is in the table.
func (ti *testInstance) settled(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(ti.st.store.Save()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a.example's first fetch never ended")
		}
	}
}

// escalate escalates GPTBot, proven, on a.example.
func (ti *testInstance) escalate(now time.Time) bool {
	return ti.st.violators.Begin("http://a.example", "GPTBot", netip.Addr{}, true, now, time.Hour, enforce.Escalation{URI: "/private/x"})
}

const (
	persistV1 = "User-agent: *\nDisallow: /v1\n"
	persistV2 = "User-agent: *\nDisallow: /v2\n"
)

// livePID returns the id of a process that runs until the test ends.
func livePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("starting a process: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// A restarted instance restores its own part: the versions in force, the
// bodies by digest from the shared ones, the serves and the escalations;
// a write happens only when something changed; the lease is renewed with
// each write, and given back at the end.
func TestPersistRoundTrip(t *testing.T) {
	storage := newTestStorage(t)
	a := newTestInstance(t, storage, "id-a", persistV1)
	snap := a.snapshot(t)
	now := time.Now()
	a.st.served.Note(&enforce.Serving{Site: "http://a.example", Proven: []string{"gptbot"}, Version: snap.Hash, At: now})
	if !a.escalate(now) {
		t.Fatal("no escalation began")
	}
	if err := a.st.persist.write(t.Context(), a.st, time.Second); err != nil {
		t.Fatalf("write: %v", err)
	}
	if _, err := storage.Load(t.Context(), bodyKey(sha256Hex(persistV1))); err != nil {
		t.Errorf("the body of v1 is not among the shared bodies: %v", err)
	}
	doc := a.st.persist.docKey()
	info, _ := storage.Stat(t.Context(), doc)
	time.Sleep(10 * time.Millisecond)
	if err := a.st.persist.write(t.Context(), a.st, time.Second); err != nil {
		t.Fatal(err)
	}
	if again, _ := storage.Stat(t.Context(), doc); !again.Modified.Equal(info.Modified) {
		t.Error("the document was written again though nothing changed")
	}
	l, _ := loadLease(t.Context(), storage, testState, a.st.persist.part)
	if l == nil || !l.Renewed.After(info.Modified.Add(-time.Second)) || l.Period != 1000 {
		t.Errorf("the lease after the second write: %+v, want renewed, period 1s", l)
	}
	if err := a.st.persist.release(a.st, time.Second); err != nil {
		t.Fatal(err)
	}

	b := newTestInstance(t, storage, "id-a", persistV2) // the same instance, restarted
	if b.st.persist.part != a.st.persist.part {
		t.Fatalf("restarted, the instance took part %q, not its own %q", b.st.persist.part, a.st.persist.part)
	}
	if got := b.snapshot(t); got.Hash != snap.Hash {
		t.Errorf("restored in force: %s, want v1 %s", got.Hash, snap.Hash)
	}
	if vs, _ := b.st.served.Lookup("http://a.example", &enforce.Asker{Token: "gptbot", Proven: true}, now); len(vs) != 1 {
		t.Errorf("restored serves: %v, want v1 served to GPTBot", vs)
	}
	if b.st.violators.Lookup("http://a.example", "gptbot", netip.Addr{}, true, now) == nil {
		t.Error("the escalation was not restored")
	}
}

// sha256Hex returns the hex SHA-256 of body, as bodies are named.
func sha256Hex(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// Two processes that share one identity never write over each other's
// part: the one whose part was taken over reads the lease back before its
// write, says so at error level, and moves to a part of its own; and
// the one restarted takes its own part back, never the other's.
func TestPersistTakenOver(t *testing.T) {
	storage := newTestStorage(t)
	// Three processes of this host, as the leases tell them apart.
	a := newTestProcess(t, storage, "shared-id", persistV1, os.Getppid())
	a.snapshot(t)
	a.escalate(time.Now())
	if err := a.st.persist.write(t.Context(), a.st, time.Second); err != nil {
		t.Fatal(err)
	}
	// Another process of the same identity finds the part's lease stale
	// (a's storage was slow, say) and takes it over.
	stale := a.st.persist.self
	stale.Renewed = time.Now().Add(-time.Hour)
	storeLease(t.Context(), storage, testState, a.st.persist.part, &stale)
	b := newTestProcess(t, storage, "shared-id", persistV2, livePID(t))
	if b.st.persist.part != a.st.persist.part {
		t.Fatalf("b took %q, want the stale part %q", b.st.persist.part, a.st.persist.part)
	}
	bDoc, _ := storage.Load(t.Context(), b.st.persist.docKey())

	a.escalate(time.Now().Add(2 * time.Hour)) // a change of a's to write
	if err := a.st.persist.write(t.Context(), a.st, time.Second); err != nil {
		t.Fatal(err)
	}
	if a.st.persist.part == b.st.persist.part {
		t.Fatal("a goes on writing the part b took over")
	}
	if got, _ := storage.Load(t.Context(), b.st.persist.docKey()); string(got) != string(bDoc) {
		t.Error("a wrote over the part b holds")
	}
	if n := a.logs.FilterMessageSnippet("took over this instance's robots_enforce state part").Len(); n != 1 {
		t.Errorf("%d error lines about the part taken over, want 1", n)
	}
	if _, err := storage.Load(t.Context(), a.st.persist.docKey()); err != nil {
		t.Errorf("a's new part has no document: %v", err)
	}
	// b still holds its part, and is told nothing.
	if err := b.st.persist.write(t.Context(), b.st, time.Second); err != nil || b.logs.FilterMessageSnippet("took over").Len() != 0 {
		t.Errorf("b's write: %v, %d lines about a takeover", err, b.logs.FilterMessageSnippet("took over").Len())
	}

	// A third start of the same identity while both live: it is told,
	// and takes neither's part.
	c := newTestProcess(t, storage, "shared-id", persistV2, 0)
	if c.st.persist.part == a.st.persist.part || c.st.persist.part == b.st.persist.part {
		t.Errorf("a third process took a live process's part %q", c.st.persist.part)
	}
	if n := c.logs.FilterMessageSnippet("two instances share one identity").Len(); n != 2 {
		t.Errorf("%d error lines about the shared identity, want 2 (one per live holder)", n)
	}
}

// The state of the layout before parts is read once: restored into a new
// part, its bodies copied to the shared ones, and deleted once the part
// is written.
func TestPersistLegacy(t *testing.T) {
	storage := newTestStorage(t)
	ctx := t.Context()
	legacy := "robots_enforce/old-id/" + testState
	now := time.Now().Add(-10 * time.Second)
	saved := savedState{Format: legacyFormat, SavedAt: now, Sites: []robotstxt.SavedSite{{Key: "a.example", Versions: []robotstxt.SavedVersion{{
		Sum: sha256Hex(persistV1), Access: "available", Source: "http://a.example/robots.txt", HTTPStatus: 200,
		FetchedAt: now, ChangedAt: now, CheckedAt: now}}}},
		Escalated: []enforce.EscalatedCrawler{{Site: "http://a.example", Token: "gptbot", Since: now, Until: now.Add(time.Hour), URI: "/x"}}}
	b, _ := json.Marshal(saved)
	storage.Store(ctx, legacy+"/state.json", b)
	storage.Store(ctx, legacy+"/bodies/"+sha256Hex(persistV1), []byte(persistV1))

	a := newTestInstance(t, storage, "old-id", persistV2)
	if got := a.snapshot(t); got.Hash != robotstxt.VersionHash([]byte(persistV1)) {
		t.Errorf("the legacy state's version in force: %s, want v1", got.Hash)
	}
	if a.st.violators.OwnLen() != 1 {
		t.Error("the legacy state's escalation was not restored")
	}
	if err := a.st.persist.write(t.Context(), a.st, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Load(ctx, bodyKey(sha256Hex(persistV1))); err != nil {
		t.Errorf("the legacy body was not copied to the shared ones: %v", err)
	}
	if _, err := storage.Load(ctx, legacy+"/state.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the legacy state after the part was written: %v, want it gone", err)
	}
	var doc savedState
	got, _ := storage.Load(ctx, a.st.persist.docKey())
	if json.Unmarshal(got, &doc); doc.Format != partFormat || len(doc.Escalated) != 1 || len(doc.Sites) != 1 {
		t.Errorf("the part's document: %s", got)
	}
}

// A storage that fails or hangs fails the write, counted and logged once
// a minute, and never holds a fetch: new bodies wait, bounded, and are
// stored once it works again.
func TestPersistStorageFails(t *testing.T) {
	storage := newTestStorage(t)
	a := newTestInstance(t, storage, "id", persistV1)
	failing := &failingStorage{err: errStorageDown}
	a.st.persist.storage = failing
	start := time.Now()
	a.snapshot(t) // its first fetch hands its body to the persister
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the first fetch took %v with the storage down", d)
	}
	for range 3 {
		a.st.sync.writePass(a.st.sync.settings.Load())
	}
	if n := a.st.sync.writeErrors.Load(); n != 3 {
		t.Errorf("%d write errors counted, want 3", n)
	}
	if n := a.logs.FilterMessageSnippet("robots.txt state not saved").Len(); n != 1 {
		t.Errorf("%d log lines for 3 failed writes within a minute, want 1", n)
	}
	for i := range maxPendingBodies + 10 {
		a.st.persist.keepBody(sha256Hex(string(rune('a'+i%26))+string(rune(i))), make([]byte, 1<<20))
	}
	if n, bytes := len(a.st.persist.pending), a.st.persist.pendingBytes; n > maxPendingBodies || bytes > maxPendingBytes {
		t.Errorf("%d bodies of %d octets wait, want at most %d of %d", n, bytes, maxPendingBodies, maxPendingBytes)
	}
	a.st.persist.storage = storage
	a.st.persist.pending = a.st.persist.pending[len(a.st.persist.pending):]
	a.st.persist.pendingBytes = 0
	a.st.persist.keepBody(sha256Hex(persistV1), []byte(persistV1))
	a.st.sync.writePass(a.st.sync.settings.Load())
	if _, err := storage.Load(t.Context(), bodyKey(sha256Hex(persistV1))); err != nil {
		t.Errorf("the waiting body was not stored once the storage works: %v", err)
	}
	if n := a.logs.FilterMessageSnippet("current again").Len(); n != 1 {
		t.Errorf("%d log lines saying the state is current again, want 1", n)
	}
	if len(a.st.persist.pending) != 0 {
		t.Errorf("%d bodies still wait after a document named them", len(a.st.persist.pending))
	}
}

// blockingStorage is a storage whose every operation waits until release
// is closed or its context is done: a storage that hangs.
type blockingStorage struct {
	certmagic.Storage
	release chan struct{}
}

func (b *blockingStorage) wait(ctx context.Context) error {
	select {
	case <-b.release:
		return errStorageDown
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blockingStorage) Store(ctx context.Context, _ string, _ []byte) error { return b.wait(ctx) }
func (b *blockingStorage) Load(ctx context.Context, _ string) ([]byte, error) {
	return nil, b.wait(ctx)
}
func (b *blockingStorage) List(ctx context.Context, _ string, _ bool) ([]string, error) {
	return nil, b.wait(ctx)
}
func (b *blockingStorage) Stat(ctx context.Context, _ string) (certmagic.KeyInfo, error) {
	return certmagic.KeyInfo{}, b.wait(ctx)
}
func (b *blockingStorage) Delete(ctx context.Context, _ string) error { return b.wait(ctx) }

// A storage that hangs holds the state's goroutine, never a request: an
// escalation begun, which has the part written at once, returns at once
// however many begin. (The state then goes within finishTimeout: its
// last write's context ends then.)
func TestPersistStorageHangs(t *testing.T) {
	a := newTestInstance(t, newTestStorage(t), "id", persistV1)
	a.snapshot(t)
	hung := &blockingStorage{release: make(chan struct{})}
	a.st.persist.storage = hung
	a.st.sync.start()
	release := a.st.sync.use(&Distributed{ReadInterval: caddy.Duration(minFleetInterval), WriteInterval: caddy.Duration(minFleetInterval)})
	defer release()
	time.Sleep(3 * minFleetInterval) // the loop is in a read or a write, held
	start := time.Now()
	for i := range 1000 {
		a.st.violators.Begin("http://a.example", fmt.Sprintf("Bot%d", i), netip.Addr{}, true, time.Now(), time.Hour, enforce.Escalation{})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("1000 escalations took %v while the storage hangs", d)
	}
	close(hung.release)
	a.st.sync.finish()
}

// Two instances, their loops running with distributed, under the race
// detector: an escalation begun on one is in force on the other within a
// few intervals, and a serve one saw counts on the other.
func TestFleetSyncLoop(t *testing.T) {
	storage := newTestStorage(t)
	d := &Distributed{ReadInterval: caddy.Duration(minFleetInterval), WriteInterval: caddy.Duration(minFleetInterval)}
	var nodes [2]*testInstance
	for i := range nodes {
		nodes[i] = newTestInstance(t, storage, fmt.Sprintf("id-%d", i), persistV1)
		nodes[i].snapshot(t)
		nodes[i].st.sync.start()
		release := nodes[i].st.sync.use(d)
		t.Cleanup(func() { release(); nodes[i].st.sync.finish() })
	}
	a, b := nodes[0], nodes[1]
	var wg sync.WaitGroup
	for range 4 { // requests meanwhile, on both
		wg.Go(func() {
			for i := range 200 {
				for _, n := range nodes {
					n.st.served.Lookup("http://a.example", &enforce.Asker{Token: "examplebot", Addr: netip.MustParseAddr("192.0.2.1"),
						Names: []string{"examplebot"}}, time.Now())
					n.st.violators.Lookup("http://a.example", "gptbot", netip.Addr{}, true, time.Now())
					n.snapshot(t)
				}
				if i%50 == 0 {
					time.Sleep(minFleetInterval / 4)
				}
			}
		})
	}
	began := time.Now()
	a.escalate(began)
	a.st.served.Note(&enforce.Serving{Site: "http://a.example", Addr: netip.MustParseAddr("192.0.2.1"), Names: []string{"examplebot"},
		Version: a.snapshot(t).Hash, At: began})
	for b.st.violators.Lookup("http://a.example", "gptbot", netip.Addr{}, true, time.Now()) == nil {
		if time.Since(began) > 5*time.Second {
			t.Fatal("a's escalation never reached b")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("a's escalation in force on b after %v (intervals %v)", time.Since(began).Round(time.Millisecond), minFleetInterval)
	for {
		vs, _ := b.st.served.Lookup("http://a.example", &enforce.Asker{Token: "examplebot", Addr: netip.MustParseAddr("192.0.2.1"),
			Names: []string{"examplebot"}}, time.Now())
		if len(vs) == 1 {
			break
		}
		if time.Since(began) > 5*time.Second {
			t.Fatal("a's serve never reached b")
		}
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
}
