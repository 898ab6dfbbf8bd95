package integration

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// The -flood-requests flag sets how many forged claims TestE2EForgedClaimFlood
// sends: a few thousand in CI, 100,000 by hand for the README's figures.
var floodRequests = flag.Int("flood-requests", 3000, "forged claims TestE2EForgedClaimFlood sends")

// e2eDNS is a DNS server on loopback that answers every PTR question with
// a name under none of the crawlers' domains, and counts the questions.
type e2eDNS struct {
	addr    string
	queries atomic.Int64
}

func e2eStartDNS(t *testing.T) *e2eDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &e2eDNS{addr: pc.LocalAddr().String()}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		d.queries.Add(1)
		m := new(dns.Msg)
		m.SetReply(q)
		if len(q.Question) == 1 && q.Question[0].Qtype == dns.TypePTR {
			rr, _ := dns.NewRR(q.Question[0].Name + " 60 IN PTR host.isp.example.")
			m.Answer = []dns.RR{rr}
		} else {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return d
}

// A flood of forged Googlebot claims from distinct addresses (through the
// test as a trusted proxy) costs a bounded number of DNS questions, the
// rate limit's; no more forgers than lookups get Googlebot's rights while
// their answer is on its way, the others are judged by the "*" group; and
// a browser's requests go on being answered.
func TestE2EForgedClaimFlood(t *testing.T) {
	d := e2eStartDNS(t)
	c := e2eStart(t, 1, `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: Googlebot
			Allow: /

			User-agent: *
			Disallow: /private/
			TXT
		body denied
		verify {
			builtin off
			reverse_dns Googlebot googlebot.com google.com
			resolver <DNS>
		}
	}
	respond "page {path}"
}
`, map[string]string{"<DNS>": d.addr})
	requests, workers := *floodRequests, 8
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	var wg sync.WaitGroup
	var passed, failed atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := w; i < requests; i += workers {
				ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
				r, err := c.send(e2eTimeout, 0, "", "/private/x", e2eGooglebot, http.Header{"X-Forwarded-For": {ip}})
				switch {
				case err != nil:
					failed.Add(1)
				case r.status == http.StatusOK:
					passed.Add(1) // pending: judged as claimed while DNS answers
				case r.status != http.StatusForbidden:
					failed.Add(1)
				}
			}
		})
	}
	// A browser meanwhile.
	for range 20 {
		if r := c.get(0, "", "/private/x", e2eBrowser); r.status != http.StatusOK {
			t.Errorf("a browser during the flood: %d", r.status)
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	budget := int64(verify.DefaultDNSBurst) + int64(verify.DefaultDNSRate*elapsed.Seconds()+1)
	// Each lookup asks one PTR question; a confirmed name would ask for
	// its addresses too, and none is confirmed here.
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests failed or got neither 200 nor 403", n, requests)
	}
	// Only the claims whose lookup is on its way are judged as made (the
	// pending policy): at most one a lookup the budget allowed.
	if n := passed.Load(); n > budget {
		t.Errorf("%d forged claims got Googlebot's rights, want at most %d (those looked up)", n, budget)
	}
	if q := d.queries.Load(); q > budget {
		t.Errorf("%d forged claims in %v made %d DNS questions, want at most %d (the rate limit's burst and rate)", requests, elapsed, q, budget)
	}
	t.Logf("%d forged claims in %v: %d DNS questions (budget %d), %d passed, %d transport errors, heap in use %+.1f MiB",
		requests, elapsed.Round(time.Millisecond), d.queries.Load(), budget, passed.Load(), failed.Load(),
		(float64(after.HeapInuse)-float64(before.HeapInuse))/(1<<20))
}
