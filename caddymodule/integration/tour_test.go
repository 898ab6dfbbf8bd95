package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

var updateTour = flag.Bool("update-tour", false, "rewrite testdata/tour from the tour's run, and the README's sample between its markers")

// The tour's User-Agent headers, as the README sets them.
const (
	tourGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	tourGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	tourChrome    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	tourHonest    = "ExampleBot/1.0 (+https://example.net/bot)"
	tourCurl      = "curl/8.5.0"
)

// tourStep is one command of the README's tour: a request, and the status
// the README's comment says it gets.
type tourStep struct {
	port   int // 0 for :8080, 1 for :8081
	ua     string
	target string
	xff    string
	status int
}

// tourSteps are the README's tour, in its order.
var tourSteps = []tourStep{
	{0, tourGPTBot, "/blog/post.html", "", http.StatusForbidden},
	{0, tourGPTBot, "/robots.txt", "", http.StatusOK},
	{0, tourChrome, "/private/report.html", "", http.StatusOK},
	{0, tourCurl, "/private/report.html", "", http.StatusOK},
	{0, tourHonest, "/private/report.html", "", http.StatusForbidden},
	{0, tourHonest, "/private/press/release.html", "", http.StatusOK},
	{0, tourHonest, "/pub/..%2Fprivate/report.html", "", http.StatusForbidden},
	{0, tourGooglebot, "/private/report.html", "", http.StatusForbidden},
	{0, tourGooglebot, "/private/report.html", "192.0.2.10", http.StatusOK},
	{1, tourHonest, "/robots.txt", "198.51.100.1", http.StatusOK},
	{1, tourHonest, "/blog/post.html", "198.51.100.1", http.StatusOK},
	{1, tourGPTBot, "/blog/post.html", "198.51.100.2", http.StatusOK},
}

// TestReadmeTour runs the README's tour against Caddyfile.example, as a
// new operator would (the built caddy, the demo site, the same requests),
// checks every status the README's comments claim, and compares what
// "caddy robots audit" prints of the records with the sample the README
// shows, which -update-tour rewrites from this run.
func TestReadmeTour(t *testing.T) {
	example, err := os.ReadFile("../../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	demo, err := filepath.Abs("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	global, sites := tourSplit(t, string(example))
	sites = strings.NewReplacer(
		"http://localhost:8080", "http://localhost:<PORT0>",
		"http://localhost:8081", "http://localhost:<PORT1>",
		"127.0.0.1:8082", "127.0.0.1:<PORT2>",
		"http://:8082", "http://:<PORT2>",
		"testdata/demo", filepath.ToSlash(demo),
	).Replace(sites)
	c := hxStart(t, 3, sites, map[string]string{"<GLOBAL>": global})

	for _, s := range tourSteps {
		var r hxResp
		var err error
		host := "localhost:" + strconv.Itoa(c.ports[s.port])
		if strings.Contains(s.target, "%2F") {
			r, err = c.raw(s.port, http.MethodGet, s.target, host, s.ua) // curl --path-as-is
		} else {
			r, err = tourGet(c, s, host)
		}
		if err != nil || r.status != s.status {
			t.Errorf("%s GET %s by %q (X-Forwarded-For %q) = %d, %v; the README says %d", host, s.target, s.ua, s.xff, r.status, err, s.status)
		}
	}
	c.stop()

	log := filepath.Join(c.dir, "cwd", "robots-compliance.log") // relative to caddy's working directory, as in the README
	out, err := exec.CommandContext(context.Background(), hxBinary(t), "robots", "audit", log).CombinedOutput()
	if err != nil {
		t.Fatalf("caddy robots audit: %v\n%s", err, out)
	}
	got := strings.NewReplacer(
		"localhost:"+strconv.Itoa(c.ports[0]), "localhost:8080",
		"localhost:"+strconv.Itoa(c.ports[1]), "localhost:8081",
		log, "robots-compliance.log",
	).Replace(string(out))
	got = tourScrub(got)
	golden := filepath.Join("testdata", "tour", "audit.txt")
	if *updateTour {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		tourUpdateReadme(t, got)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("caddy robots audit of the tour differs from %s (go test -run TestReadmeTour -update-tour rewrites it):\n got:\n%s\nwant:\n%s", golden, got, want)
	}
	if readme := tourReadmeSample(t); readme != string(want) {
		t.Errorf("the README's audit sample differs from %s (-update-tour rewrites both):\n%s", golden, readme)
	}
	tourCheckRecordSample(t, log, c.ports[1])
}

// tourCheckRecordSample checks that every field of the README's sample
// violation ("A violation, from the demo") is what the tour's record of
// it says.
func tourCheckRecordSample(t *testing.T, log string, logPort int) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(readme), "A violation, from the demo (fields abridged):\n\n```json\n")
	line, _, ok := strings.Cut(rest, "\n")
	var sample map[string]any
	if !ok || json.Unmarshal([]byte(line), &sample) != nil {
		t.Fatalf("README.md: no sample violation record after \"A violation, from the demo\": %q", line)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	site := "http://localhost:" + strconv.Itoa(logPort)
	for _, l := range strings.Split(string(data), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil || rec[record.Site] != site || rec[record.Agent] != "GPTBot" || rec[record.Compliance] != record.Violation {
			continue
		}
		rec[record.Site] = "http://localhost:8081"
		for k, v := range sample {
			if fmt.Sprint(rec[k]) != fmt.Sprint(v) {
				t.Errorf("README's sample violation: %s = %v; the tour's record says %v", k, v, rec[k])
			}
		}
		return
	}
	t.Errorf("the tour wrote no violation of GPTBot at %s", site)
}

// tourGet sends a tour step's request with net/http, as curl would.
func tourGet(c *hxCaddy, s tourStep, host string) (hxResp, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+c.addr(s.port)+s.target, nil)
	if err != nil {
		return hxResp{}, err
	}
	req.Host = host
	req.Header.Set("User-Agent", s.ua)
	if s.xff != "" {
		req.Header.Set("X-Forwarded-For", s.xff)
	}
	return hxDo(c.client, req)
}

// tourSplit returns the inside of a Caddyfile's global options block,
// without its admin line (the test's own is set), and the rest.
func tourSplit(t *testing.T, caddyfile string) (global, sites string) {
	t.Helper()
	start := strings.Index(caddyfile, "\n{\n")
	end := strings.Index(caddyfile, "\n}\n")
	if start < 0 || end < start {
		t.Fatal("Caddyfile.example: no global options block")
	}
	var lines []string
	for _, l := range strings.Split(caddyfile[start+3:end], "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "admin ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n"), caddyfile[end+3:]
}

// tourTime matches the times the audit prints, which change from run to
// run: the README shows them as a pattern of the same width.
var tourTime = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)

// tourScrub replaces what changes from run to run with what the README
// shows.
func tourScrub(s string) string {
	return tourTime.ReplaceAllString(s, "YYYY-MM-DD hh:mm:ss")
}

// The README's sample sits between these markers, in a code block.
const (
	tourBegin = "<!-- tour audit: begin; written by TestReadmeTour -->\n```\n"
	tourEnd   = "```\n<!-- tour audit: end -->"
)

// tourReadmeSample returns the sample between the README's markers.
func tourReadmeSample(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(readme, []byte(tourBegin))
	sample, _, ok2 := bytes.Cut(rest, []byte(tourEnd))
	if !ok || !ok2 {
		t.Fatalf("README.md has no tour audit sample between %q and %q", tourBegin, tourEnd)
	}
	return string(sample)
}

// tourUpdateReadme writes sample between the README's markers.
func tourUpdateReadme(t *testing.T, sample string) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := bytes.Cut(readme, []byte(tourBegin))
	_, after, ok2 := bytes.Cut(rest, []byte(tourEnd))
	if !ok || !ok2 {
		t.Fatalf("README.md has no markers %q, %q", tourBegin, tourEnd)
	}
	out := fmt.Sprintf("%s%s%s%s%s", before, tourBegin, sample, tourEnd, after)
	if err := os.WriteFile("../../README.md", []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}
