package fleet

import (
	"bufio"
	"compress/gzip"
	"errors"
	"io"
	"sync"
)

// memberReader inflates a stream of gzip members — what the apiserver sends
// for a compressed watch-list: one member per flush — holding decompressor
// state only while a member is being read. Go's transport, left to inflate
// by itself, keeps a gzip reader (~140 KiB) per open response for the
// stream's whole life; across thousands of watches that is most of a fleet's
// memory, while an idle watch needs none of it.
type memberReader struct {
	src *peekReader  // the compressed stream
	zr  *gzip.Reader // nil between members
}

var gzipReaders sync.Pool // *gzip.Reader

// newMemberReader reads members from body. The inflater must read a
// member byte by byte to stop exactly at its end, leaving the next member's
// bytes in body: a body that reads single bytes itself (the fleet's HTTP/2
// transport) is used as it is, any other gets a small bufio.Reader.
func newMemberReader(body io.Reader) *memberReader {
	if _, ok := body.(io.ByteReader); !ok {
		body = bufio.NewReaderSize(body, 512)
	}
	return &memberReader{src: newPeekReader(body)}
}

func (m *memberReader) Read(p []byte) (int, error) {
	for {
		if m.zr == nil {
			// Wait for the next member without holding a decompressor.
			if err := m.src.wait(); err != nil {
				return 0, err
			}
			zr, _ := gzipReaders.Get().(*gzip.Reader)
			var err error
			if zr == nil {
				zr, err = gzip.NewReader(m.src)
			} else {
				err = zr.Reset(m.src)
			}
			if err != nil {
				return 0, err
			}
			zr.Multistream(false)
			m.zr = zr
		}
		n, err := m.zr.Read(p)
		if errors.Is(err, io.EOF) {
			// End of this member; more may follow.
			gzipReaders.Put(m.zr)
			m.zr = nil
			err = nil
			if n == 0 {
				continue
			}
		}
		return n, err
	}
}

// inMember reports whether a member has been started and not finished.
func (m *memberReader) inMember() bool { return m.zr != nil }

// Close returns a decompressor still held to the pool.
func (m *memberReader) Close() {
	if m.zr != nil {
		gzipReaders.Put(m.zr)
		m.zr = nil
	}
}

// peekReader lets a reader be waited on without a buffer: wait reads one
// byte and holds it for the next read. Over a memberReader, waiting is also
// how the end of the member just read is noticed and its decompressor
// released, before the next member arrives.
type peekReader struct {
	r    io.Reader
	held bool
	one  [1]byte // the held byte; a field, so reading it allocates nothing
}

func newPeekReader(r io.Reader) *peekReader { return &peekReader{r: r} }

func (p *peekReader) wait() error {
	if p.held {
		return nil
	}
	if _, err := io.ReadFull(p.r, p.one[:]); err != nil {
		return err
	}
	p.held = true
	return nil
}

func (p *peekReader) ReadByte() (byte, error) {
	if err := p.wait(); err != nil {
		return 0, err
	}
	p.held = false
	return p.one[0], nil
}

func (p *peekReader) Read(buf []byte) (int, error) {
	if !p.held || len(buf) == 0 {
		return p.r.Read(buf)
	}
	buf[0] = p.one[0]
	p.held = false
	if len(buf) == 1 {
		return 1, nil
	}
	n, err := p.r.Read(buf[1:])
	return n + 1, err
}
