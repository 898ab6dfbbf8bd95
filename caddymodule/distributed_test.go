package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// distributed reads alone (the defaults) or with a block of intervals,
// each given once, within bounds; every error names its line.
func TestUnmarshalCaddyfileDistributed(t *testing.T) {
	cases := []struct {
		input       string
		read, write time.Duration
		err         string
	}{
		{"distributed", 5 * time.Second, 5 * time.Second, ""},
		{"distributed {\n\t\tread_interval 200ms\n\t\twrite_interval 1s\n\t}", 200 * time.Millisecond, time.Second, ""},
		{"distributed {\n\t\twrite_interval 10m\n\t}", 5 * time.Second, 10 * time.Minute, ""},
		{"distributed on", 0, 0, "want no argument"},
		{"distributed {\n\t\tread_interval 50ms\n\t}", 0, 0, "read_interval 50ms: want between 100ms and 10m0s"},
		{"distributed {\n\t\twrite_interval 11m\n\t}", 0, 0, "write_interval 11m0s: want between 100ms and 10m0s"},
		{"distributed {\n\t\tread_interval soon\n\t}", 0, 0, `read_interval "soon"`},
		{"distributed {\n\t\tread_interval\n\t}", 0, 0, "want one duration"},
		{"distributed {\n\t\tread_interval 1s\n\t\tread_interval 2s\n\t}", 0, 0, "read_interval given twice"},
		{"distributed {\n\t\tpurge_age 1h\n\t}", 0, 0, `unrecognized subdirective "purge_age"`},
	}
	for _, c := range cases {
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("robots_enforce {\n\t" + c.input + "\n}"))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "Testfile:") {
				t.Errorf("UnmarshalCaddyfile(%q) = %v, want an error with %q and its line", c.input, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("UnmarshalCaddyfile(%q) = %v", c.input, err)
			continue
		}
		if read, write := h.Distributed.intervals(); read != c.read || write != c.write {
			t.Errorf("UnmarshalCaddyfile(%q): intervals %v, %v; want %v, %v", c.input, read, write, c.read, c.write)
		}
	}
	// JSON is held to the same bounds.
	h := Handler{Mode: "enforce", Status: 403, Distributed: &Distributed{ReadInterval: caddy.Duration(time.Millisecond)}}
	if err := h.validate(); err == nil || !strings.Contains(err.Error(), "distributed read_interval 1ms") {
		t.Errorf("validate with read_interval 1ms = %v", err)
	}
}

// A state is distributed while any handler using it asks for it, at the
// shortest intervals they ask for; once the last lets go, it writes every
// minute again and reads nothing.
func TestFleetSettings(t *testing.T) {
	f := &fleetSync{uses: make(map[*Distributed]int), wake: make(chan struct{}, 1)}
	f.settings.Store(&fleetSettings{write: saveInterval})
	slow := &Distributed{ReadInterval: caddy.Duration(time.Minute)}
	fast := &Distributed{WriteInterval: caddy.Duration(time.Second)}
	releaseSlow := f.use(slow)
	releaseFast := f.use(fast)
	releaseNone := f.use(nil)
	if s := f.settings.Load(); !s.distributed || s.read != 5*time.Second || s.write != time.Second {
		t.Errorf("two handlers: %+v, want distributed, read 5s (fast's default), write 1s", s)
	}
	releaseFast()
	if s := f.settings.Load(); !s.distributed || s.read != time.Minute || s.write != 5*time.Second {
		t.Errorf("slow alone: %+v, want read 1m, write 5s", s)
	}
	releaseSlow()
	releaseNone()
	if s := f.settings.Load(); s.distributed || s.write != saveInterval {
		t.Errorf("no handler distributed: %+v, want writes every minute, no reads", s)
	}
}
