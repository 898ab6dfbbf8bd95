package audit

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// TestAddressCounts checks a row's addresses: exact up to MaxClientIPs,
// then all of them by /24 or /64, then by /16 or /48, whatever the order
// they came in.
func TestAddressCounts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		addrs []string
		want  []string // addresses, most requests first
	}{
		{"few", []string{"192.0.2.1", "192.0.2.1", "2001:db8::1"}, []string{"192.0.2.1 2", "2001:db8::1 1"}},
		{"many", func() []string {
			var a []string
			for i := range MaxClientIPs + 1 {
				a = append(a, fmt.Sprintf("198.51.%d.%d", i%2, i))
			}
			return append(a, "2001:db8:1:2::3", "::ffff:198.51.0.9")
		}(), []string{"198.51.0.0/24 34", "198.51.1.0/24 32", "2001:db8:1:2::/64 1"}},
		{"very many", func() []string {
			var a []string
			for i := range maxPrefixes + 1 {
				a = append(a, fmt.Sprintf("10.%d.%d.1", i/256, i%256))
			}
			return a
		}(), []string{"10.0.0.0/16 256", "10.1.0.0/16 1"}},
		{"not addresses", []string{"unknown", "x"}, []string{"unknown 1", "x 1"}},
	} {
		for _, order := range []string{"as given", "reversed", "shuffled"} {
			addrs := slices.Clone(tt.addrs)
			switch order {
			case "reversed":
				slices.Reverse(addrs)
			case "shuffled":
				rand.New(rand.NewPCG(1, 2)).Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
			}
			var d rowDetail
			for _, a := range addrs {
				d.addAddress([]byte(a), false)
			}
			c := &crawler{detail: d}
			var got []string
			for _, a := range (&Auditor{}).detailOf(c).ClientAddresses {
				got = append(got, a.Address+" "+itoa(a.Requests))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s, %s: %v, want %v", tt.name, order, got, tt.want)
			}
		}
	}
}

// TestViolatingRequests checks what a row lists of its violations: the
// request as sent (its target with the query), the rule and its line, the
// instance, the versions; the earliest Options.MaxRequests whatever the
// order of the logs, the others counted.
func TestViolatingRequests(t *testing.T) {
	v := hashOf(mergeV1)
	var lines []string
	for i := range 25 {
		l := &recLog{t: t}
		d := recDenial(mergeSite, "BadBot", "unverified", "192.0.2.2", badUA, fmt.Sprintf("/private/%02d?sessionid=%d", i, i), record.Violation, "/private/", 2, v, v)
		d.Method = []string{"GET", "HEAD"}[i%2]
		l.decision(float64(i), d)
		lines = append(lines, l.String())
	}
	report := func(lines []string) *Crawler {
		a := New(Options{MaxRequests: 5})
		if _, err := a.Read("a.log", strings.NewReader(strings.Join(lines, ""))); err != nil {
			t.Fatal(err)
		}
		return rowOf(a.Report(), "BadBot")
	}
	c := report(lines)
	if len(c.ViolatingRequests) != 5 || c.ViolatingRequestsMore != 20 {
		t.Fatalf("%d listed, %d more; want 5, 20", len(c.ViolatingRequests), c.ViolatingRequestsMore)
	}
	want := Request{Time: recAt(1), Instance: "a.log", Method: "HEAD", Target: "/private/01?sessionid=1", ClientIP: "192.0.2.2", UserAgent: badUA,
		Reason: "wildcard_group", Rule: "/private/", RuleLine: 2, RobotsHash: v, JudgedVersions: []string{v}, Recorded: record.Violation, Compliance: record.Violation}
	if got := c.ViolatingRequests[1]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the second request:\n got %+v\nwant %+v", got, want)
	}
	slices.Reverse(lines)
	if got := report(lines); fmt.Sprint(got.ViolatingRequests) != fmt.Sprint(c.ViolatingRequests) {
		t.Errorf("read in reverse, the list differs:\n%+v\n%+v", got.ViolatingRequests, c.ViolatingRequests)
	}
}

// TestTopPathsQuery checks that a violation's path is counted with its
// query when the deciding rule's pattern holds one, so that the path
// shown is one the rules disallow.
func TestTopPathsQuery(t *testing.T) {
	l := &recLog{t: t}
	v := hashOf(mergeV1)
	l.decision(1, recDenial(mergeSite, "BadBot", "", "192.0.2.2", badUA, "/catalog.html?sessionid=7", record.Violation, "/*?sessionid=", 4, v, v))
	l.decision(2, recDenial(mergeSite, "BadBot", "", "192.0.2.2", badUA, "/private/a?page=2", record.Violation, "/private/", 2, v, v))
	r := onePassReport(t, Options{}, [2]string{"a.log", l.String()})
	var got []string
	for _, p := range rowOf(r, "BadBot").TopPaths {
		got = append(got, p.Path)
	}
	if want := []string{"/catalog.html?sessionid=7", "/private/a"}; !slices.Equal(got, want) {
		t.Errorf("top paths %v, want %v", got, want)
	}
}

// TestUserTriggered checks that a user-triggered fetcher's rows are listed
// apart, and count in no crawler's figures (package render checks that
// every format shows them).
func TestUserTriggered(t *testing.T) {
	l := &recLog{t: t}
	v := hashOf(mergeV1)
	d := recDenial(mergeSite, "ChatGPT-User", "verified", "23.98.142.1", "Mozilla/5.0 (compatible; ChatGPT-User/1.0; +https://openai.com/bot)", "/private/a", record.Violation, "/private/", 2, v, v)
	d.FetcherClass = record.FetcherUserTriggered
	l.decision(1, d)
	l.decision(2, recDenial(mergeSite, "GPTBot", "verified", "20.171.207.10", gptUA, "/private/b", record.Violation, "/private/", 2, v, v))
	r := onePassReport(t, Options{}, [2]string{"a.log", l.String()})
	if len(r.Crawlers) != 1 || r.Crawlers[0].Agent != "GPTBot" || len(r.UserTriggered) != 1 || r.UserTriggered[0].Agent != "ChatGPT-User" ||
		r.UserTriggered[0].FetcherClass != record.FetcherUserTriggered || r.Crawlers[0].FetcherClass != record.FetcherCrawler {
		t.Fatalf("crawlers %+v, user-triggered %+v", r.Crawlers, r.UserTriggered)
	}
}
