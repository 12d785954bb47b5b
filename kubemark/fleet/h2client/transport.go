package h2client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Transport is an http.RoundTripper that sends requests over HTTP/2 on TLS,
// all requests to a server on one connection while it has room for more
// streams. The zero value needs TLSClientConfig to trust the server.
type Transport struct {
	// TLSClientConfig verifies the server and carries the client's
	// certificate. It is not modified; "h2" is offered in ALPN.
	TLSClientConfig *tls.Config
	// DialContext opens the TCP connection; nil uses a net.Dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// ReadIdleTimeout: after this long without a frame from the server a
	// PING is sent; 0 sends none. PingTimeout (default 15 s) later without
	// an answer the connection is closed.
	ReadIdleTimeout time.Duration
	PingTimeout     time.Duration
	// DisableCompression stops the transport from asking for gzip.
	DisableCompression bool

	tlsOnce sync.Once
	tlsConf *tls.Config

	mu    sync.Mutex
	conns map[string][]*clientConn // by host:port
}

const handshakeTimeout = 10 * time.Second

// RoundTrip sends one request and returns its response once the headers
// arrived; the body streams as the server sends it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "https" {
		return nil, fmt.Errorf("h2client: only https URLs are supported, not %v", req.URL)
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	addr := authority(req.URL.Host)
	for attempt := 0; ; attempt++ {
		cc, err := t.conn(req.Context(), addr)
		if err != nil {
			return nil, err
		}
		res, err := cc.roundTrip(req, body, !t.DisableCompression && wantsGzip(req))
		var retry retryableError
		if errors.As(err, &retry) && attempt < 5 && req.Context().Err() == nil {
			continue // never reached the server: a new connection takes it
		}
		return res, err
	}
}

// CloseIdleConnections closes the connections without open streams.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*clientConn
	for _, list := range t.conns {
		for _, cc := range list {
			if cc.idle() {
				idle = append(idle, cc)
			}
		}
	}
	t.mu.Unlock()
	for _, cc := range idle {
		cc.close(errClosedIdle)
	}
}

// conn returns a live connection to addr with room for one more stream,
// dialling one when there is none. Dialling holds the transport's lock, so
// the requests a node starts at once share the connection the first dials.
func (t *Transport) conn(ctx context.Context, addr string) (*clientConn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := t.conns[addr][:0]
	var found *clientConn
	for _, cc := range t.conns[addr] {
		if cc.dead() {
			continue
		}
		live = append(live, cc)
		if found == nil && cc.canTakeStream() {
			found = cc
		}
	}
	if t.conns == nil {
		t.conns = map[string][]*clientConn{}
	}
	t.conns[addr] = live
	if found != nil {
		return found, nil
	}
	cc, err := t.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	t.conns[addr] = append(t.conns[addr], cc)
	return cc, nil
}

func (t *Transport) dial(ctx context.Context, addr string) (*clientConn, error) {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(raw, t.tlsConfig(addr))
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, err
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		tc.Close()
		return nil, fmt.Errorf("h2client: %s did not agree to HTTP/2 (ALPN %q)", addr, p)
	}
	return newClientConn(t, tc)
}

// tlsConfig is the caller's config with h2 offered, made once: every
// connection of the transport shares it rather than holding a copy.
func (t *Transport) tlsConfig(addr string) *tls.Config {
	t.tlsOnce.Do(func() {
		c := &tls.Config{}
		if t.TLSClientConfig != nil {
			c = t.TLSClientConfig.Clone()
		}
		c.NextProtos = []string{"h2"}
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			c.ServerName = host
		}
		t.tlsConf = c
	})
	return t.tlsConf
}

func (t *Transport) pingTimeout() time.Duration {
	if t.PingTimeout > 0 {
		return t.PingTimeout
	}
	return 15 * time.Second
}

// readBody takes the request's body whole: the fleet's bodies are small
// objects, and a body in hand can be sent again on a new connection.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	var b bytes.Buffer
	if req.ContentLength > 0 {
		b.Grow(int(req.ContentLength))
	}
	if _, err := io.Copy(&b, req.Body); err != nil {
		return nil, fmt.Errorf("h2client: reading the request body: %w", err)
	}
	return b.Bytes(), nil
}

// wantsGzip: ask for gzip, and inflate the answer, when the caller did not
// ask for an encoding itself — as Go's transport does.
func wantsGzip(req *http.Request) bool {
	return req.Method != http.MethodHead && req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == ""
}

func authority(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") || !strings.Contains(host, ":") {
		return host + ":443"
	}
	return net.JoinHostPort(host, "443")
}

// retryableError marks a request the server never processed.
type retryableError struct{ err error }

func (e retryableError) Error() string { return e.err.Error() }
func (e retryableError) Unwrap() error { return e.err }

var (
	errClosedIdle   = errors.New("h2client: idle connection closed")
	errGoAway       = errors.New("h2client: server sent GOAWAY before processing the request")
	errBodyClosed   = errors.New("h2client: response body closed")
	errPingTimeout  = errors.New("h2client: no answer to PING: connection considered dead")
	errStreamsLimit = errors.New("h2client: connection has no room for another stream")
)
