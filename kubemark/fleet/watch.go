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
	"time"

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
}

// watcher runs watches with one goroutine each: it streams the response and
// decodes events itself, where client-go's watch adds a second goroutine and
// a channel per watch — thousands of watches make that difference count.
type watcher struct {
	fleet       *Fleet
	contentType string
	userAgent   string
	info        runtime.SerializerInfo
}

func newWatcher(f *Fleet, contentType, userAgent string) (*watcher, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), contentType)
	if !ok || info.StreamSerializer == nil {
		return nil, fmt.Errorf("no streaming decoder for %s", contentType)
	}
	return &watcher{fleet: f, contentType: contentType, userAgent: userAgent, info: info}, nil
}

// run keeps the watch open until ctx ends: it starts with the current state
// (a watch-list: sendInitialEvents, as a v1.37 client's reflector does),
// resumes from the last resource version after every disconnect or server
// timeout (5–10 min, as reflectors ask), and starts over when that version
// is too old.
func (w *watcher) run(ctx context.Context, client *rest.RESTClient, spec watchSpec) {
	f := w.fleet
	rv := ""
	failures := 0
	for ctx.Err() == nil {
		next, err := w.once(ctx, client, spec, rv)
		switch {
		case ctx.Err() != nil:
			return
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			rv = "" // too old: start over with the current state
			failures = 0
			continue
		case err != nil:
			f.metrics.apiError(err)
			failures++
			klog.V(4).InfoS("Watch ended", "watch", spec.name, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(f.backoff(failures)):
			}
		default:
			failures = 0
		}
		if next != "" {
			rv = next
		}
	}
}

// once runs one watch request to its end and returns the last resource
// version seen.
func (w *watcher) once(ctx context.Context, client *rest.RESTClient, spec watchSpec, rv string) (string, error) {
	body, err := w.open(ctx, client, watchURL(client, spec, rv))
	if err != nil {
		return "", err
	}
	defer body.Close()
	return w.follow(ctx, body, spec, rv)
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

// follow reads a watch's events until its stream ends and returns the last
// resource version seen.
func (w *watcher) follow(ctx context.Context, body *watchBody, spec watchSpec, rv string) (string, error) {
	open := w.fleet.metrics.watches.WithLabelValues(spec.name)
	open.Inc()
	defer open.Dec()

	// The response body itself, not the watchBody around it: the fleet's
	// transport reads bytes without a buffer of its own.
	var framed io.Reader = body.ReadCloser
	if body.gzipped {
		members := newMemberReader(body.ReadCloser)
		defer members.Close()
		framed = members
	}
	stream := newPeekReader(framed)
	events := w.newEventReader(stream)
	last := rv
	for {
		typ, obj, err := events.next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || ctx.Err() != nil {
				return last, nil
			}
			return last, err
		}
		if typ == watch.Error {
			if status, ok := obj.(*metav1.Status); ok {
				return last, apierrors.FromObject(status)
			}
			return last, fmt.Errorf("watch %s: error event %v", spec.name, obj)
		}
		if m, err := meta.Accessor(obj); err == nil && m.GetResourceVersion() != "" {
			last = m.GetResourceVersion()
		}
		if typ == watch.Bookmark {
			continue
		}
		w.fleet.metrics.watchEvents.WithLabelValues(spec.name).Inc()
		if spec.handle != nil {
			spec.handle(typ, obj)
		}
	}
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
		if err := e.src.wait(); err != nil {
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
