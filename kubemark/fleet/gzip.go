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
	src *bufio.Reader
	zr  *gzip.Reader // nil between members
}

var gzipReaders sync.Pool // *gzip.Reader

func newMemberReader(body io.Reader) *memberReader {
	return &memberReader{src: bufio.NewReaderSize(body, 512)}
}

func (m *memberReader) Read(p []byte) (int, error) {
	for {
		if m.zr == nil {
			// Wait for the next member without holding a decompressor.
			if _, err := m.src.Peek(1); err != nil {
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
