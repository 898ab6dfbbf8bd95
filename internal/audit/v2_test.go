package audit

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// v2Logs are the synthetic version 2 logs of two instances (see
// testdata/audit/README.md).
var v2Logs = []string{"v2-a.log", "v2-b.log"}

// v2Report reads the version 2 logs in the order given.
func v2Report(t *testing.T, opts Options, names ...string) *Report {
	t.Helper()
	a := New(opts)
	for _, name := range names {
		readLog(t, a, name)
	}
	return a.Report()
}

// TestV2Log checks every row of the version 2 logs against what each
// record of testdata/audit/README.md illustrates.
func TestV2Log(t *testing.T) {
	r := v2Report(t, Options{}, v2Logs...)
	type want struct {
		requests, allowed, violations, protective, grace, afterFetch int64
		fetched, mode                                                string
		ips                                                          int
	}
	wants := map[string]want{
		// Fetched robots.txt itself (client: the serve came from its
		// address with its token), crawls /private/ in log mode and after
		// the switch to enforce mode: one row.
		"AhrefsBot (unverified) at http://localhost:8081": {3, 1, 2, 0, 0, 2, "yes (client)", "enforce+log", 1},
		// A browser's User-Agent fetched robots.txt from its address: no
		// fetch of its own, whatever instance b's record of version 2
		// says ("ip"), so no violation after a fetch.
		"ExampleBot (unverified) at https://www.example.com": {3, 1, 2, 0, 0, 0, "no", "enforce", 1},
		// Never fetched robots.txt.
		"CCBot (unverified) at https://www.example.com": {2, 0, 2, 0, 0, 0, "no", "enforce", 1},
		// No product token claimed: no identity.
		"(none) at https://www.example.com": {1, 0, 1, 0, 0, 0, "no", "enforce", 1},
		// An alternate spelling denied only by the decoded reading.
		"bingbot (verified) at https://www.example.com": {2, 1, 0, 1, 0, 0, "yes (client)", "enforce", 1},
		// From another address, not yet verified: a serve of version 2
		// credits no token, and a pending claim could be anyone's.
		"bingbot (pending) at https://www.example.com": {1, 1, 0, 0, 0, 0, "no", "enforce", 1},
		// A denial the robots.txt it was served allows: grace.
		"Googlebot (verified) at https://www.example.com": {2, 1, 0, 0, 1, 0, "yes (client)", "enforce", 1},
		// A fail-closed denial while robots.txt was unreachable.
		"CCBot (unverified) at http://localhost:8081": {1, 0, 0, 1, 0, 0, "no", "log", 1},
		// The real GPTBot: none of the forger's violations.
		"GPTBot (verified) at https://www.example.com": {1, 1, 0, 0, 0, 0, "yes (client)", "enforce", 1},
	}
	got := map[string]want{}
	var order []string
	for i := range r.Crawlers {
		c := &r.Crawlers[i]
		got[c.String()] = want{c.Requests, c.Allowed, c.Violations, c.Protective, c.Grace, c.ViolationsAfterFetch, c.Fetched(), c.Mode, c.ClientIPs}
		order = append(order, c.String())
		if c.Denied != c.Violations+c.Protective+c.Grace || c.Requests != c.Allowed+c.Denied {
			t.Errorf("%s: requests %d, allowed %d, denied %d do not add up", c.String(), c.Requests, c.Allowed, c.Denied)
		}
	}
	for k, w := range wants {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("rows %q, want %d", order, len(wants))
	}
	// Groups by violations, then requests, then agent; identities of one
	// crawler together.
	wantOrder := "AhrefsBot (unverified) at http://localhost:8081; ExampleBot (unverified) at https://www.example.com; CCBot (unverified) at https://www.example.com; (none) at https://www.example.com; bingbot (verified) at https://www.example.com; bingbot (pending) at https://www.example.com; Googlebot (verified) at https://www.example.com; CCBot (unverified) at http://localhost:8081; GPTBot (verified) at https://www.example.com"
	if strings.Join(order, "; ") != wantOrder {
		t.Errorf("order:\n%s\nwant:\n%s", strings.Join(order, "; "), wantOrder)
	}

	// The forger's requests are forgeries of GPTBot, not GPTBot's.
	if len(r.Forgeries) != 1 {
		t.Fatalf("forgeries: %+v", r.Forgeries)
	}
	f := r.Forgeries[0]
	if f.String() != "forged GPTBot at https://www.example.com" || f.Requests != 3 || f.Violations != 2 || f.ClientIPs != 2 || f.FetchedRobots {
		t.Errorf("forged GPTBot: %+v", f)
	}
	if ex := r.Crawlers[1]; !ex.FetchedBy.IsZero() || ex.FetchUnknown || ex.FetchedLink != "" {
		t.Errorf("ExampleBot fetched by %v (%q), unknown %v: want no fetch, known", ex.FetchedBy, ex.FetchedLink, ex.FetchUnknown)
	}
	if g := r.Crawlers[6]; len(g.JudgedVersions) != 0 || len(g.RobotsVersions) != 2 || len(g.IdentityMethods) != 1 || g.IdentityMethods[0] != "ip_ranges" {
		t.Errorf("Googlebot: versions %v, judged %v, methods %v", g.RobotsVersions, g.JudgedVersions, g.IdentityMethods)
	}
	if r.Total.Records != 19 || r.Total.Fetches != 5 || r.Fetches.Serves != 5 || r.Total.Skipped["other_logger"] != 2 || r.OnlyDenials || r.Legacy.Denials != 0 {
		t.Errorf("total %+v, fetches %+v, only denials %v, legacy %+v", r.Total, r.Fetches, r.OnlyDenials, r.Legacy)
	}
	if notes := r.Notes(); len(notes) != 0 {
		t.Errorf("notes of a complete version 2 log: %q", notes)
	}
}

// TestOrderIndependence checks that the report of the two instances' logs
// (of record version 2, and of version 3), and of the log of escalated
// crawlers, is the same whichever is read first, and when their lines are
// shuffled into one stream, or split across several: records may come in
// any order, interleaved in time.
func TestOrderIndependence(t *testing.T) {
	for _, logs := range [][]string{v2Logs, v3Logs, {escalatedLog}} {
		t.Run(logs[0], func(t *testing.T) { orderIndependence(t, logs) })
	}
}

func orderIndependence(t *testing.T, logs []string) {
	report := func(inputs ...[]byte) string {
		a := New(Options{})
		for i, in := range inputs {
			if _, err := a.Read("in"+itoa(int64(i)), bytes.NewReader(in)); err != nil {
				t.Fatal(err)
			}
		}
		r := a.Report()
		r.Inputs, r.Total = nil, LineCounts{} // how the lines were split
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	var lines []string
	var files [][]byte
	for _, name := range logs {
		b, err := os.ReadFile(filepath.Join(testdataDir, name))
		if err != nil {
			t.Fatal(err)
		}
		// Each line names its instance, as a handler that writes the field
		// names it: the log a line is read from then says nothing of it,
		// however the lines are split.
		b = []byte(withInstance(string(b), name))
		files = append(files, b)
		lines = append(lines, strings.SplitAfter(string(b), "\n")...)
	}
	// One more record in other spellings of an agent and a site: the
	// spelling shown must not depend on which is read first.
	spelled := withInstance(v2("examplebot", "allow", "allowed", "site", "HTTPS://WWW.EXAMPLE.COM"), "spelled")
	files = append(files, []byte(spelled))
	lines = append(lines, spelled)
	want := report(files...)
	backward := slices.Clone(files)
	slices.Reverse(backward)
	if got := report(backward...); got != want {
		t.Errorf("the files read last to first differ from first to last:\n%s", lineDiff(want, got))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		k := rng.IntN(len(lines))
		one, two := strings.Join(lines[:k], ""), strings.Join(lines[k:], "")
		if got := report([]byte(one), []byte(two)); got != want {
			t.Errorf("shuffle %d: differs:\n%s", i, lineDiff(want, got))
		}
	}
}

// withInstance gives each JSON line of log the field instance.
func withInstance(log, instance string) string {
	return strings.ReplaceAll("\n"+log, "\n{", "\n{\"instance\":\""+instance+"\",")[1:]
}
