package audit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// TestDuplicateChecksBound checks that past the denials checked for
// copies, later denials are counted as read, and the report says so.
func TestDuplicateChecksBound(t *testing.T) {
	v := hashOf(mergeV1)
	l := &recLog{t: t}
	for i := range 6 {
		l.decision(float64(i), recDenial(mergeSite, "BadBot", "", "192.0.2.2", badUA, fmt.Sprintf("/private/%d", i), record.Violation, "/private/", 2, v, v))
	}
	log := l.String()
	a := New(Options{})
	a.maxDuplicates = 8
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(log)), nil }
	if err := a.ReadInputs([]Input{{Name: "a.log", Open: open}, {Name: "copy.log", Open: open}}, nil); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	// Eight of the twelve denials were checked, a.log's six and two of
	// its copy's: those two left out; the other four counted as read.
	if r.Merge.DuplicatesUnchecked != 4 || r.Merge.Duplicates != 2 || rowOf(r, "BadBot").Violations != 10 {
		t.Errorf("unchecked %d, duplicates %d, violations %d; want 4, 2, 10", r.Merge.DuplicatesUnchecked, r.Merge.Duplicates, rowOf(r, "BadBot").Violations)
	}
	if !strings.Contains(strings.Join(r.Notes(), "\n"), "4 denials were past the") {
		t.Errorf("notes: %q", r.Notes())
	}
}

// TestServeBounds checks a key's serves past its bounds: past
// maxServeEntries (version, instance, address), the last entry counts the
// rest under OtherClients, keeping what they cover; past maxServeSpans,
// the closest spans are joined, covering more, never less.
func TestServeBounds(t *testing.T) {
	var k serveKey
	day := int64(fetchCacheTime)
	for i := range maxServeEntries + 4 {
		k.add(&serving{at: int64(i) * 10, version: "v1", client: []byte(fmt.Sprintf("192.0.2.%d", i))})
	}
	last := k.entries[len(k.entries)-1]
	if len(k.entries) != maxServeEntries || last.client != OtherClients || last.count != 5 || !last.covers(int64(maxServeEntries+3)*10+day) {
		t.Errorf("%d entries, the last %+v", len(k.entries), last)
	}
	var e serveEntry
	for i := range maxServeSpans + 3 { // serves three days apart: a span each
		e.spans = addSpan(e.spans, span{int64(i) * 3 * day, int64(i)*3*day + day})
	}
	if len(e.spans) != maxServeSpans {
		t.Errorf("%d spans, want %d", len(e.spans), maxServeSpans)
	}
	for i := range maxServeSpans + 3 {
		if at := int64(i)*3*day + day/2; !e.covers(at) {
			t.Errorf("the serve at day %d no longer covers its day", 3*i)
		}
	}
	// Serves read out of time order make the same spans.
	var f serveEntry
	for i := maxServeSpans + 2; i >= 0; i-- {
		f.spans = addSpan(f.spans, span{int64(i) * 3 * day, int64(i)*3*day + day})
	}
	if fmt.Sprint(f.spans) != fmt.Sprint(e.spans) {
		t.Errorf("in reverse: %v, want %v", f.spans, e.spans)
	}
}

// TestDetailBounds checks the bounds of a row's detail: a target cut and
// marked, User-Agents past maxUserAgents estimated, fetches past
// maxFetchesListed counted.
func TestDetailBounds(t *testing.T) {
	v := hashOf(mergeV1)
	l := &recLog{t: t}
	long := "/private/" + strings.Repeat("x", maxTargetLength)
	l.decision(1, recDenial(mergeSite, "BadBot", "", "192.0.2.2", badUA, long, record.Violation, "/private/", 2, v, v))
	for i := range maxUserAgents + 5 {
		l.decision(2, recDenial(mergeSite, "BadBot", "", "192.0.2.2", fmt.Sprintf("BadBot/%d", i), "/private/a", record.Violation, "/private/", 2, v, v))
	}
	// Five addresses of the row, each served 15 versions (credited to no
	// token): 75 fetches.
	for i := range 5 {
		ip := fmt.Sprintf("198.51.100.%d", i)
		l.decision(3, recDenial(mergeSite, "BadBot", "", ip, badUA, "/private/b", record.Violation, "/private/", 2, v, v))
		for j := range 15 {
			l.served(0, recServe(mergeSite, ip, badUA, fmt.Sprintf("%016x", j), []string{"BadBot"}, nil))
		}
	}
	r := onePassReport(t, Options{}, [2]string{"a.log", l.String()})
	c := rowOf(r, "BadBot")
	if q := c.ViolatingRequests[0]; !q.TargetCut || len(q.Target) != maxTargetLength {
		t.Errorf("the long target: cut %v, %d octets", q.TargetCut, len(q.Target))
	}
	estimated := 0
	for _, u := range c.UserAgents {
		if u.Error > 0 {
			estimated++
		}
	}
	if len(c.UserAgents) != maxUserAgents || estimated == 0 {
		t.Errorf("%d User-Agents, %d estimated", len(c.UserAgents), estimated)
	}
	if len(c.RobotsFetches) != maxFetchesListed || c.RobotsFetchesMore != 75-maxFetchesListed {
		t.Errorf("%d fetches listed, %d more; want %d, %d", len(c.RobotsFetches), c.RobotsFetchesMore, maxFetchesListed, 75-maxFetchesListed)
	}
}

// TestInstancesBound checks that instances past MaxInstances are counted
// as one, OtherInstance.
func TestInstancesBound(t *testing.T) {
	var b strings.Builder
	v := hashOf(mergeV1)
	for i := range MaxInstances + 3 {
		d := recDenial(mergeSite, "BadBot", "", "192.0.2.2", badUA, fmt.Sprintf("/private/%d", i), record.Violation, "/private/", 2, v, v)
		d.Instance = fmt.Sprintf("instance-%d", i)
		l := &recLog{t: t}
		l.decision(float64(i), d)
		b.WriteString(l.String())
	}
	r := mergedReport(t, Options{}, [2]string{"a.log", b.String()})
	if n := len(r.Merge.Instances); n != MaxInstances+1 || !strings.Contains(strings.Join(r.Merge.Instances, ","), OtherInstance) {
		t.Errorf("%d instances, want %d with %s", n, MaxInstances+1, OtherInstance)
	}
}

// TestTextSizeBound checks that a storage file larger than MaxTextSize is
// not read.
func TestTextSizeBound(t *testing.T) {
	dir := t.TempDir()
	big := "User-agent: *\n" + strings.Repeat("#", MaxTextSize)
	p := filepath.Join(dir, TextsDir, sumOf(big))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	texts, err := OpenTexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if vt, why := texts.Text(hashOf(big)); vt != nil || why != TextMissing || texts.Skipped != 1 {
		t.Errorf("a text of %d octets: %v, %q, skipped %d", len(big), vt != nil, why, texts.Skipped)
	}
}
