package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Two instances that mount one data directory share Caddy's instance id.
// The second says so at error level, and writes a part of its own; each
// restores its own state when restarted, after a crash (SIGKILL) or a
// stop, and never the other's: an escalation each began right before a
// crash is there after it, and the other's is not. Without distributed,
// so that nothing reaches an instance but its own part.
func TestFleetSharedDataDirectory(t *testing.T) {
	robots := fleetOrigin(t, fleetV1)
	storage, data := t.TempDir(), t.TempDir()
	setup := fleetSetup{storage: storage, data: data, origin: robots.origin.hostPort(), options: "violators block for 1h"}
	d1 := fleetStart(t, "D1", setup)
	d2 := fleetStart(t, "D2", setup)
	const shared = "another live caddy holds this instance's robots_enforce state part: two instances share one identity"
	if lines := fleetLines(d2, shared); len(lines) != 1 || lines[0].str("level") != "error" || lines[0].str("fix") == "" {
		t.Errorf("D2's lines about its identity: %s\nwant one error, with what to do", e2eDump(lines))
	}
	if lines := fleetLines(d1, shared); len(lines) != 0 {
		t.Errorf("D1, first, says it shares its identity: %s", e2eDump(lines))
	}

	// Each fetches the site's robots.txt, and writes its part with the
	// new version's body at once: what follows is written for the
	// escalation alone.
	fleetExpect(t, d1, "D1", "/public", e2eBrowser, "192.0.2.9", http.StatusOK)
	fleetExpect(t, d2, "D2", "/public", e2eBrowser, "192.0.2.9", http.StatusOK)
	time.Sleep(time.Second)

	const ip1, ip2 = "198.51.100.1", "198.51.100.2"
	rogue1, rogue2 := "RogueOne/1.0 (+https://one.example)", "RogueTwo/1.0 (+https://two.example)"
	fleetExpect(t, d1, "D1", "/private/a", rogue1, ip1, http.StatusForbidden)
	fleetExpect(t, d2, "D2", "/private/a", rogue2, ip2, http.StatusForbidden)
	began := time.Now()
	check := func(when string) {
		t.Helper()
		fleetExpect(t, d1, "D1 "+when, "/public", rogue1, ip1, http.StatusForbidden) // its own escalation
		fleetExpect(t, d1, "D1 "+when, "/public", rogue2, ip2, http.StatusOK)        // never the other's
		fleetExpect(t, d2, "D2 "+when, "/public", rogue2, ip2, http.StatusForbidden)
		fleetExpect(t, d2, "D2 "+when, "/public", rogue1, ip1, http.StatusOK)
	}
	check("before a restart")

	// D2 crashes at once: its escalation was written when it began, not
	// with the next minute's save.
	fleetWaitStored(t, storage, "roguetwo")
	if took := time.Since(began); took > fleetSlack {
		t.Errorf("D2's escalation reached the storage %v after it began, want at once", took)
	}
	fleetRestart(d2, true)
	check("after D2 crashed and restarted")
	fleetRestart(d1, false)
	check("after D1 stopped and started")
	fleetRestart(d2, false)
	check("after D2 stopped and started")

	parts, _ := filepath.Glob(filepath.Join(storage, "robots_enforce", "fleet", "*", "*", "lease.json"))
	if len(parts) != 2 {
		t.Errorf("parts in the storage: %v, want two, one per instance", parts)
	}
	if _, err := os.Stat(filepath.Join(data, "caddy", "instance.uuid")); err != nil {
		t.Errorf("the shared data directory has no instance id: %v", err)
	}
}
