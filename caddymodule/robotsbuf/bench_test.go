package robotsbuf

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/logging"
)

// BenchmarkBufferedWriter writes entries of 1 KiB, about a compliance
// record's size, from parallel goroutines to a file in a temporary
// directory: through Caddy's file writer alone, which makes one write(2)
// per entry, and through robots_buffered (its defaults) around it. The
// file writer rolls, as Caddy's does by default, at a size the benchmark
// does not reach. A fixed count of entries writes the same 200 MB in
// both: with a time instead, the faster writes gigabytes, and the
// system's throttling of dirty pages then measures the disk.
//
//	go test ./caddymodule/ -run '^$' -bench Writer -benchmem -benchtime 200000x -count 4
func BenchmarkBufferedWriter(b *testing.B) {
	entry := unitEntry("benchmark", 1024)
	for _, bc := range []struct {
		name     string
		buffered bool
	}{{"file", false}, {"buffered", true}} {
		b.Run(bc.name, func(b *testing.B) {
			fw := &logging.FileWriter{Filename: filepath.Join(b.TempDir(), "robots.log"), RollSizeMB: 1 << 20}
			var (
				w   io.WriteCloser
				err error
			)
			if bc.buffered {
				bw := &Writer{FlushInterval: caddy.Duration(defaultFlushInterval), BufferSize: defaultBufferSize, inner: fw}
				w, err = bw.OpenWriter()
			} else {
				w, err = fw.OpenWriter()
			}
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(entry)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := w.Write(entry); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
