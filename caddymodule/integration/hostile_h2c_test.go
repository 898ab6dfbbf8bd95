package integration

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// hxH2C sends one GET over cleartext HTTP/2 with prior knowledge (RFC 9113
// §3.3) to addr, with the pseudo-header :path set to path exactly as
// given: Go's HTTP/2 client refuses a :path that does not start with "/",
// and the framer does not. It returns the status and the body, read up to
// hxMaxBody; the whole exchange is bounded by hxTimeout.
func hxH2C(addr, authority, path, ua string) (hxResp, error) {
	conn, err := net.DialTimeout("tcp", addr, hxTimeout)
	if err != nil {
		return hxResp{}, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(hxTimeout)); err != nil {
		return hxResp{}, err
	}
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		return hxResp{}, err
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		return hxResp{}, err
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", authority}, {":path", path}, {"user-agent", ua}} {
		if f[0] == "user-agent" && f[1] == "" {
			continue
		}
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return hxResp{}, err
		}
	}
	const stream = 1
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		return hxResp{}, err
	}
	var resp hxResp
	var body bytes.Buffer
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return hxResp{}, fmt.Errorf("h2c :path %q: %w", path, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := fr.WriteSettingsAck(); err != nil {
					return hxResp{}, err
				}
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				if err := fr.WritePing(true, f.Data); err != nil {
					return hxResp{}, err
				}
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID != stream {
				continue
			}
			if s := f.PseudoValue("status"); s != "" && resp.status == 0 {
				resp.status, _ = strconv.Atoi(s)
				if resp.status < 200 {
					resp.status = 0 // informational: the final status follows
				}
			}
			if f.StreamEnded() {
				resp.body = body.String()
				return resp, nil
			}
		case *http2.DataFrame:
			if f.StreamID != stream {
				continue
			}
			if body.Len() < hxMaxBody {
				body.Write(f.Data())
			}
			if n := uint32(len(f.Data())); n > 0 {
				// Keep both windows open, so that a body larger than
				// the initial window arrives whole.
				fr.WriteWindowUpdate(0, n)
				fr.WriteWindowUpdate(stream, n)
			}
			if f.StreamEnded() {
				resp.body = body.String()
				return resp, nil
			}
		case *http2.RSTStreamFrame:
			return hxResp{}, fmt.Errorf("h2c :path %q: stream reset: %v", path, f.ErrCode)
		case *http2.GoAwayFrame:
			if f.LastStreamID < stream {
				return hxResp{}, fmt.Errorf("h2c :path %q: goaway: %v %s", path, f.ErrCode, f.DebugData())
			}
		}
	}
}
