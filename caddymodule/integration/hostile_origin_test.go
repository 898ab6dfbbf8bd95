package integration

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Limits of the hostile origin, each with its reason.
const (
	// hxStall ends a reply whose write made no progress for this long: a
	// client that stops reading without closing must not hold the origin,
	// and what it accepted until then is what it cost.
	hxStall = 2 * time.Second
	// hxEndlessCap ends an "endless" body after this many octets on one
	// connection, so that a test against a handler that reads without
	// limit still ends; it is far above any bound a test asserts.
	hxEndlessCap = 4 << 30
	// hxIdle closes a connection that sends no request for this long.
	hxIdle = 30 * time.Second
	// hxSocketBuffer is the origin's send buffer: small, so that what a
	// connection "accepted" is close to what the peer read.
	hxSocketBuffer = 64 << 10
)

// hxOrigin is an origin server written on raw TCP, so that it can answer
// as a broken or hostile server does: cut a body short, drip it, send it
// without end, or compress it into a bomb. It answers with its routes,
// keyed by "host path" or, when no such key exists, by path; unknown paths
// get 200 "page <path>". It counts the requests per "host path" and the
// octets each reply's connection accepted.
type hxOrigin struct {
	ln     net.Listener
	routes map[string]hxReply
	wg     sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	hits     map[string]int
	agents   map[string][]string // "host path" → the User-Agents, in order
	maxReply int64               // the most octets one reply's connection accepted
	total    int64               // octets accepted, all replies
	closed   bool
}

// hxReply answers one request on w and says whether the connection may
// carry another.
type hxReply func(w *hxWire, r *http.Request) (keepAlive bool)

// hxWire is a connection as a reply writes it: each write must progress
// within hxStall, and the octets it accepts are counted.
type hxWire struct {
	conn net.Conn
	n    int64
	err  error
}

func (w *hxWire) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.conn.SetWriteDeadline(time.Now().Add(hxStall))
	n, err := w.conn.Write(p)
	w.n += int64(n)
	w.err = err
	return n, err
}

// hxNewOrigin starts an origin on a loopback port, closed when the test
// ends.
func hxNewOrigin(t testing.TB, routes map[string]hxReply) *hxOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &hxOrigin{ln: ln, routes: routes, conns: make(map[net.Conn]struct{}), hits: make(map[string]int), agents: make(map[string][]string)}
	o.wg.Go(o.accept)
	t.Cleanup(o.close)
	return o
}

func (o *hxOrigin) accept() {
	for {
		conn, err := o.ln.Accept()
		if err != nil {
			return
		}
		o.mu.Lock()
		if o.closed {
			o.mu.Unlock()
			conn.Close()
			return
		}
		o.conns[conn] = struct{}{}
		o.mu.Unlock()
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetWriteBuffer(hxSocketBuffer)
		}
		o.wg.Go(func() { o.serve(conn) })
	}
}

func (o *hxOrigin) serve(conn net.Conn) {
	defer func() {
		conn.Close()
		o.mu.Lock()
		delete(o.conns, conn)
		o.mu.Unlock()
	}()
	br := bufio.NewReader(conn)
	for {
		conn.SetReadDeadline(time.Now().Add(hxIdle))
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, io.LimitReader(r.Body, hxMaxBody))
		key := r.Host + " " + r.URL.Path
		o.mu.Lock()
		o.hits[key]++
		o.agents[key] = append(o.agents[key], r.Header.Get("User-Agent"))
		o.mu.Unlock()
		reply, ok := o.routes[key]
		if !ok {
			reply, ok = o.routes[r.URL.Path]
		}
		if !ok {
			reply = hxText(http.StatusOK, "text/plain", "page "+r.URL.Path)
		}
		w := &hxWire{conn: conn}
		keep := reply(w, r)
		o.mu.Lock()
		o.maxReply = max(o.maxReply, w.n)
		o.total += w.n
		o.mu.Unlock()
		if !keep || w.err != nil {
			return
		}
	}
}

func (o *hxOrigin) close() {
	o.mu.Lock()
	o.closed = true
	for c := range o.conns {
		c.Close()
	}
	o.mu.Unlock()
	o.ln.Close()
	o.wg.Wait()
}

// hostPort returns the origin's address, for reverse_proxy.
func (o *hxOrigin) hostPort() string { return o.ln.Addr().String() }

// count returns the requests for path on host the origin received.
func (o *hxOrigin) count(host, path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[host+" "+path]
}

// countPath returns the requests for path on any host.
func (o *hxOrigin) countPath(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for k, v := range o.hits {
		if strings.HasSuffix(k, " "+path) {
			n += v
		}
	}
	return n
}

// agentsOf returns the User-Agents of the requests for path on host.
func (o *hxOrigin) agentsOf(host, path string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.agents[host+" "+path]...)
}

// accepted returns the most octets one reply's connection accepted, and
// the octets of all replies.
func (o *hxOrigin) accepted() (most, total int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.maxReply, o.total
}

// hxHead writes a status line and header fields, each "Name: value".
func hxHead(w io.Writer, status int, fields ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	for _, f := range fields {
		b.WriteString(f + "\r\n")
	}
	b.WriteString("\r\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// hxText answers status with body, of Content-Type ctype.
func hxText(status int, ctype, body string) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, status, "Content-Type: "+ctype, fmt.Sprintf("Content-Length: %d", len(body)))
		io.WriteString(w, body)
		return true
	}
}

// hxVary answers 200 with the body pick returns for the request's
// User-Agent: a site that serves robots.txt by client.
func hxVary(pick func(ua string) string) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		return hxText(http.StatusOK, "text/plain", pick(r.Header.Get("User-Agent")))(w, r)
	}
}

// hxRedirect answers status with Location loc.
func hxRedirect(status int, loc string) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, status, "Location: "+loc, "Content-Length: 0")
		return true
	}
}

// hxCutLength declares ten times the length of body, sends body and
// closes the connection.
func hxCutLength(body string) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, http.StatusOK, "Content-Type: text/plain", fmt.Sprintf("Content-Length: %d", 10*len(body)))
		io.WriteString(w, body)
		return false
	}
}

// hxCutChunked sends body as one chunk and closes the connection without
// the last chunk.
func hxCutChunked(body string) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, http.StatusOK, "Content-Type: text/plain", "Transfer-Encoding: chunked")
		fmt.Fprintf(w, "%x\r\n%s\r\n", len(body), body)
		return false
	}
}

// hxDrip sends body one octet every tick, with its length declared.
func hxDrip(body string, tick time.Duration) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, http.StatusOK, "Content-Type: text/plain", fmt.Sprintf("Content-Length: %d", len(body)))
		for i := range len(body) {
			time.Sleep(tick)
			if _, err := io.WriteString(w, body[i:i+1]); err != nil {
				return false
			}
		}
		return true
	}
}

// hxFiller is a robots.txt comment line, what long bodies are made of.
var hxFiller = bytes.Repeat([]byte("# a robots.txt that never ends, or ends very late\n"), 640)

// hxEndless sends prefix and then comment lines without end, chunked,
// until the peer stops reading or closes (or hxEndlessCap).
func hxEndless(prefix string) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, http.StatusOK, "Content-Type: text/plain", "Transfer-Encoding: chunked")
		fmt.Fprintf(w, "%x\r\n%s\r\n", len(prefix), prefix)
		chunk := fmt.Appendf(nil, "%x\r\n%s\r\n", len(hxFiller), hxFiller)
		for w.n < hxEndlessCap {
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		return false
	}
}

// hxHuge sends a body of size octets, prefix and then comment lines, with
// its length declared.
func hxHuge(size int, prefix string) hxReply {
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, http.StatusOK, "Content-Type: text/plain", fmt.Sprintf("Content-Length: %d", size))
		left := size - len(prefix)
		if _, err := io.WriteString(w, prefix); err != nil {
			return false
		}
		for left > 0 {
			n := min(left, len(hxFiller))
			if _, err := w.Write(hxFiller[:n]); err != nil {
				return false
			}
			left -= n
		}
		return true
	}
}

// hxGzipBomb sends a gzip-encoded body that inflates to zeros without
// end: a mebibyte of zeros takes about a kilobyte, so the first 2 GiB take
// about 2 MB. It is built from one deflate block repeated: once the
// compressor's window holds only zeros, each flushed mebibyte of zeros
// compresses to the same octets (a back-reference to the zeros before).
func hxGzipBomb() hxReply {
	head, block := hxBombParts()
	return func(w *hxWire, r *http.Request) bool {
		hxHead(w, http.StatusOK, "Content-Type: text/plain", "Content-Encoding: gzip", "Transfer-Encoding: chunked")
		fmt.Fprintf(w, "%x\r\n%s\r\n", len(head), head)
		run := bytes.Repeat(block, 32)
		chunk := fmt.Appendf(nil, "%x\r\n%s\r\n", len(run), run)
		for w.n < hxEndlessCap {
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		return false
	}
}

// hxBombParts returns the start of a gzip stream of zeros and the block
// that, repeated, continues it with a mebibyte of zeros each.
var hxBombParts = sync.OnceValues(func() (head, block []byte) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	var prev []byte
	for {
		start := buf.Len()
		zw.Write(zeros)
		zw.Flush()
		cur := bytes.Clone(buf.Bytes()[start:])
		if bytes.Equal(cur, prev) {
			return buf.Bytes()[:start], cur
		}
		prev = cur
	}
})
