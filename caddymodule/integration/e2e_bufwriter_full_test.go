package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// A disk that fills, for robots_buffered: test_full_disk is a log writer
// registered by this test file only, a file whose free space the test
// sets, as a small disk that fills: a write past the space writes what
// fits, and fails with ENOSPC, as write(2) does.

func init() {
	caddy.RegisterModule(fullDiskWriter{})
}

// fullDiskWriter is the module: "output test_full_disk <file>".
type fullDiskWriter struct {
	Filename string `json:"filename,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (fullDiskWriter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.logging.writers.test_full_disk", New: func() caddy.Module { return new(fullDiskWriter) }}
}

// UnmarshalCaddyfile reads "test_full_disk <file>".
func (w *fullDiskWriter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if !d.Args(&w.Filename) {
		return d.ArgErr()
	}
	return nil
}

func (w *fullDiskWriter) String() string    { return "test_full_disk:" + w.Filename }
func (w *fullDiskWriter) WriterKey() string { return "test_full_disk:" + w.Filename }

// OpenWriter opens the file for appending, on the disk of its name.
func (w *fullDiskWriter) OpenWriter() (io.WriteCloser, error) {
	f, err := os.OpenFile(w.Filename, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &fullDiskFile{f: f, disk: diskOf(w.Filename)}, nil
}

// fullDisk is the free space of one file's disk; negative is unlimited.
type fullDisk struct {
	mu     sync.Mutex
	free   int64
	failed int // writes that did not fit
}

var (
	disksMu sync.Mutex
	disks   = map[string]*fullDisk{}
)

// diskOf returns the disk of file name, unlimited until the test says.
func diskOf(name string) *fullDisk {
	disksMu.Lock()
	defer disksMu.Unlock()
	if disks[name] == nil {
		disks[name] = &fullDisk{free: -1}
	}
	return disks[name]
}

func (d *fullDisk) setFree(n int64) {
	d.mu.Lock()
	d.free = n
	d.mu.Unlock()
}

func (d *fullDisk) failures() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failed
}

// fullDiskFile writes what fits on its disk.
type fullDiskFile struct {
	f    *os.File
	disk *fullDisk
}

func (w *fullDiskFile) Write(p []byte) (int, error) {
	d := w.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.free < 0 || int64(len(p)) <= d.free {
		n, err := w.f.Write(p)
		if d.free >= 0 {
			d.free -= int64(n)
		}
		return n, err
	}
	n, err := w.f.Write(p[:d.free])
	d.free -= int64(n)
	d.failed++
	if err == nil {
		err = &os.PathError{Op: "write", Path: w.f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

func (w *fullDiskFile) Close() error { return w.f.Close() }

// bwFullSites denies GPTBot everything, and serves metrics on PORT1.
const bwFullSites = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		verify off
		source inline <<TXT
			User-agent: GPTBot
			Disallow: /
			TXT
	}
	respond "page"
}
http://:<PORT1> {
	bind 127.0.0.1
	metrics
}
`

// bwFullLines reads path and returns its decisions' URIs and the lines
// that are not JSON objects. The file must end with a whole line.
func bwFullLines(t *testing.T, path string) (uris []string, cut []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		return nil, []string{"(the file ends within a line)"}
	}
	for line := range bytes.Lines(data) {
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil {
			cut = append(cut, string(line))
			continue
		}
		if rec[record.Msg] == record.MsgDecision {
			uri, _ := rec["uri"].(string)
			uris = append(uris, uri)
		}
	}
	return uris, cut
}

// When the disk fills in the middle of a batch, the records cut short are
// dropped whole and counted: the cut line stands alone in the file, and
// the records written once space returns are whole, each on its own line,
// not run into it; the audit reads them and skips the cut line. The log
// says how many were dropped, and the metrics endpoint counts them.
func TestE2EBufferedFullDisk(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.log")
	global := strings.ReplaceAll(`log full_disk {
		output robots_buffered {
			flush_interval 20ms
			output test_full_disk <FILE>
		}
		format json
		include http.handlers.robots_enforce
	}`, "<FILE>", filepath.ToSlash(full))
	c := e2eStart(t, 2, bwFullSites, map[string]string{"<GLOBAL>": global})
	disk := diskOf(filepath.ToSlash(full))
	deny := func(path string) {
		t.Helper()
		if r := c.get(0, "", path, e2eGPTBot); r.status != http.StatusForbidden {
			t.Fatalf("GET %s by GPTBot = %d, want 403", path, r.status)
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(e2eTimeout); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, e2eTimeout)
			}
		}
	}
	hasURI := func(uri string) func() bool {
		return func() bool { uris, _ := bwFullLines(t, full); return slices.Contains(uris, uri) }
	}

	deny("/page/0")
	waitFor("the first record written", hasURI("/page/0"))
	// The disk has room for part of one record: the next batch is cut.
	disk.setFree(300)
	for i := 1; i <= 3; i++ {
		deny(fmt.Sprintf("/page/%d", i))
	}
	waitFor("a write that did not fit", func() bool { return disk.failures() > 0 })
	time.Sleep(100 * time.Millisecond) // the three records' batches, all failing
	// Space returns.
	disk.setFree(-1)
	deny("/page/4")
	deny("/page/5")
	waitFor("the record after space returned", hasURI("/page/5"))

	uris, cut := bwFullLines(t, full)
	if want := []string{"/page/0", "/page/4", "/page/5"}; !slices.Equal(uris, want) {
		t.Errorf("full.log holds the records of %v, want %v: the records cut by the full disk dropped whole, "+
			"the ones after it whole\ncut lines: %q", uris, want, cut)
	}
	if len(cut) != 1 || len(cut[0]) != 301 || !strings.HasPrefix(cut[0], `{"level":`) {
		t.Errorf("full.log's lines that are not records: %q, want one, the 300 octets the disk took and a newline", cut)
	}
	a := audit.New(audit.Options{})
	counts, err := a.ReadFile(full)
	if err != nil {
		t.Fatalf("auditing full.log: %v", err)
	}
	var skipped int64
	for _, n := range counts.Skipped {
		skipped += n
	}
	if counts.Records != 3 || skipped != 1 {
		t.Errorf("the audit of full.log: %d records, %d lines skipped (%v); want 3 and 1", counts.Records, skipped, counts.Skipped)
	}

	// What the operator sees: a warning when it happened, a line when it
	// writes again, with the count, and the counter.
	var warned, again e2eRecord
	waitFor("the log's lines", func() bool {
		warned, again = nil, nil
		for _, rec := range c.readLog("caddy.log", "") {
			if strings.HasPrefix(rec.str("msg"), "robots_buffered") && rec.str("writer") == "test_full_disk:"+filepath.ToSlash(full) {
				switch rec.str("level") {
				case "warn":
					warned = rec
				case "info":
					again = rec
				}
			}
		}
		return warned != nil && again != nil
	})
	if total, _ := again["dropped_total"].(float64); total != 3 {
		t.Errorf("the line on writing again: dropped_total %v, want 3\n%s", again["dropped_total"], e2eDump([]e2eRecord{warned, again}))
	}
	series := `caddy_robots_enforce_buffered_entries_dropped_total{writer="test_full_disk:` + filepath.ToSlash(full) + `"}`
	if n := e2eMetric(t, c, series); n != 3 {
		t.Errorf("%s = %v, want 3", series, n)
	}
}
