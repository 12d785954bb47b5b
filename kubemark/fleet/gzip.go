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
	src  *peekReader
	zr   *gzip.Reader // nil between members
	held bool         // one inflated byte taken by wait, b, for the next Read
	b    byte
}

var gzipReaders sync.Pool // *gzip.Reader

func newMemberReader(body io.Reader) *memberReader {
	return &memberReader{src: newPeekReader(body)}
}

// wait blocks until there is inflated data to read, holding no
// decompressor while it waits for the next member. It takes the first byte
// of that data and keeps it for the next Read; reading it is also how the
// end of a member just read is noticed and its decompressor released.
func (m *memberReader) wait() error {
	if m.held {
		return nil
	}
	var one [1]byte
	n, err := m.Read(one[:])
	if n == 1 {
		m.b, m.held = one[0], true
		return nil
	}
	return err
}

func (m *memberReader) Read(p []byte) (int, error) {
	if m.held && len(p) > 0 {
		p[0] = m.b
		m.held = false
		return 1, nil
	}
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

// Close returns a decompressor still held to the pool.
func (m *memberReader) Close() {
	if m.zr != nil {
		gzipReaders.Put(m.zr)
		m.zr = nil
	}
}

// peekReader lets a reader be waited on without a buffer: wait reads one
// byte and holds it for the next read. It is also the byte reader the gzip
// inflater needs to stop exactly at a member's end; a body that reads bytes
// itself (the fleet's HTTP/2 transport) is used as it is, any other gets a
// small bufio.Reader of its own.
type peekReader struct {
	r    io.Reader
	br   io.ByteReader
	held bool
	b    byte
}

func newPeekReader(r io.Reader) *peekReader {
	br, ok := r.(io.ByteReader)
	if !ok {
		b := bufio.NewReaderSize(r, 512)
		r, br = b, b
	}
	return &peekReader{r: r, br: br}
}

func (p *peekReader) wait() error {
	if p.held {
		return nil
	}
	b, err := p.br.ReadByte()
	if err != nil {
		return err
	}
	p.b, p.held = b, true
	return nil
}

func (p *peekReader) ReadByte() (byte, error) {
	if p.held {
		p.held = false
		return p.b, nil
	}
	return p.br.ReadByte()
}

func (p *peekReader) Read(buf []byte) (int, error) {
	if !p.held || len(buf) == 0 {
		return p.r.Read(buf)
	}
	buf[0] = p.b
	p.held = false
	if len(buf) == 1 {
		return 1, nil
	}
	n, err := p.r.Read(buf[1:])
	return n + 1, err
}
