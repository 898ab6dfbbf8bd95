package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// e2eRecord is one JSON log line.
type e2eRecord map[string]any

// str returns field k, which must be a string.
func (r e2eRecord) str(k string) string {
	s, _ := r[k].(string)
	return s
}

// lines waits until the log file name in the test's directory holds at
// least n lines with logger, then returns all of them. Log lines of a
// request may be written after its response: the access log is.
func (c *e2eCaddy) lines(name, logger string, n int) []e2eRecord {
	c.t.Helper()
	return c.linesWhere(name, logger, n, func(e2eRecord) bool { return true })
}

// linesWhere is lines counting and returning only the lines keep keeps.
func (c *e2eCaddy) linesWhere(name, logger string, n int, keep func(e2eRecord) bool) []e2eRecord {
	c.t.Helper()
	deadline := time.Now().Add(e2eTimeout)
	for {
		var recs []e2eRecord
		for _, rec := range c.readLog(name, logger) {
			if keep(rec) {
				recs = append(recs, rec)
			}
		}
		if len(recs) >= n {
			return recs
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: %d lines of logger %s after %v, want %d:\n%s", name, len(recs), logger, e2eTimeout, n, e2eDump(recs))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// records returns the compliance records written so far, waiting for n:
// the lines of the handler's logger that are records, not those of its
// robots_txt logger.
func (c *e2eCaddy) records(n int) []e2eRecord {
	c.t.Helper()
	return c.linesWhere("robots.log", "http.handlers.robots_enforce", n, func(rec e2eRecord) bool {
		return rec.str("msg") == "robots.txt decision"
	})
}

// e2eAudit reads the compliance records c wrote, robots.log, with the
// audit and returns its report.
func e2eAudit(t *testing.T, c *e2eCaddy) *audit.Report {
	t.Helper()
	a := audit.New(audit.Options{})
	if _, err := a.ReadFile(filepath.Join(c.dir, "robots.log")); err != nil {
		t.Fatalf("auditing robots.log: %v", err)
	}
	return a.Report()
}

// readLog reads the log file name and returns its lines of logger.
func (c *e2eCaddy) readLog(name, logger string) []e2eRecord {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.dir, name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		c.t.Fatalf("reading %s: %v", name, err)
	}
	var recs []e2eRecord
	for line := range bytes.Lines(data) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break // being written
		}
		var rec e2eRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			c.t.Fatalf("%s: a line that is not JSON: %v\n%s", name, err, line)
		}
		if l := rec.str("logger"); l == logger || strings.HasPrefix(l, logger+".") {
			recs = append(recs, rec)
		}
	}
	return recs
}

// dumpLog logs the end of the log file name, to explain a failure.
func (c *e2eCaddy) dumpLog(name string) {
	data, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		return
	}
	if len(data) > 8000 {
		data = data[len(data)-8000:]
	}
	c.t.Logf("end of %s:\n%s", name, data)
}

func e2eDump(recs []e2eRecord) string {
	var b strings.Builder
	for _, r := range recs {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// e2eUpstream is an origin server that answers with its routes, keyed by
// "host path" or, when no such key exists, by path alone, and counts the
// requests it receives. Unknown paths get 200 "page <path>".
type e2eUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	hits   map[string]int    // "host path" → requests
	agents map[string]string // "host path" → the last User-Agent
}

// e2eRoute answers one path of an e2eUpstream.
type e2eRoute func(w http.ResponseWriter, r *http.Request)
