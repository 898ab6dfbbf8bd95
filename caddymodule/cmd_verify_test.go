package caddymodule

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
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
	// 198.51.100.1 has no PTR record (NXDOMAIN); 198.51.100.99 gets
	// SERVFAIL, so its claim stays pending.
}

// cmdServFail is the address whose PTR question the server fails.
const cmdServFail = "99.100.51.198.in-addr.arpa."

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
			case name == cmdServFail:
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
		{"pending-dns", append(slices.Clone(rdns), "--timeout", "300ms", "Googlebot", "198.51.100.99"), 2},
		{"pending-list", append(slices.Clone(offline), "--timeout", "300ms", "--ip-ranges", "GPTBot="+lists.URL+"/broken.json",
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
