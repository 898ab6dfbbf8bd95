package caddymodule

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// The request path pays nothing for distributed: the fleet's serves and
// escalations are overlays the judgement reads with an atomic load and a
// map lookup, and the storage is the state's goroutine's alone. These
// hold a handler whose tables hold a fleet's serves and escalations, at
// the overlays' bounds, to the allocations of the same handler holding
// the same serves and escalations as its own, and measure the two.

// newBenchHandlerWith is newBenchHandler with the violators option v, and
// max_hosts maxHosts.
func newBenchHandlerWith(tb testing.TB, v *RepeatViolators, maxHosts int) *Handler {
	ranges := filepath.Join(tb.TempDir(), "gptbot.json")
	if err := os.WriteFile(ranges, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	h := &Handler{
		Source:    &Source{Kind: "inline", Text: benchHandlerRobots},
		Verify:    &Verify{Builtin: "off", IPRanges: []IPRanges{{Token: "GPTBot", Source: ranges}}},
		Violators: v,
		MaxHosts:  maxHosts,
	}
	if err := h.Provision(ctx); err != nil {
		tb.Fatalf("provisioning the handler: %v", err)
	}
	tb.Cleanup(func() { h.Cleanup() })
	h.logger = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel))
	return h
}

// benchFleetTables returns serves and escalations at the overlays'
// bounds: serves of the site and client of the requests among them, and
// escalations of other crawlers.
func benchFleetTables(site string, now time.Time) ([]enforce.SavedServed, []enforce.EscalatedCrawler) {
	var served []enforce.SavedServed
	for i := range enforce.MaxFleetServed - 2 {
		served = append(served, enforce.SavedServed{Site: site, Kind: "token", Name: fmt.Sprintf("bot%d", i),
			Versions: []enforce.ServedVersion{{Hash: "0123456789abcdef", At: now.Add(-time.Minute)}}})
	}
	version := robotstxt.VersionHash([]byte(benchHandlerRobots))
	served = append(served,
		enforce.SavedServed{Site: site, Kind: "token", Name: "gptbot", Versions: []enforce.ServedVersion{{Hash: version, At: now.Add(-time.Hour)}}},
		enforce.SavedServed{Site: site, Kind: "client", Name: "192.0.2.1 gptbot", Versions: []enforce.ServedVersion{{Hash: version, At: now.Add(-time.Hour)}}})
	var escalated []enforce.EscalatedCrawler
	for i := range enforce.MaxFleetEscalations {
		escalated = append(escalated, enforce.EscalatedCrawler{Site: site, Token: fmt.Sprintf("bot%d", i), Since: now, Until: now.Add(time.Hour)})
	}
	return served, escalated
}

// benchSite is the site of handlerRequest's requests, as the judgement
// keys its tables.
const benchSite = "http://example.com"

// newTablesBenchHandler is newBenchHandler with violators enforce, its
// tables holding the serves and escalations of benchFleetTables: as the
// fleet's overlays when fleet is set, else as its own. maxHosts tells
// the handlers' states apart.
func newTablesBenchHandler(tb testing.TB, fleet bool, maxHosts int) *Handler {
	h := newBenchHandlerWith(tb, &RepeatViolators{Mode: "enforce"}, maxHosts)
	now := time.Now()
	served, escalated := benchFleetTables(benchSite, now)
	if fleet {
		h.state.served.SetFleet([][]enforce.SavedServed{served}, now)
		h.state.violators.SetFleet([][]enforce.EscalatedCrawler{escalated}, now)
		return h
	}
	h.state.served.Restore(served, now)
	h.state.violators.Restore(escalated, now)
	return h
}

// TestHandlerAllocsFleet holds a handler whose tables hold a fleet's
// serves and escalations to the allocations of one holding them as its
// own, request by request.
func TestHandlerAllocsFleet(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what is put back")
	}
	own := newTablesBenchHandler(t, false, 1001)
	fleet := newTablesBenchHandler(t, true, 1002)
	if own.state == fleet.state || fleet.state.served.FleetLen() == 0 || fleet.state.violators.FleetLen() == 0 || own.state.violators.OwnLen() == 0 {
		t.Fatal("the two handlers share a state, or their tables are empty")
	}
	for _, c := range handlerCases {
		t.Run(c.name, func(t *testing.T) {
			base := testing.AllocsPerRun(200, handlerRequest(t, own, c))
			got := testing.AllocsPerRun(200, handlerRequest(t, fleet, c))
			if got > base {
				t.Errorf("%s: %.1f allocations a request with the fleet's serves and escalations, %.1f with its own; want no more",
					c.name, got, base)
			}
		})
	}
	// The tables were consulted, not passed by: GPTBot's serve is found in
	// both, as its own and as the fleet's. Last, as the violation it judges
	// escalates GPTBot, whose range list holds the address.
	for name, h := range map[string]*Handler{"own": own, "fleet": fleet} {
		u, _ := url.Parse("/private/page.html")
		req := enforce.Request{Method: http.MethodGet, URL: u, URI: u.Path, Host: "example.com", Site: benchSite,
			UserAgent: benchGPTBot, ClientIP: "192.0.2.1", RemoteIP: "192.0.2.1", Now: time.Now()}
		jd := h.judge.Judge(context.Background(), &req)
		if len(jd.Evidence.Served) == 0 {
			t.Errorf("%s tables: GPTBot's serve at %s is not found", name, benchSite)
		}
		jd.Release()
	}
}

// BenchmarkHandlerFleet is BenchmarkHandler with violators enforce, its
// tables holding serves and escalations at the overlays' bounds, as the
// fleet's (tables=fleet) or as its own (tables=own).
func BenchmarkHandlerFleet(b *testing.B) {
	for i, kind := range []string{"own", "fleet"} {
		h := newTablesBenchHandler(b, kind == "fleet", 1001+i)
		for _, c := range handlerCases {
			b.Run(fmt.Sprintf("tables=%s/req=%s", kind, c.name), func(b *testing.B) {
				serve := handlerRequest(b, h, c)
				b.ReportAllocs()
				for b.Loop() {
					serve()
				}
			})
		}
	}
}
