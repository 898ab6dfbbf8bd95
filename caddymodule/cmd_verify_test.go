package caddymodule

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// cmdRanges is a synthetic range list of documentation addresses
// (testdata/commands/README.md): 192.0.2.32/27 and 2001:db8:4801:7428::/64.
const cmdRanges = "testdata/commands/ranges.json"

// cmdZone is the DNS the tests' server answers: forward-confirmed reverse
// DNS of Googlebot, and the ways a claim fails it.
var cmdZone = []string{
	// Verified: the PTR name lies under googlebot.com and resolves back.
	"1.66.249.66.in-addr.arpa. 60 IN PTR crawl-66-249-66-1.googlebot.com.",
	"crawl-66-249-66-1.googlebot.com. 60 IN A 66.249.66.1",
	// Verified over IPv6.
	"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.8.4.8.b.d.0.1.0.0.2.ip6.arpa. 60 IN PTR crawl-v6.googlebot.com.",
	"crawl-v6.googlebot.com. 60 IN AAAA 2001:db8:4860::1",
	// Forged: the name resolves to another address.
	"7.113.0.203.in-addr.arpa. 60 IN PTR crawl-203-0-113-7.googlebot.com.",
	"crawl-203-0-113-7.googlebot.com. 60 IN A 192.0.2.1",
	// Forged: the name is under no domain of Googlebot.
	"5.2.0.192.in-addr.arpa. 60 IN PTR host.example.net.",
	"host.example.net. 60 IN A 192.0.2.5",
	// Forged: the name resolves back, but is not Googlebot's (a name of
	// bingbot's domain, which is looked up forward for bingbot).
	"6.2.0.192.in-addr.arpa. 60 IN PTR msnbot-192-0-2-6.search.msn.com.",
	"msnbot-192-0-2-6.search.msn.com. 60 IN A 192.0.2.6",
	// Pending: the forward question of the name gets SERVFAIL.
	"98.100.51.198.in-addr.arpa. 60 IN PTR crawl-broken.googlebot.com.",
	// 198.51.100.1 has no PTR record (NXDOMAIN); the PTR question of
	// 198.51.100.99 gets SERVFAIL, so its claim stays pending.
}

// cmdServFail are the names whose questions the server fails.
var cmdServFail = map[string]bool{"99.100.51.198.in-addr.arpa.": true, "crawl-broken.googlebot.com.": true}

// cmdDNSServer serves cmdZone on 127.0.0.1 and returns its address.
func cmdDNSServer(t *testing.T) string {
	t.Helper()
	records := map[string][]dns.RR{}
	names := map[string]bool{}
	for _, line := range cmdZone {
		rr, err := dns.NewRR(line)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ToLower(rr.Header().Name)
		key := name + "/" + dns.TypeToString[rr.Header().Rrtype]
		records[key] = append(records[key], rr)
		names[name] = true
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		if len(q.Question) == 1 {
			name := strings.ToLower(q.Question[0].Name)
			m.Answer = records[name+"/"+dns.TypeToString[q.Question[0].Qtype]]
			switch {
			case cmdServFail[name]:
				m.Rcode = dns.RcodeServerFailure
			case !names[name]:
				m.Rcode = dns.RcodeNameError
			}
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// cmdListServer serves range lists on 127.0.0.1: /ranges.json is
// cmdRanges, /broken.json a server error.
func cmdListServer(t *testing.T) *httptest.Server {
	t.Helper()
	list, err := os.ReadFile(cmdRanges)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ranges.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(list)
	})
	mux.HandleFunc("/broken.json", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// cmdLoopbackPort matches the ports of the tests' servers, which change
// from run to run, so that golden files can hold their addresses.
var cmdLoopbackPort = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// cmdScrub replaces the ports of loopback addresses with PORT.
func cmdScrub(s string) string {
	return cmdLoopbackPort.ReplaceAllString(s, "127.0.0.1:PORT")
}

// TestVerifyGolden checks the text and JSON output of caddy robots verify,
// and its exit status: 0 when every address is verified, 1 when one is
// forged or unverified, 2 when one is still pending at --timeout. Range
// lists come from files and from a server on 127.0.0.1, DNS from a server
// there; the built-in sources are off, so nothing leaves the machine.
func TestVerifyGolden(t *testing.T) {
	resolver := cmdDNSServer(t)
	lists := cmdListServer(t)
	offline := []string{"--verify-builtin", "off"}
	rdns := append(slices.Clone(offline), "--reverse-dns", "Googlebot=googlebot.com,google.com",
		"--reverse-dns", "bingbot=search.msn.com", "--resolver", resolver)
	tests := []struct {
		name   string
		args   []string
		status int
	}{
		{"ranges", append(slices.Clone(offline), "--ip-ranges", "GPTBot="+cmdRanges,
			"GPTBot", "192.0.2.40", "2001:db8:4801:7428::5", "198.51.100.7", "::ffff:192.0.2.33"), 1},
		{"ranges-verified", append(slices.Clone(offline), "--ip-ranges", "GPTBot="+cmdRanges, "gptbot", "192.0.2.40"), 0},
		{"ranges-url", append(slices.Clone(offline), "--ip-ranges", "GPTBot="+lists.URL+"/ranges.json",
			"GPTBot", "192.0.2.40", "203.0.113.9"), 1},
		{"rdns", append(slices.Clone(rdns), "Googlebot",
			"66.249.66.1", "2001:db8:4860::1", "203.0.113.7", "192.0.2.5", "192.0.2.6", "198.51.100.1"), 1},
		{"rdns-and-ranges", append(slices.Clone(rdns), "--ip-ranges", "Googlebot="+cmdRanges,
			"Googlebot", "192.0.2.40", "66.249.66.1", "198.51.100.1"), 1},
		{"unverified", append(slices.Clone(offline), "curl", "192.0.2.40"), 1},
		{"pending-dns", append(slices.Clone(rdns), "--timeout", "1s", "Googlebot", "198.51.100.99", "198.51.100.98"), 2},
		{"pending-list", append(slices.Clone(offline), "--timeout", "1s", "--ip-ranges", "GPTBot="+lists.URL+"/broken.json",
			"GPTBot", "192.0.2.40"), 2},
	}
	for _, tt := range tests {
		for _, format := range []string{"txt", "json"} {
			t.Run(tt.name+"."+format, func(t *testing.T) {
				args := append([]string{"verify"}, tt.args...)
				if format == "json" {
					args = slices.Insert(args, 1, "--json")
				}
				out, status, err := cmdRun(t, args...)
				if status != tt.status || (err != nil) != (tt.status == exitUsage) {
					t.Errorf("status %d, error %v; want %d, an error only for 2", status, err, tt.status)
				}
				if format == "json" {
					for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
						if !json.Valid([]byte(line)) {
							t.Errorf("not a JSON object: %s", line)
						}
					}
				}
				cmdGolden(t, "verify-"+tt.name+"."+format, cmdScrub(cmdTranscript(args, out)))
			})
		}
	}
}

// TestVerifyUsage checks the usage errors of caddy robots verify: exit
// status 2, and an error that says what is wrong.
func TestVerifyUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"nothing", nil, "no token"},
		{"no address", []string{"GPTBot"}, "no address"},
		{"bad address", []string{"GPTBot", "192.0.2.300"}, `address "192.0.2.300"`},
		{"host name", []string{"GPTBot", "crawler.example"}, "not an IPv4 or IPv6 address"},
		{"version", []string{"Googlebot/2.1", "192.0.2.1"}, "no version"},
		{"bad builtin", []string{"--verify-builtin", "maybe", "GPTBot", "192.0.2.1"}, "--verify-builtin"},
		{"ranges without token", []string{"--ip-ranges", "ranges.json", "GPTBot", "192.0.2.1"}, "want <token>=<file|url>"},
		{"ranges missing file", []string{"--ip-ranges", "GPTBot=testdata/commands/missing.json", "GPTBot", "192.0.2.1"}, "no such file"},
		{"ranges directory", []string{"--ip-ranges", "GPTBot=testdata/commands", "GPTBot", "192.0.2.1"}, "is a directory"},
		{"ranges url without host", []string{"--ip-ranges", "GPTBot=https:///x.json", "GPTBot", "192.0.2.1"}, "no host"},
		{"rdns without suffix", []string{"--reverse-dns", "Googlebot=", "Googlebot", "192.0.2.1"}, "want <token>=<suffix,...>"},
		{"rdns bad suffix", []string{"--verify-builtin", "off", "--reverse-dns", "Googlebot=google..com", "Googlebot", "192.0.2.1"}, "invalid domain suffix"},
		{"bad resolver", []string{"--resolver", "127.0.0.1", "GPTBot", "192.0.2.1"}, "--resolver"},
		{"bad timeout", []string{"--timeout", "0s", "GPTBot", "192.0.2.1"}, "--timeout"},
		{"unknown flag", []string{"--forged", "deny", "GPTBot", "192.0.2.1"}, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, status, err := cmdRun(t, append([]string{"verify"}, tt.args...)...)
			if status != exitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("verify %q: status %d, error %v; want %d, an error with %q", tt.args, status, err, exitUsage, tt.want)
			}
			if out != "" {
				t.Errorf("verify %q printed %q, want nothing", tt.args, out)
			}
		})
	}
}

// TestCheckIdentityGolden checks caddy robots check --ip: the claim is
// verified as the handler verifies it (range lists from a file, reverse
// DNS from a server on 127.0.0.1; the built-in sources are off), then the
// forged policy applies as Handler.identity applies it, before the usage
// preference is looked up.
func TestCheckIdentityGolden(t *testing.T) {
	resolver := cmdDNSServer(t)
	gptbot := []string{"--robots", cmdAIPref, "--ua", cmdGPTBot, "--verify-builtin", "off", "--ip-ranges", "GPTBot=" + cmdRanges}
	googlebot := []string{"--robots", cmdShop, "--ua", cmdGooglebot, "--verify-builtin", "off",
		"--reverse-dns", "Googlebot=googlebot.com,google.com", "--resolver", resolver}
	with := func(base []string, more ...string) []string { return append(slices.Clone(base), more...) }
	tests := []struct {
		name   string
		args   []string
		status int
	}{
		{"ranges-verified", with(gptbot, "--ip", "192.0.2.40", "/blog/post", "/drafts/a", "/robots.txt"), 1},
		// Judged by the "*" group, without the GPTBot token: /drafts/ is
		// open to it, and the "*" group's usage preference applies.
		{"ranges-forged", with(gptbot, "--ip", "198.51.100.7", "/blog/post", "/drafts/a", "/private/x"), 1},
		{"ranges-forged-deny", with(gptbot, "--ip", "198.51.100.7", "--forged", "deny", "/blog/post"), 1},
		{"ranges-forged-ignore", with(gptbot, "--ip", "2001:db8::7", "--forged", "ignore", "/blog/post", "/drafts/a"), 1},
		{"rdns-verified", with(googlebot, "--ip", "66.249.66.1", "/checkout/pay", "/cart"), 0},
		{"rdns-forged", with(googlebot, "--ip", "203.0.113.7", "/checkout/pay", "/cart"), 1},
		{"rdns-no-ptr", with(googlebot, "--ip", "198.51.100.1", "/internal/press/y"), 0},
		{"unverified", []string{"--robots", cmdDemo, "--ua", "curl/8.5.0", "--wildcard", "automated",
			"--verify-builtin", "off", "--ip", "192.0.2.40", "/private/report.html"}, 1},
		// A browser is not bound, so its claim is never looked up.
		{"browser", []string{"--robots", cmdAIPref, "--ua", cmdChrome, "--verify-builtin", "off", "--ip", "192.0.2.40", "/blog/post"}, 0},
		{"pending", with(googlebot, "--ip", "198.51.100.99", "--timeout", "1s", "/checkout/pay"), 2},
	}
	for _, tt := range tests {
		for _, format := range []string{"txt", "json"} {
			t.Run(tt.name+"."+format, func(t *testing.T) {
				args := append([]string{"check"}, tt.args...)
				if format == "json" {
					args = slices.Insert(args, 1, "--json")
				}
				out, status, err := cmdRun(t, args...)
				if status != tt.status || (err != nil) != (tt.status == exitUsage) {
					t.Errorf("status %d, error %v; want %d, an error only for 2", status, err, tt.status)
				}
				cmdGolden(t, "check-identity-"+tt.name+"."+format, cmdScrub(cmdTranscript(args, out)))
			})
		}
	}
}

// TestCheckAgreesWithHandler runs the handler and caddy robots check on
// the same requests and compares what each says: the verdict, the reason,
// the token, bot_class, the identity of the claim and the Content-Usage
// value, for crawlers named and unnamed, tools, browsers and clients
// without a User-Agent, from addresses that prove their claims and
// addresses that do not, under each forged policy. check runs as a user
// would, with --ip; the handler gets the address from X-Forwarded-For,
// as a trusted proxy sends it.
func TestCheckAgreesWithHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	resolver := cmdDNSServer(t)
	vars := map[string]string{"<ROBOTS>": cmdAbs(t, cmdAIPref), "<RANGES>": cmdAbs(t, cmdRanges), "<RESOLVER>": resolver}
	uas := []string{cmdGPTBot, cmdGooglebot, cmdCrawler, "curl/8.5.0", cmdChrome, ""}
	ips := []string{"192.0.2.40", "198.51.100.7", "66.249.66.1", "203.0.113.7"}
	paths := []string{"/blog/post", "/drafts/a", "/open/x", "/private/x", "/about", "/robots.txt"}
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
				for _, rec := range c.readLog("robots.log", "http.handlers.robots_enforce") {
					if rec.str("uri") == uri && rec.str("msg") == "robots.txt decision" {
						return rec
					}
				}
				return nil
			}
			// The handler never waits for range lists or DNS: ask until
			// each claim's answer is in, as check's VerifyNow waits.
			for _, ua := range uas[:2] {
				for _, ip := range ips {
					if !e2eEventually(func() bool {
						_, uri := get("/warm", ua, ip)
						rec := recorded(uri)
						return rec != nil && rec.str("identity") != "pending"
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
					args := []string{"--robots", cmdAIPref, "--ua", ua, "--ip", ip, "--forged", forged, "--verify-builtin", "off",
						"--ip-ranges", "GPTBot=" + cmdRanges, "--reverse-dns", "Googlebot=googlebot.com,google.com", "--resolver", resolver}
					for _, r := range reqs {
						args = append(args, r.uri)
					}
					results, _, err := cmdCheckJSON(t, args...)
					if err != nil || len(results) != len(reqs) {
						t.Fatalf("check %q: %v, %d results", args, err, len(results))
					}
					_, sentinel := get("/sentinel", cmdGPTBot, "192.0.2.40")
					if !e2eEventually(func() bool { return recorded(sentinel) != nil }) {
						t.Fatal("the sentinel's record was never written")
					}
					for i, r := range results {
						h := reqs[i]
						if (r.Verdict == "deny") != (h.resp.status == http.StatusForbidden) || r.ContentUsage != h.resp.header.Get("Content-Usage") {
							t.Errorf("%q from %s, %s: check says %s, usage %q; the handler answered %d, usage %q",
								ua, ip, h.uri, r.Verdict, r.ContentUsage, h.resp.status, h.resp.header.Get("Content-Usage"))
						}
						rec := recorded(h.uri)
						if rec == nil {
							if r.Verdict != "allow" || r.Identity != "" {
								t.Errorf("%q from %s, %s: no record, but check says %s, identity %q", ua, ip, h.uri, r.Verdict, r.Identity)
							}
							continue
						}
						got := []string{r.Verdict, r.Reason, r.Agent, r.BotClass, r.Identity, r.IdentityMethod, r.ContentUsage, strconv.Itoa(r.RuleLine)}
						want := []string{rec.str("verdict"), rec.str("reason"), rec.str("agent"), rec.str("bot_class"), rec.str("identity"),
							rec.str("identity_method"), rec.str("content_usage"), fmt.Sprint(rec["rule_line"])}
						if !slices.Equal(got, want) {
							t.Errorf("%q from %s, %s: check says %q; the record %q", ua, ip, h.uri, got, want)
						}
					}
				}
			}
		})
	}
}

// cmdAbs returns the absolute path of a test file, for a Caddyfile.
func cmdAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(abs)
}
