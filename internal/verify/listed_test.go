package verify

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
)

// ListedTokens names every token whose lists hold an address, a prefix
// inside another list's wider one included, and nothing for an address
// in no list; it allocates nothing.
func TestListedTokens(t *testing.T) {
	wide := writeFile(t, "wide.json", rangeJSON("192.0.2.0/24", "2001:db8::/32"))
	narrow := writeFile(t, "narrow.json", rangeJSON("192.0.2.128/25"))
	other := writeFile(t, "other.json", rangeJSON("198.51.100.0/24"))
	v := newTestVerifier(t, Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true, Now: newClock().Now,
		RangeOverrides: []RangeOverride{
			{Token: "WideBot", Source: wide},
			{Token: "NarrowBot", Source: narrow},
			{Token: "OtherBot", Source: other},
			{Token: "OtherBot-News", Source: other},
		}})
	for addr, want := range map[string][]string{
		"192.0.2.1":        {"WideBot"},
		"192.0.2.200":      {"WideBot", "NarrowBot"},
		"198.51.100.1":     {"OtherBot", "OtherBot-News"},
		"::ffff:192.0.2.1": {"WideBot"},
		"2001:db8::1":      {"WideBot"},
		"203.0.113.1":      nil,
	} {
		got := v.ListedTokens(netip.MustParseAddr(addr))
		if !slices.Equal(got, want) {
			t.Errorf("ListedTokens(%s) = %v, want %v", addr, got, want)
		}
	}
	if v.ListedTokens(netip.Addr{}) != nil {
		t.Error("ListedTokens of no address names tokens")
	}
	allocs := testing.AllocsPerRun(100, func() {
		v.ListedTokens(netip.MustParseAddr("192.0.2.200"))
		v.ListedTokens(netip.MustParseAddr("203.0.113.1"))
	})
	if allocs != 0 {
		t.Errorf("ListedTokens allocates %v times, want none", allocs)
	}
}

// BenchmarkListedTokens is what undeclared bind costs every request whose
// User-Agent names no crawler a group names, browsers included: one
// prefix lookup over the built-in lists' size of table.
func BenchmarkListedTokens(b *testing.B) {
	var prefixes []string
	for i := range 2000 {
		prefixes = append(prefixes, fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))
	}
	list := writeFile(b, "many.json", rangeJSON(prefixes...))
	v := newTestVerifier(b, Config{NoBuiltinLists: true, NoBuiltinReverseDNS: true,
		RangeOverrides: []RangeOverride{{Token: "ManyBot", Source: list}}})
	for _, bc := range []struct{ name, addr string }{{"browser", "203.0.113.9"}, {"listed", "10.3.4.5"}} {
		addr := netip.MustParseAddr(bc.addr)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.ListedTokens(addr)
			}
		})
	}
}
