package h2client

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// clientConn is one HTTP/2 connection and its streams. Its read loop is
// the only goroutine it owns; request writers take wmu.
type clientConn struct {
	t  *Transport
	nc net.Conn

	// wmu orders writes on the wire. It also guards the HPACK encoder and
	// the allocation of stream IDs, which must reach the server in order.
	// Lock order: wmu before mu.
	wmu  sync.Mutex
	henc *hpack.Encoder
	hbuf bytes.Buffer

	// Read loop only.
	hdec     *hpack.Decoder
	headers  []byte // a header block waiting for CONTINUATION frames
	headHdr  frameHeader
	lastRead atomic.Int64 // unix nanoseconds of the last frame

	mu            sync.Mutex
	streams       map[uint32]*stream
	nextID        uint32
	maxStreams    uint32 // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	peerMaxFrame  uint32
	peerInitialWn int32
	sendWindow    int32         // connection-level window towards the server
	windowGrew    chan struct{} // closed and replaced whenever a send window grows
	recvUnsent    int32         // consumed bytes not yet returned to the server
	recvAvail     int32         // bytes the server may still send
	goAway        bool
	err           error // why the connection is dead; nil while it lives
	pinging       bool
	idleTimer     *time.Timer
}

func newClientConn(t *Transport, nc net.Conn) (*clientConn, error) {
	cc := &clientConn{
		t:             t,
		nc:            nc,
		streams:       map[uint32]*stream{},
		nextID:        1,
		maxStreams:    1000, // until the server's SETTINGS say otherwise
		peerMaxFrame:  maxFrameSize,
		peerInitialWn: 65535,
		sendWindow:    65535,
		windowGrew:    make(chan struct{}),
		recvAvail:     connWindow + 65535,
		hdec:          hpack.NewDecoder(headerTableSize, nil),
	}
	cc.henc = hpack.NewEncoder(&cc.hbuf)
	cc.hdec.SetMaxStringLength(maxHeaderListSize)
	cc.lastRead.Store(time.Now().UnixNano())

	buf := getBuffer()
	b := append((*buf)[:0], clientPreface...)
	b = appendSettings(b, 0,
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: streamWindow},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: maxFrameSize},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderListSize})
	b = appendWindowUpdate(b, 0, connWindow)
	_, err := nc.Write(b)
	*buf = b
	putBuffer(buf)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("h2client: writing the connection preface: %w", err)
	}
	if t.ReadIdleTimeout > 0 {
		cc.mu.Lock() // checkIdle reads the timer under mu: it may fire at once
		cc.idleTimer = time.AfterFunc(t.ReadIdleTimeout, cc.checkIdle)
		cc.mu.Unlock()
	}
	go cc.readLoop()
	return cc, nil
}

func (cc *clientConn) dead() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err != nil
}

func (cc *clientConn) idle() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err == nil && len(cc.streams) == 0
}

func (cc *clientConn) canTakeStream() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.usableLocked() == nil
}

func (cc *clientConn) usableLocked() error {
	switch {
	case cc.err != nil:
		return retryableError{cc.err}
	case cc.goAway:
		return retryableError{errGoAway}
	case uint32(len(cc.streams)) >= cc.maxStreams || cc.nextID >= 1<<31-1:
		return retryableError{errStreamsLimit}
	}
	return nil
}

// write sends what build appends, as one write on the wire.
func (cc *clientConn) write(build func([]byte) []byte) error {
	buf := getBuffer()
	b := build((*buf)[:0])
	cc.wmu.Lock()
	_, err := cc.nc.Write(b)
	cc.wmu.Unlock()
	*buf = b
	putBuffer(buf)
	if err != nil {
		cc.close(err)
	}
	return err
}

// close ends the connection: every stream fails with err.
func (cc *clientConn) close(err error) {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return
	}
	cc.err = err
	for id, s := range cc.streams {
		delete(cc.streams, id)
		s.failLocked(fmt.Errorf("h2client: connection lost: %w", err))
	}
	cc.growLocked()
	if cc.idleTimer != nil {
		cc.idleTimer.Stop()
	}
	cc.mu.Unlock()
	cc.nc.Close()
}

// growLocked wakes whoever waits for send window.
func (cc *clientConn) growLocked() {
	close(cc.windowGrew)
	cc.windowGrew = make(chan struct{})
}

// checkIdle runs on the idle timer: a connection silent for ReadIdleTimeout
// gets a PING; one still silent PingTimeout after it is closed.
func (cc *clientConn) checkIdle() {
	since := time.Since(time.Unix(0, cc.lastRead.Load()))
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return
	}
	if since < cc.t.ReadIdleTimeout && !cc.pinging {
		cc.idleTimer.Reset(cc.t.ReadIdleTimeout - since)
		cc.mu.Unlock()
		return
	}
	if cc.pinging {
		cc.mu.Unlock()
		cc.close(errPingTimeout)
		return
	}
	cc.pinging = true
	cc.idleTimer.Reset(cc.t.pingTimeout())
	cc.mu.Unlock()
	var data [8]byte
	binary.BigEndian.PutUint64(data[:], uint64(time.Now().UnixNano()))
	_ = cc.write(func(b []byte) []byte { return appendFrame(b, http2.FramePing, 0, 0, data[:]) })
}

func (cc *clientConn) readLoop() {
	var head [frameHeaderLen]byte
	for {
		h, err := readFrameHeader(cc.nc, head[:])
		if err == nil && h.length > maxFrameSize {
			err = connError{http2.ErrCodeFrameSize, fmt.Sprintf("%v frame of %d bytes", h.typ, h.length)}
		}
		if err != nil {
			cc.fail(err)
			return
		}
		buf := getBuffer()
		payload := (*buf)[:h.length]
		if _, err := io.ReadFull(cc.nc, payload); err != nil {
			putBuffer(buf)
			cc.fail(err)
			return
		}
		cc.lastRead.Store(time.Now().UnixNano())
		err = cc.handle(h, payload)
		putBuffer(buf)
		if err != nil {
			cc.fail(err)
			return
		}
	}
}

// fail ends the connection after a read error, telling the server why
// when the error is the server's fault.
func (cc *clientConn) fail(err error) {
	if ce, ok := err.(connError); ok {
		_ = cc.write(func(b []byte) []byte {
			return appendFrame(b, http2.FrameGoAway, 0, 0, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 0), uint32(ce.code)))
		})
	}
	cc.close(err)
}

func (cc *clientConn) handle(h frameHeader, payload []byte) error {
	if cc.headers != nil && (h.typ != http2.FrameContinuation || h.streamID != cc.headHdr.streamID) {
		return connError{http2.ErrCodeProtocol, "header block interrupted"}
	}
	switch h.typ {
	case http2.FrameData:
		return cc.onData(h, payload)
	case http2.FrameHeaders:
		if h.streamID == 0 {
			return connError{http2.ErrCodeProtocol, "HEADERS on stream 0"}
		}
		block, err := unpad(h, payload)
		if err != nil {
			return err
		}
		if h.has(http2.FlagHeadersPriority) {
			if len(block) < 5 {
				return connError{http2.ErrCodeFrameSize, "short HEADERS priority"}
			}
			block = block[5:]
		}
		if !h.has(http2.FlagHeadersEndHeaders) {
			cc.headHdr = h
			cc.headers = append([]byte(nil), block...)
			return nil
		}
		return cc.onHeaders(h, block)
	case http2.FrameContinuation:
		if cc.headers == nil {
			return connError{http2.ErrCodeProtocol, "CONTINUATION without HEADERS"}
		}
		cc.headers = append(cc.headers, payload...)
		if len(cc.headers) > maxHeaderListSize {
			return connError{http2.ErrCodeProtocol, "header block too large"}
		}
		if !h.has(http2.FlagContinuationEndHeaders) {
			return nil
		}
		block, first := cc.headers, cc.headHdr
		cc.headers = nil
		return cc.onHeaders(first, block)
	case http2.FrameSettings:
		return cc.onSettings(h, payload)
	case http2.FrameWindowUpdate:
		if len(payload) != 4 {
			return connError{http2.ErrCodeFrameSize, "WINDOW_UPDATE of bad size"}
		}
		cc.onWindowUpdate(h.streamID, binary.BigEndian.Uint32(payload)&(1<<31-1))
	case http2.FramePing:
		if len(payload) != 8 || h.streamID != 0 {
			return connError{http2.ErrCodeProtocol, "bad PING"}
		}
		if h.has(http2.FlagPingAck) {
			cc.mu.Lock()
			cc.pinging = false
			cc.mu.Unlock()
			return nil
		}
		data := append([]byte(nil), payload...)
		return cc.write(func(b []byte) []byte { return appendFrame(b, http2.FramePing, http2.FlagPingAck, 0, data) })
	case http2.FrameRSTStream:
		if len(payload) != 4 || h.streamID == 0 {
			return connError{http2.ErrCodeProtocol, "bad RST_STREAM"}
		}
		cc.onReset(h.streamID, http2.ErrCode(binary.BigEndian.Uint32(payload)))
	case http2.FrameGoAway:
		if len(payload) < 8 {
			return connError{http2.ErrCodeFrameSize, "short GOAWAY"}
		}
		cc.onGoAway(binary.BigEndian.Uint32(payload)&(1<<31-1), http2.ErrCode(binary.BigEndian.Uint32(payload[4:])))
	case http2.FramePushPromise:
		return connError{http2.ErrCodeProtocol, "PUSH_PROMISE with push disabled"}
	}
	return nil // PRIORITY and unknown frame types are ignored, as the protocol asks
}

func (cc *clientConn) onData(h frameHeader, payload []byte) error {
	if h.streamID == 0 {
		return connError{http2.ErrCodeProtocol, "DATA on stream 0"}
	}
	data, err := unpad(h, payload)
	if err != nil {
		return err
	}
	flow := int32(h.length)
	var updates []byte
	cc.mu.Lock()
	if flow > cc.recvAvail {
		cc.mu.Unlock()
		return connError{http2.ErrCodeFlowControl, "server exceeded the connection window"}
	}
	cc.recvAvail -= flow
	s := cc.streams[h.streamID]
	if s == nil || s.err != nil {
		// A stream already gone (reset, closed, cancelled): its bytes
		// count against the connection only; give them back now.
		updates = cc.returnLocked(nil, int(flow), updates)
		cc.mu.Unlock()
		return cc.sendUpdates(updates)
	}
	if flow > s.recvAvail {
		cc.mu.Unlock()
		cc.resetStream(s, http2.ErrCodeFlowControl, StreamError{s.id, http2.ErrCodeFlowControl})
		return nil
	}
	s.recvAvail -= flow
	if len(data) > 0 {
		s.buf = append(s.buf, data...)
	}
	if pad := int(flow) - len(data); pad > 0 {
		updates = cc.returnLocked(s, pad, updates)
	}
	if h.has(http2.FlagDataEndStream) {
		s.ended = true
		delete(cc.streams, s.id)
	}
	s.wakeLocked()
	cc.mu.Unlock()
	return cc.sendUpdates(updates)
}

func (cc *clientConn) onHeaders(h frameHeader, block []byte) error {
	// Every block is decoded, even for a stream gone, to keep the HPACK
	// table in step with the server's.
	fields, err := cc.hdec.DecodeFull(block)
	if err != nil {
		return connError{http2.ErrCodeCompression, err.Error()}
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	s := cc.streams[h.streamID]
	if s == nil || s.err != nil {
		return nil
	}
	if !s.responded {
		res, err := s.response(fields)
		if err != nil {
			cc.mu.Unlock()
			cc.resetStream(s, http2.ErrCodeProtocol, err)
			cc.mu.Lock()
			return nil
		}
		if res == nil {
			return nil // 1xx: the final response is still to come
		}
		s.res, s.responded = res, true
	}
	// A second block is the trailers; nothing here reads them.
	if h.has(http2.FlagHeadersEndStream) {
		s.ended = true
		delete(cc.streams, s.id)
	}
	s.wakeLocked()
	return nil
}

func (cc *clientConn) onSettings(h frameHeader, payload []byte) error {
	if h.streamID != 0 {
		return connError{http2.ErrCodeProtocol, "SETTINGS on a stream"}
	}
	if h.has(http2.FlagSettingsAck) {
		return nil
	}
	if len(payload)%6 != 0 {
		return connError{http2.ErrCodeFrameSize, "SETTINGS of bad size"}
	}
	// The encoder's table size changes with the acknowledgement, under
	// the write lock, so no header block is encoded between the two.
	cc.wmu.Lock()
	defer cc.wmu.Unlock()
	cc.mu.Lock()
	for p := payload; len(p) > 0; p = p[6:] {
		id, val := http2.SettingID(binary.BigEndian.Uint16(p)), binary.BigEndian.Uint32(p[2:])
		switch id {
		case http2.SettingHeaderTableSize:
			cc.henc.SetMaxDynamicTableSize(min(val, headerTableSize))
		case http2.SettingMaxConcurrentStreams:
			cc.maxStreams = val
		case http2.SettingMaxFrameSize:
			if val < 1<<14 || val > 1<<24-1 {
				cc.mu.Unlock()
				return connError{http2.ErrCodeProtocol, "bad SETTINGS_MAX_FRAME_SIZE"}
			}
			cc.peerMaxFrame = min(val, maxFrameSize)
		case http2.SettingInitialWindowSize:
			if val > 1<<31-1 {
				cc.mu.Unlock()
				return connError{http2.ErrCodeFlowControl, "bad SETTINGS_INITIAL_WINDOW_SIZE"}
			}
			delta := int32(val) - cc.peerInitialWn
			cc.peerInitialWn = int32(val)
			for _, s := range cc.streams {
				s.sendWindow += delta
			}
			cc.growLocked()
		}
	}
	cc.mu.Unlock()
	buf := getBuffer()
	b := appendSettings((*buf)[:0], http2.FlagSettingsAck)
	_, err := cc.nc.Write(b)
	*buf = b
	putBuffer(buf)
	return err
}

func (cc *clientConn) onWindowUpdate(streamID, incr uint32) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if streamID == 0 {
		cc.sendWindow += int32(incr)
	} else if s := cc.streams[streamID]; s != nil {
		s.sendWindow += int32(incr)
	}
	cc.growLocked()
}

func (cc *clientConn) onReset(streamID uint32, code http2.ErrCode) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	s := cc.streams[streamID]
	if s == nil {
		return
	}
	delete(cc.streams, streamID)
	var err error = StreamError{streamID, code}
	if code == http2.ErrCodeRefusedStream && !s.responded {
		err = retryableError{err}
	}
	s.failLocked(err)
	cc.growLocked()
}

// onGoAway: streams above the server's last processed one were never seen
// by it and fail as retryable; the rest run to their end, and no new stream
// starts on this connection.
func (cc *clientConn) onGoAway(last uint32, code http2.ErrCode) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.goAway = true
	for id, s := range cc.streams {
		if id > last {
			delete(cc.streams, id)
			s.failLocked(retryableError{fmt.Errorf("%w (%v)", errGoAway, code)})
		}
	}
	cc.growLocked()
}

// returnLocked counts n consumed bytes of stream s (nil: of the connection
// only) and appends the WINDOW_UPDATE frames that are due.
func (cc *clientConn) returnLocked(s *stream, n int, b []byte) []byte {
	cc.recvUnsent += int32(n)
	if cc.recvUnsent >= windowRefresh || cc.recvUnsent >= cc.recvAvail {
		b = appendWindowUpdate(b, 0, uint32(cc.recvUnsent))
		cc.recvAvail += cc.recvUnsent
		cc.recvUnsent = 0
	}
	if s != nil && !s.ended && s.err == nil {
		s.recvUnsent += int32(n)
		if s.recvUnsent >= windowRefresh || s.recvUnsent >= s.recvAvail {
			b = appendWindowUpdate(b, s.id, uint32(s.recvUnsent))
			s.recvAvail += s.recvUnsent
			s.recvUnsent = 0
		}
	}
	return b
}

func (cc *clientConn) sendUpdates(frames []byte) error {
	if len(frames) == 0 {
		return nil
	}
	return cc.write(func(b []byte) []byte { return append(b, frames...) })
}

// resetStream ends a stream from this side with RST_STREAM.
func (cc *clientConn) resetStream(s *stream, code http2.ErrCode, err error) {
	cc.mu.Lock()
	open := cc.streams[s.id] == s
	delete(cc.streams, s.id)
	var updates []byte
	if s.err == nil {
		// Bytes received but never to be read go back to the connection.
		updates = cc.returnLocked(nil, len(s.buf), nil)
		s.buf = nil
		s.failLocked(err)
	}
	cc.growLocked()
	cc.mu.Unlock()
	if open {
		updates = appendRSTStream(updates, s.id, code)
	}
	_ = cc.sendUpdates(updates)
}

// encodeHeaders encodes a request's header block; the caller holds wmu.
func (cc *clientConn) encodeHeaders(req *http.Request, contentLength int, gzip bool) []byte {
	cc.hbuf.Reset()
	field := func(name, value string) {
		_ = cc.henc.WriteField(hpack.HeaderField{Name: name, Value: value, Sensitive: name == "authorization"})
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	field(":authority", host)
	field(":method", req.Method)
	field(":path", req.URL.RequestURI())
	field(":scheme", "https")
	agent := false
	for name, values := range req.Header {
		lower := strings.ToLower(name)
		switch lower {
		case "connection", "proxy-connection", "transfer-encoding", "upgrade", "keep-alive", "host", "content-length":
			continue // connection-specific, or set below
		case "user-agent":
			agent = true
		}
		for _, v := range values {
			field(lower, v)
		}
	}
	if gzip {
		field("accept-encoding", "gzip")
	}
	if !agent {
		field("user-agent", "Go-http-client/2.0")
	}
	if contentLength > 0 {
		field("content-length", strconv.Itoa(contentLength))
	}
	return cc.hbuf.Bytes()
}
