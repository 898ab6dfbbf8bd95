package integration

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fleetFailFor is how long the storage fails in TestFleetStorageFails:
// several read and write intervals.
const fleetFailFor = 2 * time.Second

// A storage that fails under load fails no request: with the storage read
// only, and then gone (a file where its directory was), two instances
// under load answer every request as before, and their metrics and a log
// line say the view, or the part, is stale; once the storage is back,
// they say it is current again.
func TestFleetStorageFails(t *testing.T) {
	robots := fleetOrigin(t, fleetV1)
	storage := t.TempDir()
	t.Cleanup(func() { fleetReadOnly(storage, false) }) // before the directory is removed
	setup := fleetSetup{storage: storage, origin: robots.origin.hostPort(), options: fleetDistributed}
	nodes := []*hxCaddy{fleetStart(t, "E1", setup), fleetStart(t, "E2", setup)}
	for i, n := range nodes {
		fleetWaitView(t, n, fmt.Sprintf("E%d", i+1), 1)
	}

	load := fleetLoad(nodes)
	defer load.stop()
	fail := func(name string, breakIt, repair func() error, op, metric string) {
		t.Helper()
		errs0, _ := fleetMetric(nodes[0], "caddy_robots_enforce_storage_errors_total", `op="`+op+`"`)
		if err := breakIt(); err != nil {
			t.Skipf("%s: %v", name, err)
		}
		time.Sleep(fleetFailFor)
		errs, _ := fleetMetric(nodes[0], "caddy_robots_enforce_storage_errors_total", `op="`+op+`"`)
		age, _ := fleetMetric(nodes[0], metric, "")
		stale := fleetLines(nodes[0], "robots.txt fleet view is stale: the storage fails")
		if err := repair(); err != nil {
			t.Fatalf("%s: repairing the storage: %v", name, err)
		}
		if errs <= errs0 || age < fleetFailFor.Seconds()/2 {
			t.Errorf("%s: %s errors %v (before %v), %s %v; want more errors, and an age past %v", name, op, errs, errs0, metric, age, fleetFailFor/2)
		}
		if len(stale) == 0 || stale[len(stale)-1].str("op") != op || stale[len(stale)-1].str("level") != "warn" {
			t.Errorf("%s: the lines saying the view is stale: %s", name, e2eDump(stale))
		}
		if !e2eEventually(func() bool { a, _ := fleetMetric(nodes[0], metric, ""); return a < 3*fleetInterval.Seconds() }) {
			t.Errorf("%s: %s stays past %v once the storage is back", name, metric, 3*fleetInterval)
		}
		if !e2eEventually(func() bool { return len(fleetLines(nodes[0], "robots.txt fleet view is current again")) > 0 }) {
			t.Errorf("%s: no line says the view is current again", name)
		}
	}

	// Read only: the others' parts are read, this instance's cannot be
	// written.
	fail("read only", func() error { return fleetReadOnly(storage, true) }, func() error { return fleetReadOnly(storage, false) },
		"write", "caddy_robots_enforce_fleet_part_age_seconds")
	// Gone: a file where the directory was, which no write can make a
	// directory again.
	gone := storage + ".gone"
	fail("gone", func() error {
		if err := os.Rename(storage, gone); err != nil {
			return err
		}
		return os.WriteFile(storage, []byte("not a directory"), 0o600)
	}, func() error {
		if err := os.Remove(storage); err != nil {
			return err
		}
		return os.Rename(gone, storage)
	}, "read", "caddy_robots_enforce_fleet_view_age_seconds")

	sent, failed, slowest, examples := load.stop()
	t.Logf("%d requests under load, %d failed, the slowest %v", sent, failed, slowest.Round(time.Millisecond))
	if failed > 0 || sent == 0 {
		t.Errorf("%d of %d requests failed while the storage did: %v", failed, sent, examples)
	}
}

// fleetReadOnly makes dir and what it holds read only, or writable again:
// by its mode, or, for root, whom modes do not stop, by the immutable
// attribute (chattr).
func fleetReadOnly(dir string, on bool) error {
	if os.Geteuid() != 0 {
		mode := "a-w"
		if !on {
			mode = "u+w"
		}
		return exec.Command("chmod", "-R", mode, dir).Run()
	}
	flag := "+i"
	if !on {
		flag = "-i"
	}
	if out, err := exec.Command("chattr", "-R", flag, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("chattr %s: %v: %s (a file system without the immutable attribute?)", flag, err, out)
	}
	return nil
}

// fleetLoadRun is a load of requests round-robin over a fleet: a browser
// and a crawler on an allowed page, the crawler on a disallowed one.
type fleetLoadRun struct {
	done         chan struct{}
	wg           sync.WaitGroup
	sent, failed atomic.Int64
	slowest      atomic.Int64
	mu           sync.Mutex
	examples     []string
	stopOnce     sync.Once
}

// fleetLoadWorkers is how many clients the load runs at once.
const fleetLoadWorkers = 4

// fleetLoad starts a load on nodes until stop.
func fleetLoad(nodes []*hxCaddy) *fleetLoadRun {
	l := &fleetLoadRun{done: make(chan struct{})}
	reqs := []struct {
		path, ua string
		want     int
	}{
		{"/public", e2eBrowser, http.StatusOK},
		{"/public", fleetProbe, http.StatusOK},
		{"/private/x", fleetProbe, http.StatusForbidden},
	}
	for w := range fleetLoadWorkers {
		l.wg.Go(func() {
			for i := w; ; i++ {
				select {
				case <-l.done:
					return
				default:
				}
				r := reqs[i%len(reqs)]
				n := nodes[i%len(nodes)]
				start := time.Now()
				got, err := fleetGet(n, r.path, r.ua, fmt.Sprintf("192.0.2.%d", 10+w))
				took := time.Since(start)
				for old := l.slowest.Load(); int64(took) > old && !l.slowest.CompareAndSwap(old, int64(took)); old = l.slowest.Load() {
				}
				l.sent.Add(1)
				if err != nil || got != r.want {
					l.failed.Add(1)
					l.mu.Lock()
					if len(l.examples) < 5 {
						l.examples = append(l.examples, fmt.Sprintf("GET %s = %d (%v), want %d", r.path, got, err, r.want))
					}
					l.mu.Unlock()
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	return l
}

// stop ends the load and returns what it sent, how many failed, the
// slowest, and a few failures.
func (l *fleetLoadRun) stop() (sent, failed int64, slowest time.Duration, examples []string) {
	l.stopOnce.Do(func() { close(l.done) })
	l.wg.Wait()
	return l.sent.Load(), l.failed.Load(), time.Duration(l.slowest.Load()), l.examples
}
