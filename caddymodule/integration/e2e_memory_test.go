package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// What the handler keeps per key (which client fetched which host's
// robots.txt, the saved sites) must not hold whole Host and User-Agent
// headers: a client sending long ones would grow the heap by their size
// times the entries kept, and it stays. The flood below sends 3,000
// requests with 14 KiB Host and 4 KiB User-Agent headers (54 MiB of
// headers; Caddy refuses more than 16 KiB of header, and net/http allows
// 4 KiB over that); the heap after a collection may grow by hxHeapGrowth
// at most.
const (
	hxLongHost    = 14 << 10
	hxLongUA      = 4 << 10
	hxLongFlood   = 3000
	hxHeapGrowth  = 40 << 20
	hxWarmFlood   = 200
	hxLongWorkers = 8
)

func TestHostileLongHeadersMemory(t *testing.T) {
	t.Parallel()
	c := hxStart(t, 1, hxFileSite, map[string]string{"<SITE>": hxSiteDir(t), "<OPTIONS>": ""})
	// Warm the server (connections, pools) with short headers first.
	warm := c.flood(hxWarmFlood, hxLongWorkers, func(i int) (int, string, string, string) {
		return 0, fmt.Sprintf("w%d.test", i), "/robots.txt", "membot/1.0"
	}, func(r hxResp) bool { return r.status != http.StatusOK })
	if warm.broke+warm.failed > 0 {
		t.Fatalf("warming up: %d of %d requests for /robots.txt failed, e.g. %v", warm.broke+warm.failed, warm.sent, warm.examples)
	}
	before := c.heapInUse()
	filler := strings.Repeat("a", hxLongHost)
	// A crawler's token first, lower-case, and a long comment: the token
	// is all the handler needs of it.
	ua := "membot/1.0 (" + strings.Repeat("b", hxLongUA) + ")"
	res := c.flood(hxLongFlood, hxLongWorkers, func(i int) (int, string, string, string) {
		path := "/robots.txt"
		if i%4 == 3 {
			path = "/pub/page.html"
		}
		return 0, fmt.Sprintf("m%d-%s.test", i, filler), path, ua
	}, func(r hxResp) bool { return r.status != http.StatusOK && r.status != http.StatusForbidden })
	if res.failed > 0 || res.broke > 0 {
		t.Errorf("%d of %d requests with long headers got no answer, %d an unexpected one, e.g. %v", res.failed, res.sent, res.broke, res.examples)
	}
	after := c.heapInUse()
	t.Logf("heap in use after a collection: %.1f MiB before, %.1f MiB after %d requests with %d KiB Host and %d KiB User-Agent headers",
		before/(1<<20), after/(1<<20), res.sent, hxLongHost>>10, hxLongUA>>10)
	if after-before > hxHeapGrowth {
		t.Errorf("the heap grew by %.1f MiB and stays so, want at most %d MiB", (after-before)/(1<<20), hxHeapGrowth>>20)
	}
}
