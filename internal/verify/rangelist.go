package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Limits of a range list, each with its reason.
const (
	// MaxListSize bounds a range list's body. The largest published list
	// (Google's user-triggered fetchers) is about 100 KB; 4 MiB leaves room
	// for growth while a hostile or broken server cannot make the verifier
	// hold more.
	MaxListSize = 4 << 20
	// MaxPrefixes bounds the prefixes of one list: published lists hold a
	// few thousand at most, and each prefix costs table memory.
	MaxPrefixes = 100000
	// minIPv4Bits and minIPv6Bits reject implausibly wide prefixes: one
	// line such as 0.0.0.0/0 in a list (by mistake or by a compromised
	// server) would verify every forger. Apple's 17.0.0.0/8 is the widest
	// genuine IPv4 prefix known.
	minIPv4Bits = 8
	minIPv6Bits = 16
)

// ErrBadRangeList is wrapped by every error ParseRangeList returns.
var ErrBadRangeList = errors.New("bad range list")

// RangeList is a parsed range list.
type RangeList struct {
	// CreationTime is the list's own creationTime field, as written ("" if
	// absent). It is informative only: operators do not all keep it current.
	CreationTime string
	// Prefixes are the list's prefixes, masked, in file order.
	Prefixes []netip.Prefix
}

type rawRangeList struct {
	CreationTime *string          `json:"creationTime"`
	Prefixes     *[]rawRangeEntry `json:"prefixes"`
}

type rawRangeEntry struct {
	IPv4 *string `json:"ipv4Prefix"`
	IPv6 *string `json:"ipv6Prefix"`
}

// ParseRangeList parses a range list in the format the major operators
// publish, which draft-illyes-webbotauth-jafar (§3, "IP address list
// format") writes down:
//
//	{"creationTime": "2024-04-17T23:00:00.000000",
//	 "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}
//
// Other members (Google's "syncToken", per-entry labels) are ignored. Each
// entry holds exactly one of ipv4Prefix and ipv6Prefix, of its family.
// Host bits are masked off. A list with no prefix, a prefix wider than /8
// (IPv4) or /16 (IPv6), more than MaxPrefixes prefixes, or a body over
// MaxListSize is rejected: keeping the last good copy is better than
// trusting it.
func ParseRangeList(body []byte) (RangeList, error) {
	if len(body) > MaxListSize {
		return RangeList{}, fmt.Errorf("%w: %d bytes, limit %d", ErrBadRangeList, len(body), MaxListSize)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return RangeList{}, fmt.Errorf("%w: not a JSON object", ErrBadRangeList)
	}
	var raw rawRangeList
	if err := json.Unmarshal(body, &raw); err != nil {
		return RangeList{}, fmt.Errorf("%w: %w", ErrBadRangeList, err)
	}
	if raw.Prefixes == nil {
		return RangeList{}, fmt.Errorf("%w: no \"prefixes\" member", ErrBadRangeList)
	}
	entries := *raw.Prefixes
	if len(entries) == 0 {
		return RangeList{}, fmt.Errorf("%w: no prefixes", ErrBadRangeList)
	}
	if len(entries) > MaxPrefixes {
		return RangeList{}, fmt.Errorf("%w: %d prefixes, limit %d", ErrBadRangeList, len(entries), MaxPrefixes)
	}
	out := RangeList{Prefixes: make([]netip.Prefix, 0, len(entries))}
	if raw.CreationTime != nil {
		out.CreationTime = *raw.CreationTime
	}
	for i, e := range entries {
		p, err := e.prefix()
		if err != nil {
			return RangeList{}, fmt.Errorf("%w: %w", ErrBadRangeList, &entryError{index: i, err: err})
		}
		out.Prefixes = append(out.Prefixes, p)
	}
	return out, nil
}

func (e rawRangeEntry) prefix() (netip.Prefix, error) {
	var s string
	var want4 bool
	switch {
	case e.IPv4 != nil && e.IPv6 != nil:
		return netip.Prefix{}, errors.New("both ipv4Prefix and ipv6Prefix")
	case e.IPv4 != nil:
		s, want4 = *e.IPv4, true
	case e.IPv6 != nil:
		s = *e.IPv6
	default:
		return netip.Prefix{}, errors.New("neither ipv4Prefix nor ipv6Prefix")
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a := p.Addr()
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q: zoned address", s)
	}
	switch {
	case want4 && !a.Is4():
		return netip.Prefix{}, fmt.Errorf("ipv4Prefix %q is not IPv4", s)
	case !want4 && !a.Is6():
		return netip.Prefix{}, fmt.Errorf("ipv6Prefix %q is not IPv6", s)
	case !want4 && a.Is4In6():
		return netip.Prefix{}, fmt.Errorf("ipv6Prefix %q is an IPv4-mapped address", s)
	case want4 && p.Bits() < minIPv4Bits, !want4 && p.Bits() < minIPv6Bits:
		return netip.Prefix{}, fmt.Errorf("%q is implausibly wide", s)
	}
	return p.Masked(), nil
}

// entryError is a bad entry of a list's prefixes, by index.
type entryError struct {
	index int
	err   error
}

func (e *entryError) Error() string { return fmt.Sprintf("prefixes[%d]: %v", e.index, e.err) }
func (e *entryError) Unwrap() error { return e.err }

// entryOffset returns the offset in body of the entry of "prefixes" an
// entryError names, walking the JSON again; -1 when it cannot be found.
func (e *entryError) entryOffset(body []byte) int64 {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return -1
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return -1
		}
		if key != "prefixes" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return -1
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return -1
		}
		for i := 0; dec.More(); i++ {
			if i == e.index {
				off := dec.InputOffset()
				for off < int64(len(body)) && strings.IndexByte(" \t\r\n,", body[off]) >= 0 {
					off++
				}
				return off
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return -1
			}
		}
	}
	return -1
}
