package robotsbuf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/logging"
)

// unitJSONEqual reports whether a and b are the same JSON value.
func unitJSONEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

// The Caddyfile of the README gives the module the JSON the README shows.
func TestBufferedCaddyfileMatchesJSON(t *testing.T) {
	const cf = `robots_buffered {
		flush_interval 100ms
		buffer_size 64KiB
		output file /var/log/caddy/robots.log {
			roll_size 100MiB
		}
	}`
	const js = `{"output": "robots_buffered", "flush_interval": "100ms", "buffer_size": 65536,
		"writer": {"output": "file", "filename": "/var/log/caddy/robots.log", "roll_size_mb": 100}}`
	var fromCF Writer
	if err := fromCF.UnmarshalCaddyfile(caddyfile.NewTestDispenser(cf)); err != nil {
		t.Fatal(err)
	}
	var fromJSON Writer
	if err := json.Unmarshal([]byte(js), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if fromCF.FlushInterval != fromJSON.FlushInterval || fromCF.BufferSize != fromJSON.BufferSize ||
		!unitJSONEqual(t, fromCF.WriterRaw, fromJSON.WriterRaw) {
		t.Errorf("Caddyfile gives %v, %d, %s; the JSON %v, %d, %s", time.Duration(fromCF.FlushInterval), fromCF.BufferSize, fromCF.WriterRaw,
			time.Duration(fromJSON.FlushInterval), fromJSON.BufferSize, fromJSON.WriterRaw)
	}
}

func TestBufferedCaddyfile(t *testing.T) {
	for _, tt := range []struct {
		name, input string
		interval    time.Duration
		size        int
		writer      string // the inner writer's JSON
	}{
		{"defaults", "robots_buffered {\n output file /l\n}", 0, 0, `{"output": "file", "filename": "/l"}`},
		{"stderr", "robots_buffered {\n output stderr\n flush_interval 10s\n}", 10 * time.Second, 0, `{"output": "stderr"}`},
		{"net", "robots_buffered {\n buffer_size 4KiB\n output net tcp/127.0.0.1:5140 {\n  dial_timeout 5s\n }\n flush_interval 1ms\n}",
			time.Millisecond, 4096, `{"output": "net", "address": "tcp/127.0.0.1:5140", "dial_timeout": 5000000000}`},
		{"largest", "robots_buffered {\n buffer_size 16MiB\n output file /l {\n  roll_size 16MiB\n }\n}", 0, 16 << 20,
			`{"output": "file", "filename": "/l", "roll_size_mb": 16}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var bw Writer
			if err := bw.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input)); err != nil {
				t.Fatalf("UnmarshalCaddyfile(%q) = %v", tt.input, err)
			}
			if time.Duration(bw.FlushInterval) != tt.interval || bw.BufferSize != tt.size || !unitJSONEqual(t, bw.WriterRaw, []byte(tt.writer)) {
				t.Errorf("UnmarshalCaddyfile(%q) = %v, %d, %s; want %v, %d, %s", tt.input,
					time.Duration(bw.FlushInterval), bw.BufferSize, bw.WriterRaw, tt.interval, tt.size, tt.writer)
			}
		})
	}
}

func TestBufferedCaddyfileErrors(t *testing.T) {
	for _, tt := range []struct{ name, input, want string }{
		{"no output", "robots_buffered {\n flush_interval 1s\n}", "robots_buffered: no output"},
		{"empty", "robots_buffered", "robots_buffered: no output"},
		{"argument", "robots_buffered /l", "wrong argument count"},
		{"unknown", "robots_buffered {\n output stderr\n flush 1s\n}", `robots_buffered: unrecognized subdirective "flush", at Testfile:3`},
		{"output twice", "robots_buffered {\n output stderr\n output stdout\n}", "output given twice: first at Testfile:2; give it once, at Testfile:3"},
		{"interval twice", "robots_buffered {\n flush_interval 1s\n output stderr\n flush_interval 2s\n}", "flush_interval given twice"},
		{"size twice", "robots_buffered {\n buffer_size 4KiB\n buffer_size 8KiB\n output stderr\n}", "buffer_size given twice"},
		{"interval not a duration", "robots_buffered {\n flush_interval soon\n output stderr\n}", `flush_interval "soon"`},
		{"interval too short", "robots_buffered {\n flush_interval 500us\n output stderr\n}", "flush_interval 500us: want between 1ms and 10s"},
		{"interval zero", "robots_buffered {\n flush_interval 0s\n output stderr\n}", "flush_interval 0s: want between 1ms and 10s"},
		{"interval too long", "robots_buffered {\n flush_interval 11s\n output stderr\n}", "flush_interval 11s: want between 1ms and 10s"},
		{"interval no value", "robots_buffered {\n flush_interval\n output stderr\n}", "wrong argument count"},
		{"size not a size", "robots_buffered {\n buffer_size lots\n output stderr\n}", `buffer_size "lots": not a size`},
		{"size too small", "robots_buffered {\n buffer_size 4095\n output stderr\n}", "buffer_size 4095: want between 4KiB and 16MiB"},
		{"size too large", "robots_buffered {\n buffer_size 17MiB\n output stderr\n}", "buffer_size 17MiB: want between 4KiB and 16MiB"},
		{"size two values", "robots_buffered {\n buffer_size 4KiB 8KiB\n output stderr\n}", "wrong argument count"},
		{"output no writer", "robots_buffered {\n output\n}", "wrong argument count"},
		{"output unknown writer", "robots_buffered {\n output tape /dev/st0\n}", "caddy.logging.writers.tape"},
		{"output writer's error", "robots_buffered {\n output file\n}", "wrong argument count"},
		{"output stream argument", "robots_buffered {\n output stderr now\n}", "wrong argument count"},
		{"nested", "robots_buffered {\n output robots_buffered {\n  output stderr\n }\n}", "its writer is robots_buffered too"},
		{"roll too small", "robots_buffered {\n buffer_size 2MiB\n output file /l {\n  roll_size 1MiB\n }\n}", "larger than its file writer's roll_size (1.0 MiB)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var bw Writer
			err := bw.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("UnmarshalCaddyfile(%q) = %v, want an error containing %q", tt.input, err, tt.want)
			}
		})
	}
}

func TestBufferedValidate(t *testing.T) {
	no := false
	for _, tt := range []struct {
		name string
		bw   Writer
		want string // "" for valid
	}{
		{"defaults", Writer{}, ""},
		{"bounds low", Writer{FlushInterval: caddy.Duration(time.Millisecond), BufferSize: 4 << 10}, ""},
		{"bounds high", Writer{FlushInterval: caddy.Duration(10 * time.Second), BufferSize: 16 << 20}, ""},
		{"interval too short", Writer{FlushInterval: caddy.Duration(time.Millisecond - 1)}, "flush_interval 999.999µs"},
		{"interval too long", Writer{FlushInterval: caddy.Duration(10*time.Second + 1)}, "flush_interval 10.000000001s"},
		{"interval negative", Writer{FlushInterval: -1}, "flush_interval -1ns"},
		{"size too small", Writer{BufferSize: 4<<10 - 1}, "buffer_size 4095"},
		{"size too large", Writer{BufferSize: 16<<20 + 1}, "buffer_size 16777217"},
		{"size negative", Writer{BufferSize: -1}, "buffer_size -1"},
		{"both", Writer{FlushInterval: -1, BufferSize: -1}, "robots_buffered: flush_interval -1ns: want between 1ms and 10s\nbuffer_size -1"},
		{"rolled file fits", Writer{BufferSize: 1 << 20, inner: &logging.FileWriter{RollSizeMB: 1}}, ""},
		{"rolled file too small", Writer{BufferSize: 1<<20 + 1, inner: &logging.FileWriter{RollSizeMB: 1}}, "roll_size (1.0 MiB)"},
		{"file not rolled", Writer{BufferSize: 16 << 20, inner: &logging.FileWriter{RollSizeMB: 1, Roll: &no}}, ""},
		{"nested", Writer{inner: &Writer{}}, "its writer is robots_buffered too"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.bw.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

// The module as Caddy loads it from JSON: provisioned with its defaults,
// validated, opened on a real file, written to and closed.
func TestBufferedModuleLoad(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	file := filepath.Join(t.TempDir(), "robots.log")
	cfg, _ := json.Marshal(map[string]any{"writer": map[string]any{"output": "file", "filename": file}})
	mod, err := ctx.LoadModuleByID("caddy.logging.writers.robots_buffered", cfg)
	if err != nil {
		t.Fatalf("loading %s: %v", cfg, err)
	}
	bw := mod.(*Writer)
	if time.Duration(bw.FlushInterval) != defaultFlushInterval || bw.BufferSize != defaultBufferSize {
		t.Errorf("defaults %v, %d; want %v, %d", time.Duration(bw.FlushInterval), bw.BufferSize, defaultFlushInterval, defaultBufferSize)
	}
	if key, want := bw.WriterKey(), "robots_buffered:100000000:65536:file:"+file; key != want {
		t.Errorf("WriterKey() = %q, want %q", key, want)
	}
	w, err := bw.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, "{\"msg\":\"robots.txt decision\"}\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "{\"msg\":\"robots.txt decision\"}\n" {
		t.Errorf("the file after Close: %q, %v", data, err)
	}

	for _, bad := range []string{
		`{}`,
		`{"writer": {"output": "stderr"}, "flush_interval": "1h"}`,
		`{"writer": {"output": "stderr"}, "buffer_size": 100}`,
		`{"writer": {"output": "no_such_writer"}}`,
	} {
		if _, err := ctx.LoadModuleByID("caddy.logging.writers.robots_buffered", []byte(bad)); err == nil || !strings.Contains(err.Error(), "robots_buffered") {
			t.Errorf("loading %s: %v, want an error of robots_buffered", bad, err)
		}
	}
}

// unitOpener is an inner writer's opener that counts what it opened and
// closed, and keeps what is written in rec.
type unitOpener struct {
	key            string
	opened, closed int
	rec            recWriter
}

func (o *unitOpener) String() string    { return "unit " + o.key }
func (o *unitOpener) WriterKey() string { return "unit:" + o.key }
func (o *unitOpener) OpenWriter() (io.WriteCloser, error) {
	o.opened++
	return unitCloser{o}, nil
}

type unitCloser struct{ o *unitOpener }

func (c unitCloser) Write(p []byte) (int, error) { return c.o.rec.Write(p) }
func (c unitCloser) Close() error                { c.o.closed++; return nil }

// Two buffered writers of different options around the same writer, as
// across a reload that changes flush_interval, share one inner writer,
// which closes with the last.
func TestBufferedSharesInner(t *testing.T) {
	o := &unitOpener{key: t.Name()}
	a := &Writer{FlushInterval: caddy.Duration(time.Second), BufferSize: 4096, inner: o}
	b := &Writer{FlushInterval: caddy.Duration(2 * time.Second), BufferSize: 4096, inner: o}
	if a.WriterKey() == b.WriterKey() {
		t.Errorf("WriterKey() %q for both options", a.WriterKey())
	}
	if same := (&Writer{FlushInterval: a.FlushInterval, BufferSize: 4096, inner: o}); same.WriterKey() != a.WriterKey() {
		t.Errorf("WriterKey() = %q and %q for the same options", same.WriterKey(), a.WriterKey())
	}
	wa, err := a.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	if o.opened != 1 {
		t.Errorf("the inner writer opened %d times, want once", o.opened)
	}
	if err := wa.Close(); err != nil || o.closed != 0 {
		t.Errorf("closing the first: %v; inner closed %d times, want 0", err, o.closed)
	}
	if err := wb.Close(); err != nil || o.closed != 1 {
		t.Errorf("closing the second: %v; inner closed %d times, want once", err, o.closed)
	}
	if _, err := wa.Write([]byte("x\n")); !errors.Is(err, errBufferedClosed) {
		t.Errorf("Write after Close = %v", err)
	}
}

// Cleanup, which Caddy runs for each configuration it unloads or stops,
// writes what the writer of the configuration's options holds, whichever
// configuration opened it, and leaves it open for the next one.
func TestBufferedCleanupWrites(t *testing.T) {
	o := &unitOpener{key: t.Name()}
	opened := &Writer{FlushInterval: caddy.Duration(10 * time.Second), BufferSize: 4096, inner: o}
	w, err := opened.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The next configuration, of the same options: Caddy's pool gives it
	// the writer open already, without calling its OpenWriter.
	reloaded := &Writer{FlushInterval: opened.FlushInterval, BufferSize: 4096, inner: o}
	for i, bw := range []*Writer{opened, reloaded} {
		entry := unitEntry(fmt.Sprint("before cleanup ", i), 100)
		if _, err := w.Write(entry); err != nil {
			t.Fatal(err)
		}
		if err := bw.Cleanup(); err != nil {
			t.Fatalf("Cleanup #%d = %v", i, err)
		}
		if got := o.rec.got(); len(got) != i+1 || !bytes.Equal(got[i], entry) {
			t.Fatalf("after Cleanup #%d: %d inner writes, want %d, the last the entry", i, len(got), i+1)
		}
	}
	if o.closed != 0 {
		t.Errorf("Cleanup closed the inner writer")
	}
	if _, err := w.Write(unitEntry("after", 100)); err != nil {
		t.Errorf("Write after Cleanup = %v, want the writer usable", err)
	}
	other := &Writer{FlushInterval: caddy.Duration(time.Second), BufferSize: 4096, inner: o}
	if err := other.Cleanup(); err != nil || len(o.rec.got()) != 2 {
		t.Errorf("Cleanup of a configuration of other options = %v, %d inner writes; want nil, 2: it has no writer open", err, len(o.rec.got()))
	}
}

// At the process's exit, every open writer is written.
func TestBufferedFlushAllAtExit(t *testing.T) {
	var opened []*unitOpener
	for i := range 2 {
		o := &unitOpener{key: fmt.Sprint(t.Name(), i)}
		w, err := (&Writer{FlushInterval: caddy.Duration(10 * time.Second), BufferSize: 4096, inner: o}).OpenWriter()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write(unitEntry("kept", 100)); err != nil {
			t.Fatal(err)
		}
		opened = append(opened, o)
	}
	openBuffered.flushAll()
	for i, o := range opened {
		if got := o.rec.got(); len(got) != 1 {
			t.Errorf("writer %d: %d inner writes at exit, want 1", i, len(got))
		}
	}
}
