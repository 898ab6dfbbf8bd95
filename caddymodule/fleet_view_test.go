package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
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
	if err := a.st.persist.write(a.st, time.Second); err != nil {
		t.Fatal(err)
	}

	b := newTestInstance(t, storage, "id-b", persistV2)
	b.snapshot(t)
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
	if err := b.st.persist.write(b.st, time.Second); err != nil {
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
	n, err := purgeParts(ctx, storage, testState, "self", now)
	if err != nil || n != 1 {
		t.Errorf("purgeParts = %d, %v; want 1", n, err)
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
