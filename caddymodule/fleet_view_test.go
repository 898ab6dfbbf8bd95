package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// What one instance saw reaches another through their parts: the version
// it had in force, the serves it saw, the escalations it began; and what
// the other saves stays its own.
func TestFleetViewInstall(t *testing.T) {
	storage := newTestStorage(t)
	a := newTestInstance(t, storage, "id-a", persistV1)
	v1 := a.snapshot(t).Hash
	now := time.Now()
	a.st.served.Note(&enforce.Serving{Site: "http://a.example", Addr: netip.MustParseAddr("192.0.2.1"), Names: []string{"examplebot"},
		Version: v1, At: now})
	a.escalate(now)
	if err := a.st.persist.write(t.Context(), a.st, time.Second); err != nil {
		t.Fatal(err)
	}

	b := newTestInstance(t, storage, "id-b", persistV2)
	b.snapshot(t)
	b.settled(t)
	b.st.sync.readPass(time.Second)
	if got := b.st.sync.parts.Load(); got != 1 {
		t.Errorf("the view holds %d parts, want a's alone", got)
	}
	if b.st.sync.age(&b.st.sync.viewAt, time.Now()) > time.Second {
		t.Error("the view's age after a read is not fresh")
	}
	snap := b.snapshot(t)
	if snap.Version(v1, time.Now()) == nil {
		t.Errorf("b does not know a's version in force %s", v1)
	}
	vs, link := b.st.served.Lookup("http://a.example", &enforce.Asker{Token: "examplebot", Addr: netip.MustParseAddr("192.0.2.1"),
		Names: []string{"examplebot"}}, time.Now())
	if len(vs) != 1 || vs[0].Hash != v1 || link != enforce.LinkClient {
		t.Errorf("b's lookup of a's serve: %v %v, want %s by the client", vs, link, v1)
	}
	if b.st.violators.Lookup("http://a.example", "gptbot", netip.Addr{}, true, time.Now()) == nil {
		t.Error("a's escalation is not in force on b")
	}
	if err := b.st.persist.write(t.Context(), b.st, time.Second); err != nil {
		t.Fatal(err)
	}
	var doc savedState
	raw, _ := storage.Load(t.Context(), b.st.persist.docKey())
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Served) != 0 || len(doc.Escalated) != 0 || len(doc.Sites[0].Versions) != 1 {
		t.Errorf("b saved what it read of a's: %s", raw)
	}
}

// The view holds at most maxFleetParts parts, those renewed last, and
// reads a document again only when its lease says it was written since.
func TestFleetViewBounds(t *testing.T) {
	storage := newTestStorage(t)
	ctx := t.Context()
	now := time.Now()
	for i := range maxFleetParts + 8 {
		name := fmt.Sprintf("host%d_id", i)
		l := &lease{Nonce: name, Host: name, PID: 1, Renewed: now.Add(-time.Duration(i) * time.Minute), Written: now, Period: 1000}
		storeLease(ctx, storage, testState, name, l)
		b, _ := json.Marshal(savedState{Format: partFormat, SavedAt: now})
		storage.Store(ctx, partDocKey(testState, name), b)
	}
	r := newFleetReader(storage, testState)
	if errs, err := r.read(ctx, "host0_id", now); err != nil || errs != 0 {
		t.Fatalf("read: %d part errors, %v", errs, err)
	}
	if len(r.parts) != maxFleetParts {
		t.Errorf("the view holds %d parts, want %d", len(r.parts), maxFleetParts)
	}
	if r.parts["host1_id"] == nil || r.parts[fmt.Sprintf("host%d_id", maxFleetParts+7)] != nil || r.parts["host0_id"] != nil {
		t.Error("the view holds other parts than those renewed last, its own excepted")
	}
	// A document rewritten without its lease saying so is not read again.
	storage.Store(ctx, partDocKey(testState, "host1_id"), []byte("not read"))
	if _, err := r.read(ctx, "host0_id", now); err != nil || r.parts["host1_id"].doc == nil {
		t.Errorf("a document was read again though its lease did not change: %v", err)
	}
}

// A part whose instance is gone for a day is purged, unless it holds an
// escalation in force; a live one, or this instance's own, never. A body
// no part names is deleted once stored an hour ago, never one named.
func TestFleetPurge(t *testing.T) {
	storage := newTestStorage(t)
	ctx := t.Context()
	now := time.Now()
	old := now.Add(-partPurgeAge - time.Hour)
	named := sha256Hex("named")
	parts := map[string]struct {
		renewed   time.Time
		escalated bool
		purged    bool
	}{
		"gone":           {old, false, true},
		"gone-escalated": {old, true, false},
		"live":           {now, false, false},
		"self":           {old, false, false},
	}
	for name, p := range parts {
		storeLease(ctx, storage, testState, name, &lease{Nonce: name, Renewed: p.renewed, Period: 1000})
		doc := savedState{Format: partFormat, SavedAt: p.renewed, Sites: []robotstxt.SavedSite{{Key: "a.example",
			Versions: []robotstxt.SavedVersion{{Sum: named, Access: "available"}}}}}
		if p.escalated {
			doc.Escalated = []enforce.EscalatedCrawler{{Site: "a.example", Token: "gptbot", Since: old, Until: now.Add(time.Hour)}}
		}
		b, _ := json.Marshal(doc)
		storage.Store(ctx, partDocKey(testState, name), b)
	}
	// A part of settings no instance uses any more goes too.
	storeLease(ctx, storage, "otherstate", "gone", &lease{Nonce: "x", Renewed: old, Period: 1000})
	n, err := purgeParts(ctx, storage, testState, "self", now)
	if err != nil || n != 2 {
		t.Errorf("purgeParts = %d, %v; want 2", n, err)
	}
	if _, err := storage.Load(ctx, leaseKey("otherstate", "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the part of another state gone a day: %v, want it purged", err)
	}
	for name, p := range parts {
		_, err := storage.Load(ctx, leaseKey(testState, name))
		if gone := errors.Is(err, fs.ErrNotExist); gone != p.purged {
			t.Errorf("part %s purged %v, want %v", name, gone, p.purged)
		}
	}

	for _, body := range []string{"named", "unnamed-old", "unnamed-new"} {
		storage.Store(ctx, bodyKey(sha256Hex(body)), []byte(body))
	}
	for _, body := range []string{"named", "unnamed-old"} {
		os.Chtimes(storage.Filename(bodyKey(sha256Hex(body))), old, old)
	}
	if n, err := pruneBodies(ctx, storage, now); err != nil || n != 1 {
		t.Errorf("pruneBodies = %d, %v; want 1", n, err)
	}
	for body, kept := range map[string]bool{"named": true, "unnamed-old": false, "unnamed-new": true} {
		_, err := storage.Load(ctx, bodyKey(sha256Hex(body)))
		if (err == nil) != kept {
			t.Errorf("body %s kept %v, want %v", body, err == nil, kept)
		}
	}
	// A document that cannot be read stops the prune: the bodies it
	// names are not known.
	storage.Store(ctx, partDocKey(testState, "live"), []byte("{"))
	if n, err := pruneBodies(ctx, storage, now.Add(2*pruneGrace)); err == nil || n != 0 {
		t.Errorf("pruneBodies with an unreadable part = %d, %v; want none and an error", n, err)
	}
}

// The documents the view holds are bounded in all: past maxFleetBytes,
// the parts renewed first are left out.
func TestFleetViewBytes(t *testing.T) {
	r := newFleetReader(newTestStorage(t), testState)
	now := time.Now()
	const size = 10 << 20
	for i := range 10 {
		r.parts[fmt.Sprintf("p%d", i)] = &fleetPart{lease: lease{Renewed: now.Add(-time.Duration(i) * time.Minute)}, size: size}
	}
	r.bound()
	if len(r.parts) != maxFleetBytes/size || r.parts["p0"] == nil || r.parts["p9"] != nil {
		t.Errorf("the view holds %d parts of %d octets, want the %d renewed last", len(r.parts), size, maxFleetBytes/size)
	}
}

// What an instance writes is bounded by its tables' bounds: a document of
// a state at every bound (max_hosts sites of MaxVersions versions, the
// served table's pairs of MaxServedVersions versions, both ledgers of
// escalations, each with the longest target) is well under what a reader
// reads back.
func TestPartDocumentBound(t *testing.T) {
	now := time.Now()
	doc := savedState{Format: partFormat, SavedAt: now}
	for i := range robotstxt.DefaultMaxHosts {
		site := robotstxt.SavedSite{Key: fmt.Sprintf("site%05d.example.com", i), LastUsed: now, Uses: 15}
		for range robotstxt.MaxVersions {
			site.Versions = append(site.Versions, robotstxt.SavedVersion{Sum: sha256Hex("x"), Access: "available",
				Source: "https://" + site.Key + "/robots.txt", HTTPStatus: 200, FetchedAt: now, ChangedAt: now, CheckedAt: now, ReplacedAt: now})
		}
		doc.Sites = append(doc.Sites, site)
	}
	for i := range enforce.DefaultMaxServed {
		p := enforce.SavedServed{Site: "https://site00000.example.com", Kind: "client", Name: fmt.Sprintf("2001:db8:%x:: %s", i, strings.Repeat("b", 64))}
		for range enforce.MaxServedVersions {
			p.Versions = append(p.Versions, enforce.ServedVersion{Hash: "0123456789abcdef", At: now})
		}
		doc.Served = append(doc.Served, p)
	}
	for i := range 2 * enforce.DefaultMaxViolators {
		doc.Escalated = append(doc.Escalated, enforce.EscalatedCrawler{Site: "https://site00000.example.com", Token: strings.Repeat("b", 64),
			IP: fmt.Sprintf("2001:db8:%x::", i), Since: now, Until: now, URI: "/" + strings.Repeat("p", 511),
			Versions: []string{"0123456789abcdef", "fedcba9876543210"}})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a document at every bound: %.1f MiB", float64(len(b))/(1<<20))
	if len(b) > maxSavedState/2 {
		t.Errorf("a document at every bound is %d octets, more than half of the %d a reader reads back", len(b), maxSavedState)
	}
}

// Names read from the storage's listings are used in keys only when they
// can name nothing but a part.
func TestValidPartName(t *testing.T) {
	for name, want := range map[string]bool{
		partBaseName("0f8fad5b-d9cb-469f-a165-70867728950e"): true,
		partBaseName("x") + "_2":                             true,
		"0123456789abcdef0123456789abcdef":                   true,
		"":                                                   false, ".": false, "..": false, "a/b": false, "a b": false, "a\\b": false,
		strings.Repeat("a", 256): false,
	} {
		if got := validPartName(name); got != want {
			t.Errorf("validPartName(%q) = %v, want %v", name, got, want)
		}
	}
}
