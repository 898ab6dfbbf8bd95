package robotscmd

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/robotsenforce/caddy-robots-enforce/internal/testdns"
)

// cmdRanges is a synthetic range list of documentation addresses
// (testdata/commands/README.md): 192.0.2.32/27 and 2001:db8:4801:7428::/64.
const cmdRanges = "testdata/commands/ranges.json"

// cmdPendingTimeout is the --timeout of the cases that wait for an answer
// that never comes (a DNS server that fails, a range list that is down):
// each waits it out, so it is short, and still long enough for the
// failure it reports, which a server on 127.0.0.1 gives within
// milliseconds, to arrive first.
const cmdPendingTimeout = "250ms"

// cmdDNSServer serves testdns.Zone on 127.0.0.1 and returns its address.
func cmdDNSServer(t *testing.T) string { return testdns.Serve(t, testdns.Zone, testdns.ServFail) }

// cmdSlowDNSServer returns the address of a DNS server on 127.0.0.1 that
// answers every question with a server failure, cmdSlowDNSDelay after it
// came: past the --timeout of these tests, so that a lookup sent to it is
// under way when the command's wait ends, and soon enough that the
// command's verifier, which waits for its lookups when it is closed, is
// not held long.
func cmdSlowDNSServer(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return // closed
			}
			q := new(dns.Msg)
			if q.Unpack(buf[:n]) != nil {
				continue
			}
			reply, err := new(dns.Msg).SetRcode(q, dns.RcodeServerFailure).Pack()
			if err != nil {
				continue
			}
			time.AfterFunc(cmdSlowDNSDelay, func() { _, _ = pc.WriteTo(reply, from) })
		}
	}()
	return pc.LocalAddr().String()
}

// cmdSlowDNSDelay is how long cmdSlowDNSServer takes to answer.
const cmdSlowDNSDelay = 600 * time.Millisecond

// cmdListServer serves range lists on 127.0.0.1: /ranges.json is
// cmdRanges, /broken.json a server error, /gone.json a 410, and
// /hangs.json never answers.
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
	mux.HandleFunc("/gone.json", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusGone)
	})
	mux.HandleFunc("/hangs.json", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // as a host that never answers, until the client gives up
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
		// A lookup that failed, a list that did not load: no answer will
		// come, and the command says why, as soon as it is known.
		{"unconfirmed-dns", append(slices.Clone(rdns), "--timeout", cmdPendingTimeout, "Googlebot", "198.51.100.99", "198.51.100.98"), 2},
		{"unconfirmed-list", append(slices.Clone(offline), "--timeout", cmdPendingTimeout, "--ip-ranges", "GPTBot="+lists.URL+"/broken.json",
			"GPTBot", "192.0.2.40"), 2},
		// Another token's list failing too says nothing of this claim.
		{"unconfirmed-list-own", append(slices.Clone(offline), "--timeout", cmdPendingTimeout, "--ip-ranges", "GPTBot="+lists.URL+"/broken.json",
			"--ip-ranges", "CCBot="+lists.URL+"/gone.json", "GPTBot", "192.0.2.40"), 2},
		// A list whose host never answers is given up within the wait,
		// so that the command says why no answer will come (offline, the
		// built-in lists' hosts may not answer at all).
		{"unconfirmed-list-timeout", append(slices.Clone(offline), "--timeout", "400ms", "--ip-ranges", "GPTBot="+lists.URL+"/hangs.json",
			"GPTBot", "192.0.2.40"), 2},
		// A lookup still under way when the wait ends.
		{"pending-dns", append(slices.Clone(offline), "--reverse-dns", "Googlebot=googlebot.com", "--resolver", cmdSlowDNSServer(t),
			"--timeout", cmdPendingTimeout, "Googlebot", "198.51.100.99"), 2},
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
		// Unless its address is in a crawler's range, with --undeclared
		// bind: then it is that crawler, held to its group.
		{"undeclared", []string{"--robots", cmdDemo, "--ua", cmdChrome, "--verify-builtin", "off", "--ip-ranges", "GPTBot=" + cmdRanges,
			"--undeclared", "bind", "--ip", "192.0.2.40", "/blog/post.html"}, 1},
		{"undeclared-elsewhere", []string{"--robots", cmdDemo, "--ua", cmdChrome, "--verify-builtin", "off", "--ip-ranges", "GPTBot=" + cmdRanges,
			"--undeclared", "bind", "--ip", "198.51.100.7", "/blog/post.html"}, 0},
		// A failed lookup: unconfirmed, judged without the token it could
		// not prove, as the handler judges it.
		{"unconfirmed", with(googlebot, "--ip", "198.51.100.99", "--timeout", cmdPendingTimeout, "/checkout/pay"), 2},
		// A lookup under way when the wait ends: judged as claimed, as the
		// handler judges a pending claim.
		{"pending", []string{"--robots", cmdShop, "--ua", cmdGooglebot, "--verify-builtin", "off", "--reverse-dns", "Googlebot=googlebot.com",
			"--resolver", cmdSlowDNSServer(t), "--ip", "198.51.100.99", "--timeout", cmdPendingTimeout, "/checkout/pay"}, 2},
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

// cmdAbs returns the absolute path of a test file, for a Caddyfile.
func cmdAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(abs)
}
