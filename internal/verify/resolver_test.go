package verify

import (
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestResolverRealDNS runs forward-confirmed reverse DNS through
// NewResolver against a real DNS server on 127.0.0.1, the only place a
// test may send packets.
func TestResolverRealDNS(t *testing.T) {
	zone := map[string]string{
		"1.66.249.66.in-addr.arpa. 60 IN PTR crawl-66-249-66-1.googlebot.com.": "",
		"crawl-66-249-66-1.googlebot.com. 60 IN A 66.249.66.1":                 "",
		"7.113.0.203.in-addr.arpa. 60 IN PTR crawl-203-0-113-7.googlebot.com.": "", // forward does not match
		"crawl-203-0-113-7.googlebot.com. 60 IN A 192.0.2.1":                   "",
	}
	records := map[string][]dns.RR{}
	for line := range zone {
		rr, err := dns.NewRR(line)
		if err != nil {
			t.Fatal(err)
		}
		key := strings.ToLower(rr.Header().Name) + "/" + dns.TypeToString[rr.Header().Rrtype]
		records[key] = append(records[key], rr)
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
			qq := q.Question[0]
			m.Answer = records[strings.ToLower(qq.Name)+"/"+dns.TypeToString[qq.Qtype]]
			if m.Answer == nil && len(records[strings.ToLower(qq.Name)+"/A"])+len(records[strings.ToLower(qq.Name)+"/PTR"]) == 0 {
				m.Rcode = dns.RcodeNameError
			}
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	defer srv.Shutdown()

	v := newTestVerifier(t, Config{Resolver: NewResolver(pc.LocalAddr().String()), Now: newClock().Now})
	for _, tt := range []struct {
		addr string
		want Outcome
	}{
		{"66.249.66.1", Verified},
		{"203.0.113.7", Forged},
		{"198.51.100.1", Forged}, // NXDOMAIN
	} {
		if got := waitFor(t, v, "Googlebot", tt.addr); got != (Result{Outcome: tt.want, Method: ReverseDNS}) {
			t.Errorf("Verify(Googlebot, %s) over real DNS = %+v, want %v", tt.addr, got, tt.want)
		}
	}
}
