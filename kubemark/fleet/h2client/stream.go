package h2client

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// stream is one request and its response. It owns no goroutine: the
// connection's read loop fills it and wakes whoever waits on it.
type stream struct {
	cc         *clientConn
	id         uint32
	req        *http.Request // until the response is handed out
	gzip       bool          // this transport asked for gzip
	wake       chan struct{} // one pending wake-up for the one waiter
	stopCancel func() bool   // unregisters the context callback

	// Guarded by cc.mu.
	onReady    func()         // see body.OnReady
	res        *http.Response // until roundTrip hands it out
	responded  bool           // the response headers came
	buf        []byte         // received, not yet read
	ended      bool           // the server ended the stream
	err        error          // the stream failed or was abandoned
	sendWindow int32
	recvAvail  int32
	recvUnsent int32
}

func (s *stream) wakeLocked() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if s.onReady != nil {
		s.onReady()
	}
}

func (s *stream) failLocked(err error) {
	if s.err == nil {
		s.err = err
	}
	s.wakeLocked()
}

// response builds the response from the final header block; nil for an
// informational (1xx) one.
func (s *stream) response(fields []hpack.HeaderField) (*http.Response, error) {
	status := ""
	header := make(http.Header, len(fields))
	for _, f := range fields {
		if f.IsPseudo() {
			if f.Name == ":status" {
				status = f.Value
			}
			continue
		}
		key := http.CanonicalHeaderKey(f.Name)
		header[key] = append(header[key], f.Value)
	}
	code, err := strconv.Atoi(status)
	if err != nil || code < 100 || code > 999 {
		return nil, fmt.Errorf("h2client: response with bad :status %q", status)
	}
	if code < 200 {
		return nil, nil
	}
	res := &http.Response{
		Status:        status + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        header,
		ContentLength: -1,
		Request:       s.req,
	}
	if v := header.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			res.ContentLength = n
		}
	}
	var body io.ReadCloser = &body{s: s}
	if s.gzip && header.Get("Content-Encoding") == "gzip" {
		header.Del("Content-Encoding")
		header.Del("Content-Length")
		res.ContentLength = -1
		res.Uncompressed = true
		body = &gzipBody{body: body}
	}
	res.Body = body
	return res, nil
}

// roundTrip opens a stream for req, sends it, and waits for the response
// headers.
func (cc *clientConn) roundTrip(req *http.Request, reqBody []byte, askGzip bool) (*http.Response, error) {
	s := &stream{cc: cc, req: req, gzip: askGzip, wake: make(chan struct{}, 1), recvAvail: streamWindow}

	cc.wmu.Lock()
	cc.mu.Lock()
	if err := cc.usableLocked(); err != nil {
		cc.mu.Unlock()
		cc.wmu.Unlock()
		return nil, err
	}
	s.id = cc.nextID
	cc.nextID += 2
	s.sendWindow = cc.peerInitialWn
	cc.streams[s.id] = s
	maxFrame := int(cc.peerMaxFrame)
	// A body that fits one frame and the windows (a lease renewal, a status
	// patch) leaves in the same write as the headers: one syscall and one
	// TLS record per request instead of two, on both ends.
	inline := len(reqBody) > 0 && len(reqBody) <= min(maxFrame, int(cc.sendWindow), int(s.sendWindow))
	if inline {
		cc.sendWindow -= int32(len(reqBody))
		s.sendWindow -= int32(len(reqBody))
	}
	cc.mu.Unlock()
	block := cc.encodeHeaders(req, len(reqBody), askGzip)
	buf := getBuffer()
	b := (*buf)[:0]
	for first := true; first || len(block) > 0; first = false {
		chunk := block[:min(len(block), maxFrame)]
		block = block[len(chunk):]
		var flags http2.Flags
		if len(block) == 0 {
			flags |= http2.FlagHeadersEndHeaders // same bit as CONTINUATION's
		}
		typ := http2.FrameContinuation
		if first {
			typ = http2.FrameHeaders
			if len(reqBody) == 0 {
				flags |= http2.FlagHeadersEndStream
			}
		}
		b = appendFrame(b, typ, flags, s.id, chunk)
	}
	if inline {
		b = appendFrame(b, http2.FrameData, http2.FlagDataEndStream, s.id, reqBody)
		reqBody = nil
	}
	_, err := cc.nc.Write(b)
	cc.wmu.Unlock()
	*buf = b
	putBuffer(buf)
	if err != nil {
		cc.close(err)
		return nil, err
	}

	ctx := req.Context()
	s.stopCancel = context.AfterFunc(ctx, func() { cc.resetStream(s, http2.ErrCodeCancel, ctx.Err()) })
	if len(reqBody) > 0 {
		if err := cc.writeBody(s, reqBody); err != nil {
			s.stopCancel()
			cc.resetStream(s, http2.ErrCodeCancel, err)
			return nil, err
		}
	}
	for {
		cc.mu.Lock()
		res, err := s.res, s.err
		if res != nil {
			// A watch's stream lives for minutes: it keeps neither the
			// request nor the response, only what its body reads.
			s.res, s.req = nil, nil
		}
		cc.mu.Unlock()
		if res != nil {
			return res, nil
		}
		if err != nil {
			s.stopCancel()
			return nil, err
		}
		<-s.wake
	}
}

// writeBody sends the request body in DATA frames as the server's windows
// allow.
func (cc *clientConn) writeBody(s *stream, data []byte) error {
	for len(data) > 0 {
		cc.mu.Lock()
		n := 0
		for {
			if s.err != nil {
				err := s.err
				cc.mu.Unlock()
				return err
			}
			n = min(len(data), int(cc.peerMaxFrame), int(cc.sendWindow), int(s.sendWindow))
			if n > 0 {
				break
			}
			grew := cc.windowGrew
			cc.mu.Unlock()
			<-grew // also closed when the stream is reset or the connection dies
			cc.mu.Lock()
		}
		cc.sendWindow -= int32(n)
		s.sendWindow -= int32(n)
		cc.mu.Unlock()
		chunk := data[:n]
		data = data[n:]
		var flags http2.Flags
		if len(data) == 0 {
			flags = http2.FlagDataEndStream
		}
		if err := cc.write(func(b []byte) []byte { return appendFrame(b, http2.FrameData, flags, s.id, chunk) }); err != nil {
			return err
		}
	}
	return nil
}

// body is a response body: Read hands out what the read loop buffered and
// returns flow-control window as it goes.
type body struct{ s *stream }

func (b *body) Read(p []byte) (int, error) {
	s := b.s
	cc := s.cc
	for {
		cc.mu.Lock()
		if len(s.buf) > 0 {
			n := copy(p, s.buf)
			s.buf = s.buf[n:]
			if len(s.buf) == 0 {
				s.buf = nil // an idle stream holds no buffer
			}
			updates := cc.returnLocked(s, n, nil)
			cc.mu.Unlock()
			if err := cc.sendUpdates(updates); err != nil {
				return n, err
			}
			return n, nil
		}
		err, ended := s.err, s.ended
		cc.mu.Unlock()
		if err != nil {
			return 0, err
		}
		if ended {
			s.stopCancel()
			return 0, io.EOF
		}
		<-s.wake
	}
}

// ReadByte makes the body a byte reader, so that an inflater can read it
// without a buffer of its own and stop exactly where a gzip member ends.
func (b *body) ReadByte() (byte, error) {
	var one [1]byte
	if _, err := b.Read(one[:]); err != nil {
		return 0, err
	}
	return one[0], nil
}

// Ready reports whether a Read would return without waiting: bytes are
// buffered, or the stream has ended or failed.
func (b *body) Ready() bool {
	s := b.s
	s.cc.mu.Lock()
	defer s.cc.mu.Unlock()
	return len(s.buf) > 0 || s.ended || s.err != nil
}

// OnReady has fn called whenever the body may have become ready: bytes
// arrived, the stream ended or failed. It lets a caller read a long-lived
// response (a watch) without parking a goroutine in Read between events.
// fn runs on the connection's read loop with the connection locked: it must
// return at once and must not call the body — start the reading elsewhere.
// Close unregisters it.
func (b *body) OnReady(fn func()) {
	s := b.s
	s.cc.mu.Lock()
	s.onReady = fn
	s.cc.mu.Unlock()
}

// Close abandons the rest of the response: a stream still open is reset.
func (b *body) Close() error {
	s := b.s
	s.cc.mu.Lock()
	s.onReady = nil
	s.cc.mu.Unlock()
	s.stopCancel()
	s.cc.resetStream(s, http2.ErrCodeCancel, errBodyClosed)
	return nil
}

// gzipBody inflates a response the transport asked gzip for; the inflater
// is made at the first read and pooled after the last.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

var gzipReaders sync.Pool

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(g.body)
		} else {
			err = zr.Reset(g.body)
		}
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if errors.Is(err, io.EOF) {
		g.release()
		g.err = io.EOF
	}
	return n, err
}

func (g *gzipBody) release() {
	if g.zr != nil {
		gzipReaders.Put(g.zr)
		g.zr = nil
	}
}

func (g *gzipBody) Close() error {
	g.release()
	if g.err == nil {
		g.err = errBodyClosed
	}
	return g.body.Close()
}
