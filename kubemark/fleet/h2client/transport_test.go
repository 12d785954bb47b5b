package h2client

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is an HTTP/2 TLS test server that counts the connections it took.
type server struct {
	*httptest.Server
	conns atomic.Int32
}

func newServer(t *testing.T, h http.Handler) *server {
	t.Helper()
	s := &server{Server: httptest.NewUnstartedServer(h)}
	s.EnableHTTP2 = true
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *server) transport() *Transport {
	roots := x509.NewCertPool()
	roots.AddCert(s.Certificate())
	return &Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
}

// do sends req and reads the whole response.
func do(t *testing.T, tr *Transport, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return res, data
}

func get(t *testing.T, tr *Transport, url string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return do(t, tr, req)
}

func TestRequestsAndResponses(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 10<<16) // 10 MiB: more than a stream window
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			data, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			sum := sha256.Sum256(data)
			w.Header().Set("X-Proto", r.Proto)
			w.Header().Set("X-Agent", r.UserAgent())
			w.Header().Set("X-Length", strconv.FormatInt(r.ContentLength, 10))
			fmt.Fprintf(w, "%s %s %d %s", r.Method, r.URL.RawQuery, len(data), hex.EncodeToString(sum[:]))
		case "/big":
			w.Write(big)
		case "/missing":
			http.Error(w, "nothing here", http.StatusNotFound)
		}
	}))
	tr := s.transport()

	body := bytes.Repeat([]byte("x"), 300<<10) // more than the server's initial 64 KiB window
	sum := sha256.Sum256(body)
	tests := []struct {
		name, method, path string
		body               []byte
		wantStatus         int
		want               string
	}{
		{"get", http.MethodGet, "/echo?a=1&b=2", nil, 200, "GET a=1&b=2 0 " + hex.EncodeToString(sha256.New().Sum(nil))},
		{"put a body larger than the send window", http.MethodPut, "/echo", body, 200, fmt.Sprintf("PUT  %d %s", len(body), hex.EncodeToString(sum[:]))},
		{"small patch", http.MethodPatch, "/echo", []byte(`{"a":1}`), 200, "PATCH  7 "},
		{"not found", http.MethodGet, "/missing", nil, 404, "nothing here\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rd io.Reader
			if tc.body != nil {
				rd = bytes.NewReader(tc.body)
			}
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, rd)
			req.Header.Set("User-Agent", "kubelet/test")
			res, data := do(t, tr, req)
			if res.StatusCode != tc.wantStatus || !strings.HasPrefix(string(data), tc.want) {
				t.Fatalf("got %d %q, want %d %q", res.StatusCode, data, tc.wantStatus, tc.want)
			}
			if res.ProtoMajor != 2 {
				t.Errorf("response proto %s", res.Proto)
			}
			if tc.wantStatus == 200 {
				if got := res.Header.Get("X-Proto"); got != "HTTP/2.0" {
					t.Errorf("server saw %s", got)
				}
				if got := res.Header.Get("X-Agent"); got != "kubelet/test" {
					t.Errorf("server saw user agent %q", got)
				}
				if got := res.Header.Get("X-Length"); tc.body != nil && got != strconv.Itoa(len(tc.body)) {
					t.Errorf("server saw content length %s, want %d", got, len(tc.body))
				}
			}
		})
	}

	t.Run("response larger than the stream window", func(t *testing.T) {
		_, data := get(t, tr, s.URL+"/big")
		if !bytes.Equal(data, big) {
			t.Fatalf("got %d bytes, want the %d sent", len(data), len(big))
		}
	})
	if n := s.conns.Load(); n != 1 {
		t.Errorf("the server took %d connections, want every request on one", n)
	}
}

func TestConcurrentStreamsShareOneConnection(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.URL.Query().Get("i"))
	}))
	tr := s.transport()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/?i=%d", s.URL, i), nil)
			res, err := tr.RoundTrip(req)
			if err != nil {
				errs <- err
				return
			}
			data, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || string(data) != strconv.Itoa(i) {
				errs <- fmt.Errorf("request %d: got %q, %v", i, data, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("the server took %d connections, want 1", n)
	}
}

// A stream that stays open costs no goroutine: this is what the package is
// for, so it is asserted, along with cancellation reaching the server.
func TestOpenStreamsHoldNoGoroutinesAndCancelReachesTheServer(t *testing.T) {
	const streams = 200
	var open, cancelled atomic.Int32
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/watch" {
			return
		}
		open.Add(1)
		fmt.Fprintln(w, "event 1")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // until the client resets the stream
		cancelled.Add(1)
	}))
	tr := s.transport()
	get(t, tr, s.URL) // dial first: the connection's goroutines are not the streams'
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	runtime.GC()
	before := runtime.NumGoroutine()
	bodies := make([]io.ReadCloser, 0, streams)
	for range streams {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/watch", nil)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		line := make([]byte, 8)
		if _, err := io.ReadFull(res.Body, line); err != nil || string(line) != "event 1\n" {
			t.Fatalf("first event: %q, %v", line, err)
		}
		bodies = append(bodies, res.Body)
	}
	// The server runs a handler goroutine per stream; ours must add none.
	client := runtime.NumGoroutine() - before - int(open.Load()) + 1
	if client > 5 {
		t.Errorf("%d open streams added %d goroutines to the client side, want none per stream", streams, client)
	}

	// Half are cancelled through the context, half closed by the reader.
	readErr := make(chan error, 1)
	go func() {
		_, err := bodies[0].Read(make([]byte, 10))
		readErr <- err
	}()
	cancel()
	if err := <-readErr; !errors.Is(err, context.Canceled) {
		t.Errorf("a read blocked on a cancelled stream returned %v, want context.Canceled", err)
	}
	for _, b := range bodies {
		b.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for cancelled.Load() < streams && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := cancelled.Load(); n != streams {
		t.Errorf("%d of %d server handlers saw their stream end", n, streams)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("the server took %d connections, want 1", n)
	}
}

func TestGzip(t *testing.T) {
	const text = "a kubelet asked for this"
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			fmt.Fprint(w, text)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		fmt.Fprint(zw, text)
		zw.Close()
	}))
	tr := s.transport()

	res, data := get(t, tr, s.URL)
	if string(data) != text || !res.Uncompressed || res.Header.Get("Content-Encoding") != "" {
		t.Errorf("asked by the transport: got %q uncompressed=%v encoding=%q, want the text inflated", data, res.Uncompressed, res.Header.Get("Content-Encoding"))
	}

	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	_, data = do(t, tr, req)
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("asked by the caller: the body should stay compressed: %v", err)
	}
	if inflated, _ := io.ReadAll(zr); string(inflated) != text {
		t.Errorf("asked by the caller: inflated %q", inflated)
	}

	tr.DisableCompression = true
	if _, data := get(t, tr, s.URL); string(data) != text {
		t.Errorf("compression off: got %q", data)
	}
}

func TestLostConnection(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/hang" {
			<-r.Context().Done()
		}
	}))
	tr := s.transport()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/hang", nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line := make([]byte, 6)
	if _, err := io.ReadFull(res.Body, line); err != nil {
		t.Fatal(err)
	}
	s.CloseClientConnections()
	if _, err := io.ReadAll(res.Body); err == nil {
		t.Error("reading a stream of a closed connection: no error")
	}
	// The next request dials again.
	if _, data := get(t, tr, s.URL); string(data) != "hello\n" {
		t.Errorf("after the loss: got %q", data)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("the server took %d connections, want 2", n)
	}
}

// countingConn counts the writes on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int32
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func TestSmallBodyLeavesWithItsHeaders(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		w.Write(data)
	}))
	tr := s.transport()
	var writes atomic.Int32
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{c, &writes}, err
	}
	get(t, tr, s.URL) // the handshake and settings are not the request's
	// Sizes around one frame (16 KiB): the body inline with its headers, or
	// after them frame by frame; the server must get every byte either way.
	for _, size := range []int{300, 16<<10 - 1, 16 << 10, 16<<10 + 1, 40 << 10} {
		body := bytes.Repeat([]byte("l"), size)
		before := writes.Load()
		req, _ := http.NewRequest(http.MethodPut, s.URL, bytes.NewReader(body))
		_, data := do(t, tr, req)
		if !bytes.Equal(data, body) {
			t.Errorf("%d bytes: the server got %d bytes back", size, len(data))
		}
		// TLS splits big writes into records of its own choosing, so only
		// the small one says how many writes the client made.
		if n := writes.Load() - before; size == 300 && n != 1 {
			t.Errorf("a %d-byte body: sent in %d writes, want 1 with its headers", size, n)
		}
	}
}

func TestIdleConnectionIsPingedAndKept(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	tr := s.transport()
	tr.ReadIdleTimeout, tr.PingTimeout = 20*time.Millisecond, time.Second
	get(t, tr, s.URL)
	time.Sleep(200 * time.Millisecond) // several idle periods, each answered
	if _, data := get(t, tr, s.URL); string(data) != "ok" {
		t.Fatalf("got %q", data)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("the server took %d connections, want the pinged one kept", n)
	}
}

func TestOnlyHTTPS(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("plain http: %v", err)
	}
}

func TestOnReadyTellsWhenABodyCanBeRead(t *testing.T) {
	send := make(chan string)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if r.URL.Path == "/open" {
			<-r.Context().Done()
			return
		}
		for line := range send {
			fmt.Fprint(w, line)
			w.(http.Flusher).Flush()
		}
	}))
	tr := s.transport()
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := res.Body.(interface {
		Ready() bool
		OnReady(func())
	})
	if !ok {
		t.Fatalf("body %T has no Ready/OnReady", res.Body)
	}
	if b.Ready() {
		t.Fatal("Ready before the server sent anything")
	}
	calls := make(chan struct{}, 100)
	b.OnReady(func() { calls <- struct{}{} })
	waitCall := func(what string) {
		t.Helper()
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatalf("no OnReady call after %s", what)
		}
	}

	send <- "one"
	waitCall("data")
	if !b.Ready() {
		t.Fatal("not Ready after OnReady for data")
	}
	buf := make([]byte, 10)
	if n, err := res.Body.Read(buf); err != nil || string(buf[:n]) != "one" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if b.Ready() {
		t.Fatal("Ready with nothing left to read")
	}

	close(send) // the handler returns: the stream ends
	waitCall("the stream's end")
	for !b.Ready() { // the end may follow the last DATA frame's call
		waitCall("the stream's end")
	}
	if n, err := res.Body.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after the end: %d, %v, want io.EOF", n, err)
	}
	res.Body.Close()

	// Closing an open stream resets it, which fails the stream: the
	// callback must be gone by then.
	req, _ = http.NewRequest(http.MethodGet, s.URL+"/open", nil)
	res, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	var late atomic.Int32
	res.Body.(interface{ OnReady(func()) }).OnReady(func() { late.Add(1) })
	res.Body.Close()
	if n := late.Load(); n != 0 {
		t.Errorf("OnReady called %d times by Close", n)
	}
}
