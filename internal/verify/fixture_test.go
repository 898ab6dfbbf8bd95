package verify

import (
	"net/netip"
	"os"
	"testing"
)

// TestFixtureRangeList parses the synthetic list under testdata/verify and
// uses it as an operator's file for a token.
func TestFixtureRangeList(t *testing.T) {
	const path = "../../testdata/verify/ranges-synthetic.json"
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := ParseRangeList(body)
	if err != nil || len(rl.Prefixes) != 6 || rl.CreationTime != "2026-11-01T23:00:00.000000" {
		t.Fatalf("ParseRangeList(%s) = %d prefixes, %q, %v", path, len(rl.Prefixes), rl.CreationTime, err)
	}
	v := newTestVerifier(t, Config{RangeOverrides: []RangeOverride{{Token: "ExampleBot", Source: path}}, Now: newClock().Now})
	for addr, want := range map[string]Outcome{
		"192.0.2.40":            Verified,
		"2001:db8:4801:7429::1": Verified,
		"192.0.2.70":            Forged,
	} {
		if got := v.Verify("ExampleBot", netip.MustParseAddr(addr), nil); got.Outcome != want {
			t.Errorf("Verify(ExampleBot, %s) = %+v, want %v", addr, got, want)
		}
	}
}

func TestFixtureDirectory(t *testing.T) {
	body, err := os.ReadFile("../../testdata/verify/directory-rfc9421-test-key.json")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := parseDirectory(body)
	if _, ok := keys[rfcEd25519Thumbprint]; err != nil || !ok {
		t.Fatalf("parseDirectory = %v, %v; want the RFC test key by its thumbprint", keys, err)
	}
}
