package h2client

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"golang.org/x/net/http2"
)

const (
	frameHeaderLen = 9
	// maxFrameSize is the largest frame this client accepts: the protocol's
	// default, advertised in SETTINGS, so that a read buffer never needs to
	// be bigger (Go's client asks for 1 MiB frames and keeps a buffer that
	// large per connection once one arrived).
	maxFrameSize = 16 << 10
	// streamWindow and connWindow are the receive windows Go's client
	// advertises; a stream's unread bytes are bounded by streamWindow.
	streamWindow = 4 << 20
	connWindow   = 1 << 30
	// windowRefresh: consumed bytes are returned to the server once this many
	// add up, or once they are as many as the server still may send.
	windowRefresh = 4 << 10
	// maxHeaderListSize is what Go's client advertises (10 MiB).
	maxHeaderListSize = 10 << 20
	// headerTableSize is HPACK's default dynamic table, both ways.
	headerTableSize = 4096
)

var clientPreface = []byte(http2.ClientPreface)

// frameHeader is the fixed 9-byte head of every frame.
type frameHeader struct {
	length   uint32
	typ      http2.FrameType
	flags    http2.Flags
	streamID uint32
}

func (h frameHeader) has(f http2.Flags) bool { return h.flags&f != 0 }

func readFrameHeader(r io.Reader, buf []byte) (frameHeader, error) {
	if _, err := io.ReadFull(r, buf[:frameHeaderLen]); err != nil {
		return frameHeader{}, err
	}
	return frameHeader{
		length:   uint32(buf[0])<<16 | uint32(buf[1])<<8 | uint32(buf[2]),
		typ:      http2.FrameType(buf[3]),
		flags:    http2.Flags(buf[4]),
		streamID: binary.BigEndian.Uint32(buf[5:9]) & (1<<31 - 1),
	}, nil
}

// buffers holds frame-sized buffers shared by every connection of the
// process: a connection borrows one for the frame it reads or writes and
// returns it, so idle connections hold none.
var buffers = sync.Pool{New: func() any {
	b := make([]byte, 0, frameHeaderLen+maxFrameSize)
	return &b
}}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > 4*(frameHeaderLen+maxFrameSize) {
		return // grown for a large header block: let it go
	}
	*b = (*b)[:0]
	buffers.Put(b)
}

func appendFrame(b []byte, typ http2.FrameType, flags http2.Flags, streamID uint32, payload ...[]byte) []byte {
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	b = append(b, byte(n>>16), byte(n>>8), byte(n), byte(typ), byte(flags))
	b = binary.BigEndian.AppendUint32(b, streamID&(1<<31-1))
	for _, p := range payload {
		b = append(b, p...)
	}
	return b
}

func appendWindowUpdate(b []byte, streamID uint32, incr uint32) []byte {
	return appendFrame(b, http2.FrameWindowUpdate, 0, streamID, binary.BigEndian.AppendUint32(nil, incr))
}

func appendRSTStream(b []byte, streamID uint32, code http2.ErrCode) []byte {
	return appendFrame(b, http2.FrameRSTStream, 0, streamID, binary.BigEndian.AppendUint32(nil, uint32(code)))
}

func appendSettings(b []byte, flags http2.Flags, settings ...http2.Setting) []byte {
	payload := make([]byte, 0, 6*len(settings))
	for _, s := range settings {
		payload = binary.BigEndian.AppendUint16(payload, uint16(s.ID))
		payload = binary.BigEndian.AppendUint32(payload, s.Val)
	}
	return appendFrame(b, http2.FrameSettings, flags, 0, payload)
}

// unpad strips a padded frame's padding; HEADERS and DATA may carry it.
func unpad(h frameHeader, payload []byte) ([]byte, error) {
	if !h.has(http2.FlagDataPadded) { // same bit as FlagHeadersPadded
		return payload, nil
	}
	if len(payload) < 1 || int(payload[0]) > len(payload)-1 {
		return nil, connError{http2.ErrCodeProtocol, fmt.Sprintf("%v frame with bad padding", h.typ)}
	}
	return payload[1 : len(payload)-int(payload[0])], nil
}

// connError is a protocol error that ends the connection.
type connError struct {
	code   http2.ErrCode
	reason string
}

func (e connError) Error() string {
	return fmt.Sprintf("h2client: connection error %v: %s", e.code, e.reason)
}

// StreamError is the server's RST_STREAM, or a stream this client reset.
type StreamError struct {
	StreamID uint32
	Code     http2.ErrCode
}

func (e StreamError) Error() string {
	return fmt.Sprintf("h2client: stream %d reset: %v", e.StreamID, e.Code)
}
