package caddymodule

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// TestDialPolicy checks where a redirect may lead, given where the site
// is.
func TestDialPolicy(t *testing.T) {
	ap := netip.MustParseAddrPort
	loopSite := []netip.AddrPort{ap("127.0.0.1:8080")}
	privSite := []netip.AddrPort{ap("10.0.0.5:443")}
	pubSite := []netip.AddrPort{ap("203.0.113.10:443")}
	for _, tt := range []struct {
		to   string
		site []netip.AddrPort
		want bool
	}{
		{"198.51.100.7:443", pubSite, true},
		{"[2001:db8::1]:443", pubSite, true},
		{"198.51.100.7:443", nil, true},
		// This machine: only back to the site's own listener.
		{"127.0.0.1:2019", pubSite, false},
		{"127.0.0.1:2019", loopSite, false}, // the admin endpoint
		{"127.0.0.1:8080", loopSite, true},
		{"[::1]:8080", loopSite, true},
		{"127.0.0.2:8080", loopSite, true},
		{"[::ffff:127.0.0.1]:2019", loopSite, false},
		// The private network: only from a site in it.
		{"10.1.2.3:80", pubSite, false},
		{"192.168.1.1:80", pubSite, false},
		{"172.16.0.1:80", nil, false},
		{"100.64.0.1:80", pubSite, false},
		{"[fd00::1]:80", pubSite, false},
		{"10.1.2.3:80", privSite, true},
		{"10.1.2.3:80", loopSite, false},
		// Never: cloud metadata, unspecified, multicast.
		{"169.254.169.254:80", privSite, false},
		{"[fe80::1]:80", loopSite, false},
		{"0.0.0.0:8080", loopSite, false},
		{"[::]:8080", loopSite, false},
		{"224.0.0.1:80", pubSite, false},
		{"255.255.255.255:80", pubSite, false},
	} {
		if got := (&dialPolicy{}).allows(ap(tt.to), tt.site); got != tt.want {
			t.Errorf("allows(%s, site %v) = %v, want %v", tt.to, tt.site, got, tt.want)
		}
	}
}

// TestDialGuard dials real loopback listeners: a request that carries a
// policy reaches the site's own listener and nothing else on this
// machine; one without (the url source's own URL) goes where it points.
func TestDialGuard(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("site")) }))
	defer site.Close()
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"admin":true}`)) }))
	defer admin.Close()
	g := &dialGuard{dial: (&net.Dialer{}).DialContext, resolver: net.DefaultResolver}
	tr := &http.Transport{DialContext: g.DialContext}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	get := func(ctx context.Context, url string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	sitePolicy := &dialPolicy{site: netip.MustParseAddrPort(strings.TrimPrefix(site.URL, "http://"))}
	withSite := withDialPolicy(t.Context(), sitePolicy)
	if err := get(withSite, site.URL+"/robots.txt"); err != nil {
		t.Errorf("to the site's own listener: %v", err)
	}
	if err := get(withSite, admin.URL+"/config/"); !errors.Is(err, errRefusedAddress) {
		t.Errorf("to another service on this machine: %v, want %v", err, errRefusedAddress)
	}
	if err := get(withDialPolicy(t.Context(), urlPolicy(site.URL+"/robots.txt")), admin.URL+"/config/"); !errors.Is(err, errRefusedAddress) {
		t.Errorf("from a url source on this machine to another of its services: %v, want %v", err, errRefusedAddress)
	}
	if err := get(withDialPolicy(t.Context(), urlPolicy(site.URL+"/robots.txt")), site.URL+"/robots2.txt"); err != nil {
		t.Errorf("from a url source to itself: %v", err)
	}
	if err := get(t.Context(), admin.URL+"/anything"); err != nil {
		t.Errorf("without a policy (the url source's own URL): %v", err)
	}
}
