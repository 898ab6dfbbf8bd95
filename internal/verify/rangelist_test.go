package verify

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// draft-illyes-webbotauth-jafar §3: the format, and what is not in it.
func TestParseRangeList(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []string // prefixes, when it parses
		wantErr string   // substring of the error, when it does not
	}{
		{name: "both families", body: rangeJSON("66.249.64.0/27", "2001:4860:4801:10::/64"),
			want: []string{"66.249.64.0/27", "2001:4860:4801:10::/64"}},
		{name: "extra members ignored", body: `{"syncToken":"1","creationTime":"x","prefixes":[{"ipv4Prefix":"192.0.2.0/24","service":"a"}]}`,
			want: []string{"192.0.2.0/24"}},
		{name: "no creationTime", body: `{"prefixes":[{"ipv4Prefix":"192.0.2.0/24"}]}`, want: []string{"192.0.2.0/24"}},
		{name: "host bits masked", body: rangeJSON("192.0.2.7/24"), want: []string{"192.0.2.0/24"}},
		{name: "leading white space", body: "\n " + rangeJSON("192.0.2.0/24"), want: []string{"192.0.2.0/24"}},
		{name: "not json", body: "<html>", wantErr: "not a JSON object"},
		{name: "empty", body: "", wantErr: "not a JSON object"},
		{name: "array", body: `[{"ipv4Prefix":"192.0.2.0/24"}]`, wantErr: "not a JSON object"},
		{name: "no prefixes member", body: `{"creationTime":"x"}`, wantErr: `no "prefixes"`},
		{name: "no prefix", body: `{"prefixes":[]}`, wantErr: "no prefixes"},
		{name: "prefixes not array", body: `{"prefixes":"1.2.3.0/24"}`, wantErr: "bad range list"},
		{name: "neither", body: `{"prefixes":[{"ipPrefix":"192.0.2.0/24"}]}`, wantErr: "neither"},
		{name: "both", body: `{"prefixes":[{"ipv4Prefix":"192.0.2.0/24","ipv6Prefix":"2001:db8::/32"}]}`, wantErr: "both"},
		{name: "v6 in v4 field", body: `{"prefixes":[{"ipv4Prefix":"2001:db8::/32"}]}`, wantErr: "not IPv4"},
		{name: "v4 in v6 field", body: `{"prefixes":[{"ipv6Prefix":"192.0.2.0/24"}]}`, wantErr: "not IPv6"},
		{name: "mapped v4 in v6 field", body: `{"prefixes":[{"ipv6Prefix":"::ffff:192.0.2.0/120"}]}`, wantErr: "IPv4-mapped"},
		{name: "bare address", body: `{"prefixes":[{"ipv4Prefix":"192.0.2.1"}]}`, wantErr: "prefixes[0]"},
		{name: "garbage prefix", body: `{"prefixes":[{"ipv4Prefix":"192.0.2.0/24"},{"ipv4Prefix":"banana"}]}`, wantErr: "prefixes[1]"},
		{name: "too wide v4", body: rangeJSON("0.0.0.0/0"), wantErr: "implausibly wide"},
		{name: "too wide v6", body: rangeJSON("2000::/3"), wantErr: "implausibly wide"},
		{name: "widest allowed v4", body: rangeJSON("17.0.0.0/8"), want: []string{"17.0.0.0/8"}},
		{name: "zone", body: `{"prefixes":[{"ipv6Prefix":"fe80::%eth0/64"}]}`, wantErr: "prefixes[0]"},
		{name: "number", body: `{"prefixes":[{"ipv4Prefix":17}]}`, wantErr: "bad range list"},
		{name: "too large", body: `{"prefixes":[],"pad":"` + strings.Repeat("x", MaxListSize) + `"}`, wantErr: "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRangeList([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrBadRangeList) {
					t.Fatalf("ParseRangeList(%.60q) error = %v, want one containing %q wrapping ErrBadRangeList", tt.body, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRangeList(%.60q): %v", tt.body, err)
			}
			if len(got.Prefixes) != len(tt.want) {
				t.Fatalf("ParseRangeList(%.60q) = %v, want %v", tt.body, got.Prefixes, tt.want)
			}
			for i, w := range tt.want {
				if got.Prefixes[i] != netip.MustParsePrefix(w) {
					t.Errorf("prefix %d = %v, want %v", i, got.Prefixes[i], w)
				}
			}
		})
	}
}

func TestParseRangeListPrefixLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"prefixes":[`)
	for i := range MaxPrefixes + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"ipv4Prefix":"10.0.0.0/32"}`)
	}
	b.WriteString("]}")
	if _, err := ParseRangeList([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("ParseRangeList(%d prefixes) error = %v, want the prefix limit", MaxPrefixes+1, err)
	}
}

// FuzzParseRangeList checks properties of whatever parses: every prefix is
// masked, of a plausible width, and a list rebuilt from the parsed
// prefixes parses to the same prefixes (the parser agrees with itself
// through a round trip).
func FuzzParseRangeList(f *testing.F) {
	for _, s := range []string{
		rangeJSON("66.249.64.0/27", "2001:4860:4801:10::/64"), // Google's shape
		`{"creationTime":"2024-04-17T23:00:00.000000","prefixes":[{"ipv4Prefix":"157.55.39.0/24"}]}`,
		`{"prefixes":[{"ipv6Prefix":"2a03:2880:f800::/48"}]}`,
		`{"prefixes":[{"ipv4Prefix":"1.2.3.4/33"}]}`,
		`{"prefixes":[{"ipv4Prefix":"1.2.3.4/24","ipv6Prefix":"::/0"}]}`,
		`{"prefixes":[{}]}`, `{"prefixes":null}`, `{}`, `[]`, `{"prefixes":[{"ipv4Prefix":"\u0031.2.3.0/24"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rl, err := ParseRangeList(body)
		if err != nil {
			if !errors.Is(err, ErrBadRangeList) {
				t.Fatalf("error %v does not wrap ErrBadRangeList", err)
			}
			return
		}
		if len(rl.Prefixes) == 0 || len(rl.Prefixes) > MaxPrefixes {
			t.Fatalf("parsed %d prefixes", len(rl.Prefixes))
		}
		strs := make([]string, len(rl.Prefixes))
		for i, p := range rl.Prefixes {
			if p != p.Masked() || !p.IsValid() || p.Addr().Zone() != "" {
				t.Fatalf("prefix %v not masked or valid", p)
			}
			if p.Addr().Is4() && p.Bits() < minIPv4Bits || p.Addr().Is6() && p.Bits() < minIPv6Bits {
				t.Fatalf("prefix %v too wide", p)
			}
			strs[i] = p.String()
		}
		again, err := ParseRangeList([]byte(rangeJSON(strs...)))
		if err != nil {
			t.Fatalf("round trip of %v: %v", strs, err)
		}
		for i := range again.Prefixes {
			if again.Prefixes[i] != rl.Prefixes[i] {
				t.Fatalf("round trip changed prefix %d: %v -> %v", i, rl.Prefixes[i], again.Prefixes[i])
			}
		}
	})
}
