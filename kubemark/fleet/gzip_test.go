package fleet

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// members concatenates one gzip member per part, as the apiserver's
// per-flush gzip writer does.
func members(t *testing.T, parts ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, p := range parts {
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestMemberReaderInflatesEveryMember(t *testing.T) {
	parts := []string{"first event", "", "second, longer event " + string(bytes.Repeat([]byte("x"), 70000)), "third"}
	m := newMemberReader(bytes.NewReader(members(t, parts...)))
	defer m.Close()
	got, err := io.ReadAll(m)
	if err != nil {
		t.Fatal(err)
	}
	want := parts[0] + parts[1] + parts[2] + parts[3]
	if string(got) != want {
		t.Errorf("inflated %d bytes, want %d", len(got), len(want))
	}
}

func TestMemberReaderHoldsNoDecompressorBetweenMembers(t *testing.T) {
	// Read exactly the first member through a pipe: afterwards the reader
	// waits for more without a decompressor.
	data := members(t, "hello")
	pr, pw := io.Pipe()
	go func() {
		pw.Write(data)
	}()
	m := newMemberReader(pr)
	buf := make([]byte, 5)
	if _, err := io.ReadFull(m, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("read %q, %v", buf, err)
	}
	// The member's end is seen on the next read, which then blocks on the
	// pipe; end the stream to let it return.
	done := make(chan error, 1)
	go func() {
		_, err := m.Read(make([]byte, 1))
		done <- err
	}()
	pw.Close()
	if err := <-done; err != io.EOF {
		t.Fatalf("after the last member: err = %v, want EOF", err)
	}
	if m.zr != nil {
		t.Error("a decompressor is held while no member is being read")
	}
}

func TestMemberReaderRejectsGarbage(t *testing.T) {
	m := newMemberReader(bytes.NewReader([]byte("not gzip at all")))
	if _, err := io.ReadAll(m); err == nil {
		t.Error("garbage inflated without error")
	}
}
