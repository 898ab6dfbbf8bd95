// Package testdns serves a small DNS zone on loopback for the tests of
// crawler verification (forward-confirmed reverse DNS): the "caddy robots"
// commands' tests and the end-to-end tests share one zone, so that what
// each proves is about the same answers, and package verify's tests serve
// a zone of their own with it. It is imported by tests only.
package testdns

import (
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Zone is forward-confirmed reverse DNS of Googlebot, and the ways a claim
// fails it, on documentation and test addresses.
var Zone = []string{
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

// ServFail are the names of Zone whose questions the server fails.
var ServFail = map[string]bool{"99.100.51.198.in-addr.arpa.": true, "crawl-broken.googlebot.com.": true}

// Serve answers the records of zone (in zone file syntax) on 127.0.0.1,
// NXDOMAIN for names it does not hold and SERVFAIL for those of servfail,
// until the test ends. It returns the server's address.
func Serve(t testing.TB, zone []string, servfail map[string]bool) string {
	t.Helper()
	records := map[string][]dns.RR{}
	names := map[string]bool{}
	for _, line := range zone {
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
			case servfail[name]:
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
