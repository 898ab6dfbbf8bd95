package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// The compliance records written through robots_buffered, Caddy's file
// writer inside it, as an operator configures it: every record reaches
// the file whole, one JSON object a line, in the order the handler wrote
// them, after the flush interval, across a reload, and when Caddy stops
// with records still buffered.

// bwSite denies GPTBot everything, from robots.txt given inline.
const bwSite = `
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
`

// bwGlobal is a log of the handler's lines written through robots_buffered
// to <FILE>, flushed every <INTERVAL>.
func bwGlobal(file, interval string) string {
	return strings.NewReplacer("<FILE>", file, "<INTERVAL>", interval).Replace(`log robots_buffered {
		output robots_buffered {
			flush_interval <INTERVAL>
			output file <FILE>
		}
		format json
		include http.handlers.robots_enforce
	}`)
}

// bwDecisions reads the log file path and returns the URIs of its
// compliance records, in order. The file must end with a whole line, and
// every line must be a JSON object: a record cut, or two run together,
// fails the test.
func bwDecisions(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("%s ends within a line: %.200q", path, data[max(len(data)-200, 0):])
	}
	var uris []string
	for line := range bytes.Lines(data) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%s: a line that is not one JSON object: %v\n%s", path, err, line)
		}
		if rec[record.Msg] == record.MsgDecision {
			uri, _ := rec["uri"].(string)
			uris = append(uris, uri)
		}
	}
	return uris
}

// bwDeny sends GPTBot's requests for /page/<from> … /page/<to-1>, each of
// which must be denied, and returns their paths.
func bwDeny(t *testing.T, get func(path string) (int, error), from, to int) []string {
	t.Helper()
	var paths []string
	for i := from; i < to; i++ {
		path := fmt.Sprintf("/page/%d", i)
		status, err := get(path)
		if err != nil || status != http.StatusForbidden {
			t.Fatalf("GET %s by GPTBot = %d, %v; want 403", path, status, err)
		}
		paths = append(paths, path)
	}
	return paths
}

// Records flushed every 200 ms arrive, all of them, as Caddy's file
// writer writes them to robots.log beside.
func TestE2EBufferedRecordsArrive(t *testing.T) {
	const n = 30
	c := e2eStart(t, 1, bwSite, map[string]string{"<GLOBAL>": bwGlobal("<DIR>/buffered.log", "200ms")})
	get := func(path string) (int, error) { return c.get(0, "", path, e2eGPTBot).status, nil }
	want := bwDeny(t, get, 0, n)
	direct := c.records(n)

	buffered := filepath.Join(c.dir, "buffered.log")
	var got []string
	for deadline := time.Now().Add(e2eTimeout); ; time.Sleep(20 * time.Millisecond) {
		if got = bwDecisions(t, buffered); len(got) >= n || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("buffered.log holds the records of %v, want %v", got, want)
	}
	var uris []string
	for _, rec := range direct {
		uris = append(uris, rec.str("uri"))
	}
	if !slices.Equal(uris, want) {
		t.Errorf("robots.log, which Caddy's file writer writes, holds the records of %v, want %v", uris, want)
	}
}

// Records still buffered when the configuration is reloaded, and when
// Caddy stops, are written: Caddy 2.11.9 closes no log writer, and the
// module's cleanup, which Caddy runs for the old configuration on a
// reload and for the last one on a stop, writes them. Between the two,
// the writer the reloaded configuration keeps (its options unchanged)
// buffers again.
func TestE2EBufferedReloadAndStop(t *testing.T) {
	const n = 20
	c := e2eStart(t, 1, bwSite, map[string]string{"<GLOBAL>": bwGlobal("<DIR>/buffered.log", "10s")})
	buffered := filepath.Join(c.dir, "buffered.log")
	get := func(path string) (int, error) { return c.getAcrossReload(0, "", path, e2eGPTBot).status, nil }
	// written checks that buffered.log holds the records of want, no more:
	// the others are still buffered. Only within the 10 s of the flush
	// interval; a slower run cannot tell.
	start := time.Now()
	written := func(step string, want []string) {
		t.Helper()
		if time.Since(start) > 8*time.Second {
			t.Logf("%s: %v since the first record, too close to the flush to check what is buffered", step, time.Since(start))
			return
		}
		if got := bwDecisions(t, buffered); !slices.Equal(got, want) {
			t.Fatalf("%s: buffered.log holds the records of %v, want %v", step, got, want)
		}
	}

	first := bwDeny(t, get, 0, n)
	c.records(n)
	written("after the requests", nil)
	c.load(bwSite)
	written("after the reload", first)
	second := bwDeny(t, get, n, 2*n)
	c.records(2 * n)
	written("after the requests of the new configuration", first)

	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	if got, want := bwDecisions(t, buffered), append(first, second...); !slices.Equal(got, want) {
		t.Errorf("after the stop, buffered.log holds the records of %v, want %v", got, want)
	}
}

// A caddy process sent SIGTERM with records buffered, as a service
// manager stops it, writes them before it exits.
func TestE2EBufferedFlushedOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a caddy binary")
	}
	t.Parallel()
	const n = 20
	buffered := filepath.Join(t.TempDir(), "buffered.log")
	c := hxStart(t, 1, bwSite, map[string]string{"<GLOBAL>": bwGlobal(filepath.ToSlash(buffered), "10s")})
	get := func(path string) (int, error) {
		r, err := c.get(0, "", path, e2eGPTBot)
		return r.status, err
	}
	start := time.Now()
	want := bwDeny(t, get, 0, n)
	if got := bwDecisions(t, buffered); len(got) > 0 && time.Since(start) < 8*time.Second {
		t.Fatalf("%d records written within the flush interval, want them still buffered", len(got))
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(hxStopTimeout):
		t.Fatalf("caddy did not exit within %v of SIGTERM", hxStopTimeout)
	}
	if !c.state.Success() {
		t.Errorf("caddy exited with %v after SIGTERM, want success", c.state)
	}
	if got := bwDecisions(t, buffered); !slices.Equal(got, want) {
		t.Errorf("after SIGTERM, buffered.log holds the records of %v, want %v", got, want)
	}
}
