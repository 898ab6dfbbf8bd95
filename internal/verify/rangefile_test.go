package verify

import (
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fileEvents records the list events a verifier tells.
type fileEvents struct {
	mu     sync.Mutex
	events []Event
}

func (f *fileEvents) add(ev Event) {
	if ev.Kind == EventListLoaded || ev.Kind == EventListFailed {
		f.mu.Lock()
		f.events = append(f.events, ev)
		f.mu.Unlock()
	}
}

// count returns how many events of kind were told.
func (f *fileEvents) count(kind EventKind) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, ev := range f.events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// last returns the last event told.
func (f *fileEvents) last() Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) == 0 {
		return Event{}
	}
	return f.events[len(f.events)-1]
}

// rewrite writes body to path with the modification time mod.
func rewrite(t *testing.T, path, body string, mod time.Time) {
	t.Helper()
	// Written aside and renamed into place, as an operator's tooling
	// does: the periodic look never reads a file half written, whose
	// partial body would be a version of its own.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mod, mod); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A local list file is looked at every fileCheckInterval and read again
// when it changed; one that no longer parses keeps the last good list in
// force, says so once per version (naming the file and the line), and
// says so again when it reads; RecheckFiles reads it at once, even an
// edit that kept its size and modification time, which the periodic look
// cannot see.
func TestRangeFileReread(t *testing.T) {
	const interval = 20 * time.Millisecond
	path := writeFile(t, "mybot.json", rangeJSON("192.0.2.0/24"))
	t0 := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, t0, t0); err != nil {
		t.Fatal(err)
	}
	var ev fileEvents
	v := newTestVerifier(t, Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true, fileCheckInterval: interval,
		RangeOverrides: []RangeOverride{{Token: "MyBot", Source: path}}, OnEvent: ev.add})
	claim := func(addr string) Outcome { return v.Verify("MyBot", netip.MustParseAddr(addr), nil).Outcome }
	if a, b := claim("192.0.2.7"), claim("198.51.100.7"); a != Verified || b != Forged {
		t.Fatalf("first file: %v and %v, want verified and forged", a, b)
	}

	// An edit is in force within a few intervals.
	rewrite(t, path, rangeJSON("198.51.100.0/24"), t0.Add(time.Minute))
	waitUntil(t, func() bool { return claim("198.51.100.7") == Verified })
	if got := claim("192.0.2.7"); got != Forged {
		t.Errorf("after the edit, the old range: %v, want forged", got)
	}
	loaded := ev.count(EventListLoaded)
	time.Sleep(5 * interval) // looks at an unchanged file read nothing
	if n := ev.count(EventListLoaded); n != loaded {
		t.Errorf("an unchanged file was loaded %d more times", n-loaded)
	}

	// A corrupt file: the last good list stays, and it is told once.
	rewrite(t, path, "{\n  \"prefixes\": [\n    {\"ipv4Prefix\": \"203.0.113.0/24\",}\n]}", t0.Add(2*time.Minute))
	waitUntil(t, func() bool { return ev.count(EventListFailed) == 1 })
	failed := ev.last()
	if failed.Kind != EventListFailed || !failed.Kept || !strings.Contains(failed.Err.Error(), path+":3") {
		t.Errorf("the corrupt file's event: %+v (err %v), want failed, kept, naming %s:3", failed, failed.Err, path)
	}
	if got := claim("198.51.100.7"); got != Verified {
		t.Errorf("with a corrupt file, the last good range: %v, want verified", got)
	}
	time.Sleep(5 * interval)
	if n := ev.count(EventListFailed); n != 1 {
		t.Errorf("a corrupt file was told %d times, want once for its version", n)
	}

	// Good again: told, and in force.
	rewrite(t, path, rangeJSON("203.0.113.0/24"), t0.Add(3*time.Minute))
	waitUntil(t, func() bool { return claim("203.0.113.7") == Verified })
	if e := ev.last(); e.Kind != EventListLoaded {
		t.Errorf("the file reads again: last event %+v, want loaded", e)
	}

	// An edit that keeps the size and the modification time: the
	// periodic look cannot see it; RecheckFiles reads it.
	rewrite(t, path, rangeJSON("203.0.114.0/24"), t0.Add(3*time.Minute))
	time.Sleep(5 * interval)
	if got := claim("203.0.114.7"); got != Forged {
		t.Fatalf("an edit of the same size and time, before RecheckFiles: %v; the test no longer shows what RecheckFiles adds", got)
	}
	if err := v.RecheckFiles(); err != nil {
		t.Fatalf("RecheckFiles() = %v", err)
	}
	if a, b := claim("203.0.114.7"), claim("203.0.113.7"); a != Verified || b != Forged {
		t.Errorf("after RecheckFiles: the new range %v, the old %v; want verified and forged", a, b)
	}

	// RecheckFiles of a corrupt file: the error names the file and the
	// line; the last good list stays.
	rewrite(t, path, "{\"prefixes\": [{\"ipv4Prefix\": \"0.0.0.0/0\"}]}", t0.Add(4*time.Minute))
	err := v.RecheckFiles()
	if err == nil || !strings.Contains(err.Error(), path+":1") || !strings.Contains(err.Error(), "implausibly wide") {
		t.Errorf("RecheckFiles() of a corrupt file = %v, want an error naming %s:1", err, path)
	}
	if got := claim("203.0.114.7"); got != Verified {
		t.Errorf("after a failed RecheckFiles, the last good range: %v, want verified", got)
	}
	// Back to the list in force before it broke: told as loaded again,
	// though nothing changes.
	rewrite(t, path, rangeJSON("203.0.114.0/24"), t0.Add(5*time.Minute))
	if err := v.RecheckFiles(); err != nil {
		t.Fatalf("RecheckFiles() = %v", err)
	}
	if e := ev.last(); e.Kind != EventListLoaded {
		t.Errorf("the file reads again, as before it broke: last event %+v, want loaded", e)
	}
	// A removed file is a failure too, and keeps the list.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := v.RecheckFiles(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("RecheckFiles() of a removed file = %v, want an error naming it", err)
	}
	if got := claim("203.0.114.7"); got != Verified {
		t.Errorf("after the file was removed, the last good range: %v, want verified", got)
	}
}
