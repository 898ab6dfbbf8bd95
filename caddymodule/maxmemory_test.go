package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"
)

// A ByteSize reads from JSON as a number of octets or a size with a
// unit, up to 1 TiB (max_memory's most), for max_size and max_memory.
func TestByteSizeJSON(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want ByteSize
		err  string
	}{
		{`1048576`, 1 << 20, ""},
		{`"1MiB"`, 1 << 20, ""},
		{`"256MiB"`, 256 << 20, ""},
		{`"1GiB"`, 1 << 30, ""},
		{`"1TiB"`, 1 << 40, ""},
		{`"2TiB"`, 0, `size "2TiB": want a size such as 500KiB or 1MiB, at most 1TiB`},
		{`"lots"`, 0, `size "lots"`},
		{`true`, 0, "want a number of octets or a size"},
	} {
		var h struct {
			MaxMemory ByteSize `json:"max_memory"`
		}
		err := json.Unmarshal([]byte(`{"max_memory": `+tt.in+`}`), &h)
		switch {
		case tt.err == "" && (err != nil || h.MaxMemory != tt.want):
			t.Errorf("max_memory %s: %d, %v; want %d", tt.in, h.MaxMemory, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("max_memory %s: error %v, want one containing %q", tt.in, err, tt.err)
		}
	}
}

// Handlers that differ in max_memory share no state, and one that leaves
// it at its default keeps the state key it had before the option was
// there, so that a state saved by an older version is found again.
func TestStateKeyMaxMemory(t *testing.T) {
	key := func(m ByteSize) string {
		h := Handler{Source: &Source{Kind: "upstream"}, MaxHosts: 64, MaxMemory: m}
		k, err := h.stateKey()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	// The key of these settings before max_memory: the hash of
	// {"Source":{"kind":"upstream"},"Unreachable":"","Refresh":0,"MaxSize":0,"FetchTimeout":0,"MaxHosts":64,"NewHosts":null}.
	const before = "robots_enforce/state/4c87ee2ed82ec5351299ccecd069d486"
	if got := key(0); got != before {
		t.Errorf("the key at the default max_memory is %s, want %s as before the option", got, before)
	}
	if key(256<<20) == key(0) || key(1<<30) == key(256<<20) {
		t.Error("handlers that differ in max_memory share a state key")
	}
}
