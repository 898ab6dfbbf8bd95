package enforce

import (
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
)

// TestWildcardAcceptance is the acceptance test of the "crawlers" policy:
// by default a "*" group's "Disallow: /api/" holds crawlers, and not a
// site's own apps, API clients, health checks and monitors, which the
// former default held to it.
func TestWildcardAcceptance(t *testing.T) {
	snap := inlineSnapshot(t, "User-agent: *\nDisallow: /api/\n")
	tests := []struct {
		name    string
		ua      string
		crawler bool // a crawler: bound under the default policy
	}{
		{"okhttp", "okhttp/4.12.0", false},
		{"python-requests", "python-requests/2.31.0", false},
		{"axios", "axios/1.6.8", false},
		{"Go-http-client", "Go-http-client/2.0", false},
		{"curl", "curl/8.5.0", false},
		{"kube-probe", "kube-probe/1.29", false},
		{"Prometheus", "Prometheus/2.51.0", false},
		{"FooCrawler", "FooCrawler/1.0 (+https://foo.example/crawler)", true},
		{"AhrefsBot", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", true},
		{"CCBot", testua.CCBot, true},
	}
	byDefault := NewDecider(Policy{}, nil)
	automated := NewDecider(Policy{Wildcard: agent.WildcardAutomated}, nil)
	for _, tt := range tests {
		var rd Readings
		req := Query{Target: "/api/v1/items", UserAgent: tt.ua}
		dec := byDefault.Decide(snap, req, &rd)
		wantReason := ReasonNotAutomated
		if tt.crawler {
			wantReason = ReasonWildcardGroup
		}
		if dec.Allowed == tt.crawler || dec.Reason != wantReason {
			t.Errorf("%s: default policy: Decide(%q, /api/v1/items) = allowed %v, %v; want %v, %v",
				tt.name, tt.ua, dec.Allowed, dec.Reason, !tt.crawler, wantReason)
		}
		if got, want := dec.Classification.Class, map[bool]agent.ClientClass{true: agent.ClassCrawler, false: agent.ClassAutomated}[tt.crawler]; got != want {
			t.Errorf("%s: class %v, want %v", tt.name, got, want)
		}
		// All of them are automated: the "automated" policy binds them all.
		if dec := automated.Decide(snap, req, &rd); dec.Allowed || dec.Reason != ReasonWildcardGroup {
			t.Errorf("%s: automated policy: Decide(%q, /api/v1/items) = allowed %v, %v; want denied by the \"*\" group",
				tt.name, tt.ua, dec.Allowed, dec.Reason)
		}
		// Outside the disallowed path, everyone passes.
		if dec := byDefault.Decide(snap, Query{Target: "/", UserAgent: tt.ua}, &rd); !dec.Allowed {
			t.Errorf("%s: Decide(%q, /) denied", tt.name, tt.ua)
		}
	}
	// Browsers pass under both.
	for _, d := range []*Decider{byDefault, automated} {
		var rd Readings
		if dec := d.Decide(snap, Query{Target: "/api/v1/items", UserAgent: testua.Chrome}, &rd); !dec.Allowed || dec.Reason != ReasonNotAutomated {
			t.Errorf("Decide(Chrome, /api/v1/items) = allowed %v, %v; want allowed, not_automated", dec.Allowed, dec.Reason)
		}
	}
}
