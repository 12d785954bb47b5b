// Package h2client is a lean HTTP/2 client transport for the hollow-node
// fleet: one TLS connection per node, every request of that node multiplexed
// on it, as a kubelet's client-go does — but with one goroutine per
// connection instead of Go's two per open stream, and buffers held only
// while bytes are in flight.
//
// A kubelet keeps six watches open for its whole life. With
// golang.org/x/net/http2 each open stream parks a goroutine waiting for the
// stream's end, and each connection keeps read and write buffers sized for
// its largest frame; across thousands of hollow nodes that is most of a
// fleet's memory while the watches are idle. Here a connection's read loop
// dispatches frames to streams that are plain structs, a response body's
// Read waits on a channel, frames are read into and written from pooled
// buffers, and a context's cancellation is a callback, not a goroutine.
//
// On the wire it behaves as Go's client does for client-go: the same
// SETTINGS (push off, 4 MiB stream window, 1 GiB connection window), HPACK
// with a 4 KiB dynamic table, window updates once 4 KiB of a window are
// consumed, a PING after 30 s without a frame, and transparent gzip for
// requests that did not ask for an encoding themselves.
//
// It supports what the fleet sends — unary requests with small bodies and
// long streaming responses — and is not a general-purpose HTTP/2 client: no
// server push, no request trailers, no Expect: 100-continue, and request
// bodies are read whole before they are sent.
package h2client
