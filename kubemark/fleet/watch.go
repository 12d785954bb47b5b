package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// watchSpec is one watch a hollow node holds, as a kubelet's informer does.
type watchSpec struct {
	name   string // for metrics and logs: "pods", "services", ...
	path   string // collection path, e.g. /api/v1/pods
	params url.Values
	// handle receives every event; nil discards them (the fleet keeps the
	// watch open for the load it puts on the apiserver, not for the data).
	handle func(watch.EventType, runtime.Object)
	// synced, when set, is called once the watch has delivered the
	// current state (the watch-list's initial events have ended).
	synced func()
}

// watcher runs the fleet's watches. On the fleet's own HTTP/2 connections a
// watch owns no goroutine while it is idle: the connection's read loop says
// when bytes arrive, and a goroutine lives only while an event is being
// read (watchRun). Elsewhere (plain HTTP, JSON) a watch keeps one
// goroutine, which still decodes events itself where client-go's watch adds
// a second goroutine and a channel per watch.
type watcher struct {
	fleet       *Fleet
	contentType string
	userAgent   string
	info        runtime.SerializerInfo
	// opening holds a token per watch request waiting for its response.
	// Once registration is done, thousands of nodes would otherwise send six
	// watch requests each within seconds: at 5000 nodes the apiserver
	// answered ~110 000 of them 429 (its priority level for nodes has some
	// 70 seats and a few thousand queue places), lease renewals stalled for
	// 30 s, and the controller-manager and scheduler lost their leader
	// leases. Bounded, the same watches open without a rejection.
	opening chan struct{}
	// unanswered counts watch requests waiting for a token or a response.
	unanswered atomic.Int32
}

func newWatcher(f *Fleet, contentType, userAgent string) (*watcher, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), contentType)
	if !ok || info.StreamSerializer == nil {
		return nil, fmt.Errorf("no streaming decoder for %s", contentType)
	}
	opening := DefaultConfig().OpeningWatches
	if f != nil {
		opening = f.cfg.OpeningWatches
	}
	return &watcher{fleet: f, contentType: contentType, userAgent: userAgent, info: info,
		opening: make(chan struct{}, opening)}, nil
}

// start keeps a watch open until ctx ends, then calls done: it starts with
// the current state (a watch-list: sendInitialEvents, as a v1.37 client's
// reflector does), resumes from the last resource version after every
// disconnect or server timeout (5–10 min, as reflectors ask), and starts
// over when that version is too old.
func (w *watcher) start(ctx context.Context, client *rest.RESTClient, spec watchSpec, done func()) {
	r := &watchRun{w: w, ctx: ctx, client: client, spec: spec, done: done,
		open: w.fleet.metrics.watches.WithLabelValues(spec.name)}
	r.owned.Store(true)
	go r.connect(nil)
}

// watchRun is one watch across its requests. Its reading state belongs to
// whoever holds owned: the goroutine connecting, or the one draining
// events; OnReady callbacks only start a drain when nobody holds it.
type watchRun struct {
	w      *watcher
	ctx    context.Context
	client *rest.RESTClient
	spec   watchSpec
	done   func()
	open   prometheus.Gauge

	owned    atomic.Bool
	rv       string // last resource version seen
	failures int

	// The request being read.
	body    *watchBody
	members *memberReader // gzip only
	gate    *pollGate     // nil when the body cannot be polled
	events  *eventReader
}

// pollable is a response body that says when it can be read without
// waiting: the fleet's HTTP/2 transport's.
type pollable interface {
	io.Reader
	io.ByteReader
	Ready() bool
	OnReady(func())
}

// connect takes in how the last request ended (nil: there was none) and
// opens the next, with backoff after failures, until the watch is attached
// to a pollable body (the goroutine ends then) or ctx ends. Bodies that
// cannot be polled are followed here, blocking.
func (r *watchRun) connect(ended error) {
	for {
		if ended != nil && !r.settle(ended) || r.ctx.Err() != nil {
			r.done()
			return
		}
		var body *watchBody
		body, ended = r.w.openBounded(r.ctx, r.client, watchURL(r.client, r.spec, r.rv))
		if ended != nil {
			if r.rv == "" && r.spec.handle == nil && r.ctx.Err() == nil {
				ended = r.listInstead(ended)
			}
			continue
		}
		r.attach(body)
		if r.gate != nil {
			r.owned.Store(false)
			r.kick()
			return
		}
		for ended == nil {
			ended = r.next()
		}
		r.detach()
	}
}

// attach sets up the readers of a new response.
func (r *watchRun) attach(body *watchBody) {
	r.body = body
	r.open.Inc()
	var src io.Reader = body.ReadCloser
	if p, ok := body.ReadCloser.(pollable); ok && r.w.info.MediaType == runtime.ContentTypeProtobuf {
		// Only length-prefixed frames can be waited for at their first byte;
		// the JSON framer reads ahead, so its next event may be in hand
		// while the body has nothing.
		r.gate = &pollGate{body: p}
		src = r.gate
	}
	if body.gzipped {
		r.members = newMemberReader(src)
		src = r.members
		if r.gate != nil {
			r.gate.members = r.members
		}
	}
	r.events = r.w.newEventReader(newPeekReader(src))
	r.events.gate = r.gate
	if r.gate != nil {
		r.gate.body.OnReady(r.kick)
	}
}

// detach closes the response and drops its readers.
func (r *watchRun) detach() {
	r.body.Close()
	if r.members != nil {
		r.members.Close()
	}
	r.open.Dec()
	r.body, r.members, r.gate, r.events = nil, nil, nil, nil
}

// kick starts a drain unless one runs (or the watch is connecting).
func (r *watchRun) kick() {
	if r.owned.CompareAndSwap(false, true) {
		go r.drain()
	}
}

// drain reads events while the body has bytes, then gives its goroutine
// up; at the stream's end it reconnects.
func (r *watchRun) drain() {
	for {
		err := r.next()
		if err == nil {
			continue
		}
		if errors.Is(err, errIdle) {
			body := r.gate.body // r is not ours after the release
			r.owned.Store(false)
			// Bytes that came after the gate looked but before the release
			// found no drain to kick: look once more.
			if !body.Ready() || !r.owned.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		r.detach()
		r.connect(err)
		return
	}
}

// errStreamEnd is a watch stream that ended without an error: the server's
// timeout or a closed connection. The watch resumes where it was.
var errStreamEnd = errors.New("watch stream ended")

// next reads and handles one event. It returns errIdle when the body has
// nothing yet, errStreamEnd or the error that ended the stream.
func (r *watchRun) next() error {
	typ, obj, err := r.events.next()
	if err != nil {
		if errors.Is(err, errIdle) {
			return err
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || r.ctx.Err() != nil {
			return errStreamEnd
		}
		return err
	}
	if typ == watch.Error {
		if status, ok := obj.(*metav1.Status); ok {
			return apierrors.FromObject(status)
		}
		return fmt.Errorf("watch %s: error event %v", r.spec.name, obj)
	}
	if m, err := meta.Accessor(obj); err == nil && m.GetResourceVersion() != "" {
		r.rv = m.GetResourceVersion()
	}
	if typ == watch.Bookmark {
		if m, err := meta.Accessor(obj); err == nil && r.spec.synced != nil &&
			m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			r.spec.synced()
			r.spec.synced = nil
		}
		return nil
	}
	r.w.fleet.metrics.watchEvents.WithLabelValues(r.spec.name).Inc()
	if r.spec.handle != nil {
		r.spec.handle(typ, obj)
	}
	return nil
}

// listInstead does what a reflector does when its watch-list fails (the
// Node authorizer refusing a node the object of a pod it has just been
// bound, say): it lists the objects at once, and the watch resumes from the
// list's resource version without a backoff. It takes in why the watch-list
// failed and returns nil once the list stands in for it, else the list's
// error, which the usual backoff follows. Only for watches whose events the
// fleet drops: the list's items are not delivered.
func (r *watchRun) listInstead(refused error) error {
	r.w.fleet.metrics.apiError(refused)
	req := r.client.Get().AbsPath(r.spec.path).Param("resourceVersion", "0")
	for k, vs := range r.spec.params {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	obj, err := req.Do(r.ctx).Get()
	if err != nil {
		return err
	}
	list, err := meta.ListAccessor(obj)
	if err != nil {
		return fmt.Errorf("list %s: %w", r.spec.name, err)
	}
	r.rv = list.GetResourceVersion()
	if r.spec.synced != nil {
		r.spec.synced()
		r.spec.synced = nil
	}
	return nil
}

// settle takes in how a request ended and waits out the backoff after a
// failure; false when ctx ended.
func (r *watchRun) settle(err error) bool {
	f := r.w.fleet
	switch {
	case r.ctx.Err() != nil:
		return false
	case errors.Is(err, errStreamEnd):
		r.failures = 0
		return true
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		r.rv = "" // too old: start over with the current state
		r.failures = 0
		return true
	}
	f.metrics.apiError(err)
	r.failures++
	klog.V(4).InfoS("Watch ended", "watch", r.spec.name, "err", err)
	select {
	case <-r.ctx.Done():
		return false
	case <-f.clock.After(reflectorBackoff(r.failures)):
		return true
	}
}

// reflectorBackoff is the wait of a kubelet's reflector before it lists and
// watches again after failures failed tries (1: the first): 800 ms doubling
// to 30 s, plus up to as much again of jitter. A node that lost the Node
// authorizer's race to a pod's binding is back this soon for the pod's
// ConfigMaps and Secrets, inside or past the second its mount waits for them.
func reflectorBackoff(failures int) time.Duration {
	const first, most = 800 * time.Millisecond, 30 * time.Second
	d := most
	if failures < 7 {
		d = min(first<<max(failures-1, 0), most)
	}
	return jitter(d, 1)
}

// watchURL is the request of one watch, resuming at rv when it is set.
func watchURL(client *rest.RESTClient, spec watchSpec, rv string) string {
	req := client.Get().AbsPath(spec.path).
		Param("watch", "true").
		Param("allowWatchBookmarks", "true").
		Param("timeoutSeconds", strconv.Itoa(300+rand.IntN(300)))
	for k, vs := range spec.params {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	if rv == "" {
		req = req.Param("sendInitialEvents", "true").Param("resourceVersionMatch", string(metav1.ResourceVersionMatchNotOlderThan))
	} else {
		req = req.Param("resourceVersion", rv)
	}
	return req.URL().String()
}

// eventReader decodes a watch stream event by event into a buffer borrowed
// for one frame: thousands of idle watches hold no decode buffers, where
// client-go's decoder keeps one per watch, sized for its largest event.
type eventReader struct {
	src    *peekReader
	frames io.Reader
	outer  runtime.Decoder // the WatchEvent envelope
	// waitFirst: wait for the stream's next byte before borrowing a buffer.
	// Only for length-prefixed frames (protobuf): the JSON framer reads
	// ahead into a decoder of its own, so its next event may already be in
	// hand while the stream has nothing more.
	waitFirst bool
	// gate, when set, lets next return errIdle instead of waiting for an
	// event's first byte; once that byte is in, the rest of the event is
	// waited for.
	gate *pollGate
}

func (w *watcher) newEventReader(src *peekReader) *eventReader {
	return &eventReader{
		src:       src,
		frames:    w.info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(src)),
		outer:     w.info.StreamSerializer.Serializer,
		waitFirst: w.info.MediaType == runtime.ContentTypeProtobuf,
	}
}

const (
	frameBufferSize = 4 << 10
	maxEventSize    = 64 << 20
)

var frameBuffers = sync.Pool{New: func() any { b := make([]byte, frameBufferSize); return &b }}

func (e *eventReader) next() (watch.EventType, runtime.Object, error) {
	if e.waitFirst {
		if e.gate != nil {
			e.gate.armed = true
		}
		err := e.src.wait()
		if e.gate != nil {
			e.gate.armed = false
		}
		if err != nil {
			return "", nil, err
		}
	}
	bp := frameBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 {
			frameBuffers.Put(bp)
		}
	}()
	n := 0
	for {
		buf := (*bp)[:cap(*bp)]
		m, err := e.frames.Read(buf[n:])
		n += m
		if errors.Is(err, io.ErrShortBuffer) {
			if len(buf) >= maxEventSize {
				return "", nil, fmt.Errorf("watch event larger than %d bytes", maxEventSize)
			}
			grown := make([]byte, 2*len(buf))
			copy(grown, buf[:n])
			*bp = grown
			continue
		}
		if err != nil {
			return "", nil, err
		}
		break
	}
	var got metav1.WatchEvent
	if _, _, err := e.outer.Decode((*bp)[:n], nil, &got); err != nil {
		return "", nil, fmt.Errorf("decoding a watch event: %w", err)
	}
	switch watch.EventType(got.Type) {
	case watch.Added, watch.Modified, watch.Deleted, watch.Error, watch.Bookmark:
	default:
		return "", nil, fmt.Errorf("watch event of unknown type %q", got.Type)
	}
	// The envelope's Raw is a copy: the frame buffer may go back now.
	obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), got.Object.Raw)
	if err != nil {
		return "", nil, fmt.Errorf("decoding a watch event's object: %w", err)
	}
	return watch.EventType(got.Type), obj, nil
}

// watchBody is an open watch response.
type watchBody struct {
	io.ReadCloser
	gzipped bool
}

// openBounded is open once fewer than OpeningWatches requests of the
// fleet wait for their response.
func (w *watcher) openBounded(ctx context.Context, client *rest.RESTClient, url string) (*watchBody, error) {
	w.unanswered.Add(1)
	defer w.unanswered.Add(-1)
	select {
	case w.opening <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-w.opening }()
	return w.open(ctx, client, url)
}

// open sends the watch request on the node's own connection. It asks for
// gzip itself, as Go's transport would for a client like the kubelet, so that
// the response comes compressed on the wire as a kubelet's does, but is
// inflated by a memberReader instead of by the transport.
func (w *watcher) open(ctx context.Context, client *rest.RESTClient, url string) (*watchBody, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", w.contentType+", application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	// Set here, client-go's user-agent wrapper passes the request through
	// as it is instead of cloning it for the stream's whole life.
	req.Header.Set("User-Agent", w.userAgent)
	resp, err := client.Client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, responseError(resp, data)
	}
	return &watchBody{ReadCloser: resp.Body, gzipped: resp.Header.Get("Content-Encoding") == "gzip"}, nil
}

// responseError turns a failed response into the API error it carries.
func responseError(resp *http.Response, body []byte) error {
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if inflated, err := io.ReadAll(newMemberReader(bytes.NewReader(body))); err == nil {
			body = inflated
		}
	}
	if obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
		if status, ok := obj.(*metav1.Status); ok && status.Status == metav1.StatusFailure {
			return &apierrors.StatusError{ErrStatus: *status}
		}
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodGet, schema.GroupResource{}, "", strings.TrimSpace(string(body)), 0, true)
}
