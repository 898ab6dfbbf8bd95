package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"slices"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// Two versions of a site's robots.txt: v2 adds /drafts/.
const (
	mergeV1   = "User-agent: *\nDisallow: /private/\n"
	mergeV2   = "User-agent: *\nDisallow: /private/\nDisallow: /drafts/\n"
	mergeSite = "https://www.example.com"
	honestUA  = "HonestBot/1.0 (+https://honest.example)"
	badUA     = "BadBot/2.0 (+https://bad.example)"
	gptUA     = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
)

// hashOf names a body as records do: the first 16 hex digits of its
// SHA-256.
func hashOf(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])[:16]
}

// mergeLogs are the logs of two instances behind one balancer, across the
// change from v1 to v2 at +50 s; instance b joined after it and knows
// only v2, instance a knows both.
//
//   - HonestBot fetches v1 through a at +0 and asks for /drafts/x through
//     b at +100: b, which never served it, judges it against v2 alone, a
//     violation; it held v1, which allows it.
//   - BadBot fetches v2 through b at +60 and asks for /drafts/y through a
//     at +100: a, which never served it, judges it against both versions
//     in force, grace; it held v2 only, which disallows it.
//   - GPTBot (verified) never fetched robots.txt; a stranger claiming
//     GPTBot, whose fetch is credited to no one, fetched v1 through a at
//     +0. GPTBot's /drafts/z through b stays a violation.
//   - BadBot's /private/p?a=1 through a at +200 is recorded by a and,
//     0.2 s later, by b in front of it: one request.
func mergeLogs(t *testing.T) (a, b string) {
	v1, v2 := hashOf(mergeV1), hashOf(mergeV2)
	la, lb := &recLog{t: t}, &recLog{t: t}
	la.served(0, recServe(mergeSite, "192.0.2.1", honestUA, v1, []string{"HonestBot"}, []string{"HonestBot"}))
	la.served(0, recServe(mergeSite, "203.0.113.66", gptUA, v1, []string{"Mozilla", "compatible", "GPTBot"}, []string{"Mozilla", "compatible"}))
	lb.served(60, recServe(mergeSite, "192.0.2.2", badUA, v2, []string{"BadBot"}, []string{"BadBot"}))
	lb.decision(100, recDenial(mergeSite, "HonestBot", "unverified", "192.0.2.1", honestUA, "/drafts/x", record.Violation, "/drafts/", 3, v2, v2))
	la.decision(100, recDenial(mergeSite, "BadBot", "unverified", "192.0.2.2", badUA, "/drafts/y", record.GraceValue, "/drafts/", 3, v2, v1, v2))
	lb.decision(110, recDenial(mergeSite, "GPTBot", "verified", "20.171.207.10", gptUA, "/drafts/z", record.Violation, "/drafts/", 3, v2, v2))
	la.decision(200, recDenial(mergeSite, "BadBot", "unverified", "192.0.2.2", badUA, "/private/p?a=1", record.Violation, "/private/", 2, v2, v1, v2))
	lb.decision(200.2, recDenial(mergeSite, "BadBot", "unverified", "192.0.2.2", badUA, "/private/p?a=1", record.Violation, "/private/", 2, v2, v2))
	return la.String(), lb.String()
}

type mergeCounts struct{ violations, grace, protective int64 }

func countsOf(r *Report, agent string) mergeCounts {
	c := rowOf(r, agent)
	if c == nil {
		return mergeCounts{-1, -1, -1}
	}
	return mergeCounts{c.Violations, c.Grace, c.Protective}
}

// TestMergedRejudgement checks that the merged audit judges each denial
// against every version served to its crawler on any instance, by the
// handler's proof rules, with the versions' texts and without, and counts
// one request recorded by two instances once.
func TestMergedRejudgement(t *testing.T) {
	a, b := mergeLogs(t)
	logs := [][2]string{{"a.log", a}, {"b.log", b}}
	texts := NewTexts([]byte(mergeV1), []byte(mergeV2))
	for _, tt := range []struct {
		name  string
		r     *Report
		want  map[string]mergeCounts
		stats MergeStats
	}{
		// As written: each instance's own judgement, the request of two
		// instances twice.
		{"one pass", onePassReport(t, Options{}, logs...), map[string]mergeCounts{
			"HonestBot": {1, 0, 0}, "BadBot": {2, 1, 0}, "GPTBot": {1, 0, 0},
		}, MergeStats{}},
		{"merged, with the texts", mergedReport(t, Options{Texts: texts}, logs...), map[string]mergeCounts{
			"HonestBot": {0, 1, 0}, "BadBot": {2, 0, 0}, "GPTBot": {1, 0, 0},
		}, MergeStats{Merged: true, Rejudged: 2, ViolationsToGrace: 1, GraceToViolation: 1, Duplicates: 1}},
		// Without texts, what no record says of a version is unknown, and
		// allows: HonestBot is still grace (v1 unknown), BadBot's grace
		// stands (the record does not say which of its two versions
		// allowed it).
		{"merged, without texts", mergedReport(t, Options{}, logs...), map[string]mergeCounts{
			"HonestBot": {0, 1, 0}, "BadBot": {1, 1, 0}, "GPTBot": {1, 0, 0},
		}, MergeStats{Merged: true, Rejudged: 2, ViolationsToGrace: 1, Unknown: 2, Duplicates: 1}},
	} {
		for agent, want := range tt.want {
			if got := countsOf(tt.r, agent); got != want {
				t.Errorf("%s: %s violations, grace, protective = %v, want %v", tt.name, agent, got, want)
			}
		}
		got := tt.r.Merge
		got.Instances, got.Texts = nil, TextStats{}
		if !reflect.DeepEqual(got, tt.stats) {
			t.Errorf("%s: merge %+v, want %+v", tt.name, got, tt.stats)
		}
	}
	// The texts read, and the instances.
	r := mergedReport(t, Options{Texts: texts}, logs...)
	if !slices.Equal(r.Merge.Instances, []string{"a.log", "b.log"}) || !slices.Equal(r.Merge.Texts.Read, slices.Sorted(slices.Values([]string{hashOf(mergeV1), hashOf(mergeV2)}))) {
		t.Errorf("instances %v, texts read %v", r.Merge.Instances, r.Merge.Texts.Read)
	}
	// HonestBot's violation, now grace, was judged against what it was
	// served, v1.
	if h := rowOf(r, "HonestBot"); h == nil || len(h.ViolatingRequests) != 0 {
		t.Errorf("HonestBot lists violations: %+v", h)
	}
	bad := rowOf(r, "BadBot")
	if bad == nil || len(bad.ViolatingRequests) != 2 {
		t.Fatalf("BadBot: %+v", bad)
	}
	if v := bad.ViolatingRequests[0]; v.Target != "/drafts/y" || v.Recorded != record.GraceValue || v.Compliance != record.Violation ||
		!v.Served || !slices.Equal(v.JudgedVersions, []string{hashOf(mergeV2)}) || v.Instance != "a.log" {
		t.Errorf("BadBot's first violation: %+v", v)
	}
	if v := bad.ViolatingRequests[1]; v.Target != "/private/p?a=1" || v.Instance != "a.log" {
		t.Errorf("BadBot's second violation: %+v, want the record of a, the earlier", v)
	}
}

// TestMergedOrder checks that the merged audit's report does not depend
// on the order of the logs, nor on a copy of a log read beside it.
func TestMergedOrder(t *testing.T) {
	a, b := mergeLogs(t)
	texts := func() *Texts { return NewTexts([]byte(mergeV1), []byte(mergeV2)) }
	json := func(r *Report) string {
		r.Inputs, r.Total = nil, LineCounts{}
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	want := json(mergedReport(t, Options{Texts: texts()}, [2]string{"a.log", a}, [2]string{"b.log", b}))
	if got := json(mergedReport(t, Options{Texts: texts()}, [2]string{"b.log", b}, [2]string{"a.log", a})); got != want {
		t.Errorf("b then a differs from a then b:\n%s", lineDiff(want, got))
	}
	// A copy of a log, under another name: its records are the same
	// records, at the same times, so each request counts once.
	r := mergedReport(t, Options{Texts: texts()}, [2]string{"a.log", a}, [2]string{"b.log", b}, [2]string{"a-copy.log", a})
	if got := countsOf(r, "BadBot"); got != (mergeCounts{2, 0, 0}) || r.Merge.Duplicates != 3 {
		t.Errorf("with a copy of a.log: BadBot %v, duplicates %d; want {2 0 0}, 3", got, r.Merge.Duplicates)
	}
}

// TestDuplicates checks what counts as one request: the same request by
// two instances within DuplicateWindow, or the same line twice; not two
// requests of one instance, however close, nor two instances' requests
// further apart.
func TestDuplicates(t *testing.T) {
	v := hashOf(mergeV1)
	deny := func(target string) record.Decision {
		return recDenial(mergeSite, "BadBot", "unverified", "192.0.2.2", badUA, target, record.Violation, "/private/", 2, v, v)
	}
	la, lb := &recLog{t: t}, &recLog{t: t}
	la.decision(10, deny("/private/a")) // twice on a, 0.5 s apart: two requests
	la.decision(10.5, deny("/private/a"))
	lb.decision(10.2, deny("/private/a")) // b in front of a: one of them again
	la.decision(20, deny("/private/b"))   // on a and on b 3 s apart: two requests
	lb.decision(23, deny("/private/b"))
	la.decision(30, deny("/private/c")) // b's of another target: two
	lb.decision(30, deny("/private/c?x"))
	r := mergedReport(t, Options{}, [2]string{"a.log", la.String()}, [2]string{"b.log", lb.String()})
	if got := countsOf(r, "BadBot"); got.violations != 6 || r.Merge.Duplicates != 1 || r.Total.Duplicates != 1 {
		t.Errorf("violations %d, duplicates %d (lines %d); want 6, 1", got.violations, r.Merge.Duplicates, r.Total.Duplicates)
	}
	// The same log twice, one of its instances named in the records:
	// every record of it is a copy.
	lc := &recLog{t: t}
	d := deny("/private/d")
	d.Instance = "a1b2"
	lc.decision(40, d)
	lc.decision(41, d)
	r = mergedReport(t, Options{}, [2]string{"c.log", lc.String()}, [2]string{"c-shipped.log", lc.String()})
	if got := countsOf(r, "BadBot"); got.violations != 2 || r.Merge.Duplicates != 2 || !slices.Equal(r.Merge.Instances, []string{"a1b2"}) {
		t.Errorf("a log and its copy: violations %d, duplicates %d, instances %v; want 2, 2, [a1b2]", got.violations, r.Merge.Duplicates, r.Merge.Instances)
	}
}
