package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testdns"
)

// Inputs of the agreement test, shared with the commands' own tests.
const (
	checkAIPref = "../robotscmd/testdata/commands/aipref.txt"
	checkRanges = "../robotscmd/testdata/commands/ranges.json" // 192.0.2.32/27 proves GPTBot
)

// User-Agent headers of the agreement test.
const (
	checkGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	checkGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	checkChrome    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	checkCrawler   = "ExampleCrawler/1.0 (+https://crawler.example/about)"
)

// checkAgreedFields are the record fields the handler and check must say
// alike of every request.
var checkAgreedFields = []string{record.Verdict, record.Reason, record.Agent, record.BotClass, record.Automation,
	record.Reading, record.RuleLine, record.Compliance, record.RFC9309Verdict, record.GoogleVerdict,
	record.Identity, record.IdentityMethod, record.ContentUsage}

// TestCheckAgreesWithHandler runs the handler and "caddy robots check"
// (the built binary, as a user runs it) on the same requests and compares
// the records each writes, field by field: the verdict, the reason, the
// token, the class, the compliance and both readings' verdicts, the
// identity of the claim and the Content-Usage value, for crawlers named
// and unnamed, tools, browsers and clients without a User-Agent, from
// addresses that prove their claims and addresses that do not, under each
// forged policy. check gets the address with --ip; the handler from
// X-Forwarded-For, as a trusted proxy sends it. Both call one judgement
// (enforce.Judge): this test is what keeps it so.
func TestCheckAgreesWithHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	bin := hxBinary(t)
	resolver := testdns.Serve(t, testdns.Zone, testdns.ServFail)
	robots, ranges := checkAbs(t, checkAIPref), checkAbs(t, checkRanges)
	vars := map[string]string{"<ROBOTS>": robots, "<RANGES>": ranges, "<RESOLVER>": resolver}
	uas := []string{checkGPTBot, checkGooglebot, checkCrawler, "curl/8.5.0", checkChrome, ""}
	ips := []string{"192.0.2.40", "198.51.100.7", "66.249.66.1", "203.0.113.7"}
	paths := []string{"/blog/post", "/drafts/a", "/open/x", "/private/x", "/about", "/robots.txt", "/%7Estaff/x"}
	for _, forged := range []string{"wildcard", "deny", "ignore"} {
		t.Run(forged, func(t *testing.T) {
			c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source file <ROBOTS>
		log_allowed
		verify {
			builtin off
			ip_ranges GPTBot <RANGES>
			reverse_dns Googlebot googlebot.com google.com
			resolver <RESOLVER>
			forged `+forged+`
		}
	}
	respond "page"
}
`, vars)
			n := 0
			get := func(path, ua, ip string) (e2eResponse, string) {
				n++
				uri := fmt.Sprintf("%s?q=%d", path, n)
				return c.getWith(0, "", uri, ua, http.Header{"X-Forwarded-For": {ip}}), uri
			}
			recorded := func(uri string) e2eRecord {
				for _, rec := range c.readLog("robots.log", record.Logger) {
					if rec.str(record.URI) == uri && rec.str(record.Msg) == record.MsgDecision {
						return rec
					}
				}
				return nil
			}
			// The handler never waits for range lists or DNS: ask until
			// each claim's answer is in, as check's verifier waits.
			for _, ua := range uas[:2] {
				for _, ip := range ips {
					if !e2eEventually(func() bool {
						_, uri := get("/warm", ua, ip)
						rec := recorded(uri)
						return rec != nil && rec.str(record.Identity) != "pending"
					}) {
						t.Fatalf("the handler never answered the claim of %q from %s", ua, ip)
					}
				}
			}
			type sent struct {
				uri  string
				resp e2eResponse
			}
			for _, ua := range uas {
				for _, ip := range ips {
					var reqs []sent
					for _, p := range paths {
						resp, uri := get(p, ua, ip)
						reqs = append(reqs, sent{uri, resp})
					}
					args := []string{"robots", "check", "--json", "--robots", robots, "--ua", ua, "--ip", ip, "--forged", forged,
						"--verify-builtin", "off", "--ip-ranges", "GPTBot=" + ranges, "--reverse-dns", "Googlebot=googlebot.com,google.com",
						"--resolver", resolver}
					for _, r := range reqs {
						args = append(args, r.uri)
					}
					results := checkRun(t, bin, args)
					if len(results) != len(reqs) {
						t.Fatalf("check %q: %d results, want %d", args, len(results), len(reqs))
					}
					_, sentinel := get("/sentinel", checkGPTBot, "192.0.2.40")
					if !e2eEventually(func() bool { return recorded(sentinel) != nil }) {
						t.Fatal("the sentinel's record was never written")
					}
					for i, r := range results {
						h := reqs[i]
						if (r.str(record.Verdict) == record.Deny) != (h.resp.status == http.StatusForbidden) ||
							r.str(record.ContentUsage) != h.resp.header.Get("Content-Usage") {
							t.Errorf("%q from %s, %s: check says %s, usage %q; the handler answered %d, usage %q",
								ua, ip, h.uri, r.str(record.Verdict), r.str(record.ContentUsage), h.resp.status, h.resp.header.Get("Content-Usage"))
						}
						rec := recorded(h.uri)
						if rec == nil {
							// Not recorded: allowed, and not bound by the rules.
							if r.str(record.Verdict) != record.Allow || r.str(record.Identity) != "" || r.str(record.BotClass) == "named" {
								t.Errorf("%q from %s, %s: no record, but check says %s, %s, identity %q", ua, ip, h.uri,
									r.str(record.Verdict), r.str(record.BotClass), r.str(record.Identity))
							}
							continue
						}
						var got, want []string
						for _, f := range checkAgreedFields {
							got, want = append(got, fmt.Sprint(r[f])), append(want, fmt.Sprint(rec[f]))
						}
						if !slices.Equal(got, want) {
							t.Errorf("%q from %s, %s: check says %q; the record %q (fields %q)", ua, ip, h.uri, got, want, checkAgreedFields)
						}
					}
				}
			}
		})
	}
}

// checkRun runs the caddy binary with args and decodes the JSON lines it
// prints; exit status 1 (a target disallowed) is not an error.
func checkRun(t *testing.T, bin string, args []string) []e2eRecord {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("caddy %q: %v\n%s", args, err, stderr.String())
		}
	}
	var out []e2eRecord
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var r e2eRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("caddy %q printed what is not JSON: %v", args, err)
		}
		out = append(out, r)
	}
	return out
}

// checkAbs returns the absolute path of a test file, for a Caddyfile and
// for a command that runs elsewhere.
func checkAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(abs)
}
