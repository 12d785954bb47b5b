package fleet

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kscale/kscale/kubemark/fleet/h2client"
)

// watchStream encodes events as the apiserver streams them: each object in
// the content type, wrapped in a WatchEvent, framed; with gzip, one member
// per event (the apiserver flushes after each).
func watchStream(t *testing.T, contentType string, gzipped bool, events ...watch.Event) []byte {
	t.Helper()
	info, ok := k8sruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), contentType)
	if !ok {
		t.Fatalf("no serializer for %s", contentType)
	}
	objEncoder := scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion)
	var out bytes.Buffer
	for _, ev := range events {
		raw, err := k8sruntime.Encode(objEncoder, ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		var frame bytes.Buffer
		fw := info.StreamSerializer.Framer.NewFrameWriter(&frame)
		if err := info.StreamSerializer.Serializer.Encode(&metav1.WatchEvent{Type: string(ev.Type), Object: k8sruntime.RawExtension{Raw: raw}}, fw); err != nil {
			t.Fatal(err)
		}
		if !gzipped {
			out.Write(frame.Bytes())
			continue
		}
		zw := gzip.NewWriter(&out)
		zw.Write(frame.Bytes())
		zw.Close()
	}
	return out.Bytes()
}

func TestEventReaderDecodesEveryEvent(t *testing.T) {
	big := &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "big", ResourceVersion: "12",
			Annotations: map[string]string{"filler": strings.Repeat("x", 3*frameBufferSize)}}}
	small := &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "small", ResourceVersion: "11"}}
	events := []watch.Event{{Type: watch.Added, Object: small}, {Type: watch.Modified, Object: big}, {Type: watch.Deleted, Object: small}}

	for _, ct := range []string{"application/vnd.kubernetes.protobuf", "application/json"} {
		for _, gzipped := range []bool{false, true} {
			t.Run(ct+map[bool]string{true: " gzip"}[gzipped], func(t *testing.T) {
				w, err := newWatcher(nil, ct, "test")
				if err != nil {
					t.Fatal(err)
				}
				data := watchStream(t, ct, gzipped, events...)
				src := newPeekReader(bytes.NewReader(data))
				if gzipped {
					src = newPeekReader(newMemberReader(bytes.NewReader(data)))
				}
				r := w.newEventReader(src)
				for i, want := range events {
					typ, obj, err := r.next()
					if err != nil {
						t.Fatalf("event %d: %v", i, err)
					}
					pod, ok := obj.(*v1.Pod)
					if typ != want.Type || !ok || pod.Name != want.Object.(*v1.Pod).Name ||
						pod.Annotations["filler"] != want.Object.(*v1.Pod).Annotations["filler"] {
						t.Fatalf("event %d: got %s %T, want %s %s", i, typ, obj, want.Type, want.Object.(*v1.Pod).Name)
					}
				}
				if _, _, err := r.next(); err != io.EOF {
					t.Errorf("after the last event: %v, want EOF", err)
				}
			})
		}
	}
}

func TestEventReaderRejectsGarbage(t *testing.T) {
	w, err := newWatcher(nil, "application/vnd.kubernetes.protobuf", "test")
	if err != nil {
		t.Fatal(err)
	}
	// A frame of 5 bytes that is no WatchEvent.
	r := w.newEventReader(newPeekReader(bytes.NewReader([]byte{0, 0, 0, 5, 1, 2, 3, 4, 5})))
	if _, _, err := r.next(); err == nil || !strings.Contains(err.Error(), "decoding a watch event") {
		t.Errorf("garbage frame: %v", err)
	}
}

// watchServer is an HTTP/2 TLS apiserver stand-in for watches of pods: every
// open watch streams the events published so far and then each new one, in
// protobuf, one gzip member per event when gzipped; end makes every open
// watch's stream end.
type watchServer struct {
	*httptest.Server
	t       *testing.T
	gzipped bool

	mu       sync.Mutex
	events   [][]byte      // framed WatchEvents
	changed  chan struct{} // closed and replaced at every publish or end
	ended    int           // generation of end calls
	requests []url.Values  // the query of every watch request

	// beforeHeaders, when set, runs in the handler before the response
	// headers are written: a slow apiserver.
	beforeHeaders func(*http.Request)
}

func newWatchServer(t *testing.T, gzipped bool) *watchServer {
	ws := &watchServer{t: t, gzipped: gzipped, changed: make(chan struct{})}
	ws.Server = httptest.NewUnstartedServer(http.HandlerFunc(ws.serve))
	ws.EnableHTTP2 = true
	ws.StartTLS()
	t.Cleanup(ws.Close)
	return ws
}

func (ws *watchServer) serve(w http.ResponseWriter, r *http.Request) {
	ws.mu.Lock()
	ws.requests = append(ws.requests, r.URL.Query())
	generation := ws.ended
	ws.mu.Unlock()
	if ws.beforeHeaders != nil {
		ws.beforeHeaders(r)
	}
	w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
	if ws.gzipped {
		w.Header().Set("Content-Encoding", "gzip")
	}
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for sent := 0; ; {
		ws.mu.Lock()
		if ws.ended != generation {
			ws.mu.Unlock()
			return
		}
		pending, changed := ws.events[sent:], ws.changed
		ws.mu.Unlock()
		for _, ev := range pending {
			w.Write(ev)
			w.(http.Flusher).Flush()
		}
		sent += len(pending)
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

func (ws *watchServer) publish(name, rv string) {
	pod := &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
	data := watchStream(ws.t, "application/vnd.kubernetes.protobuf", ws.gzipped, watch.Event{Type: watch.Added, Object: pod})
	ws.mu.Lock()
	ws.events = append(ws.events, data)
	close(ws.changed)
	ws.changed = make(chan struct{})
	ws.mu.Unlock()
}

func (ws *watchServer) endStreams() {
	ws.mu.Lock()
	ws.ended++
	ws.events = nil // a resumed watch starts after what it saw
	close(ws.changed)
	ws.changed = make(chan struct{})
	ws.mu.Unlock()
}

func (ws *watchServer) client(t *testing.T) *rest.RESTClient {
	return h2RESTClient(t, ws.Server)
}

// h2RESTClient is a client of the fleet's HTTP/2 transport to a test server.
func h2RESTClient(t *testing.T, srv *httptest.Server) *rest.RESTClient {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	c, err := rest.RESTClientFor(&rest.Config{
		Host:      srv.URL,
		Transport: &h2client.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}},
		ContentConfig: rest.ContentConfig{GroupVersion: &schema.GroupVersion{Version: "v1"},
			NegotiatedSerializer: scheme.Codecs.WithoutConversion()},
		APIPath: "/api",
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
	}
}

// TestIdleWatchesHoldNoGoroutine: on the fleet's transport, watches between
// events own no goroutine, yet see every event in order, resume at their
// last resource version when the stream ends, and stop with their context.
func TestIdleWatchesHoldNoGoroutine(t *testing.T) {
	const watches = 100
	for _, gzipped := range []bool{false, true} {
		t.Run(map[bool]string{false: "identity", true: "gzip"}[gzipped], func(t *testing.T) {
			ws := newWatchServer(t, gzipped)
			client := ws.client(t)
			w, err := newWatcher(testFleet(t, nil), "application/vnd.kubernetes.protobuf", "test")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			seen := make([][]string, watches)
			count := func(n int) func() bool {
				return func() bool {
					mu.Lock()
					defer mu.Unlock()
					for _, names := range seen {
						if len(names) < n {
							return false
						}
					}
					return true
				}
			}
			ws.publish("p0", "10")
			runtime.GC()
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stopped sync.WaitGroup
			for i := range watches {
				stopped.Add(1)
				w.start(ctx, client, watchSpec{name: "pods", path: "/api/v1/pods", handle: func(_ watch.EventType, obj k8sruntime.Object) {
					mu.Lock()
					seen[i] = append(seen[i], obj.(*v1.Pod).Name)
					mu.Unlock()
				}}, stopped.Done)
			}
			eventually(t, "every watch saw the first event", count(1))
			// The server holds a handler goroutine per stream; the client
			// side must hold none per watch once the events are read.
			eventually(t, "the watches' goroutines end", func() bool {
				return runtime.NumGoroutine()-before-watches <= 10
			})

			ws.publish("p1", "11")
			ws.publish("p2", "12")
			eventually(t, "every watch saw three events", count(3))
			ws.endStreams()
			eventually(t, "every watch resumed", func() bool {
				ws.mu.Lock()
				defer ws.mu.Unlock()
				return len(ws.requests) == 2*watches
			})
			ws.publish("p3", "13")
			eventually(t, "every watch saw four events", count(4))
			mu.Lock()
			for i, names := range seen {
				if strings.Join(names, ",") != "p0,p1,p2,p3" {
					t.Errorf("watch %d saw %v", i, names)
				}
			}
			mu.Unlock()
			ws.mu.Lock()
			for _, q := range ws.requests[:watches] {
				if q.Get("sendInitialEvents") != "true" || q.Get("resourceVersion") != "" {
					t.Errorf("first request %v, want a watch-list", q)
				}
			}
			for _, q := range ws.requests[watches:] {
				if q.Get("resourceVersion") != "12" {
					t.Errorf("resumed request %v, want resourceVersion=12", q)
				}
			}
			ws.mu.Unlock()
			eventually(t, "the watches' goroutines end again", func() bool {
				return runtime.NumGoroutine()-before-watches <= 10
			})

			cancel()
			done := make(chan struct{})
			go func() { stopped.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("watches not stopped 10 s after their context ended")
			}
		})
	}
}

// TestWatchOpensAreBounded: however many watches start at once, no more
// than OpeningWatches of their requests wait for the server at a time, and
// every watch opens in the end.
func TestWatchOpensAreBounded(t *testing.T) {
	const (
		bound   = 4
		watches = 40
	)
	var inFlight, most atomic.Int32
	ws := newWatchServer(t, false)
	ws.beforeHeaders = func(*http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // the apiserver setting the watch up
		inFlight.Add(-1)
	}
	client := ws.client(t)
	w, err := newWatcher(testFleet(t, func(c *Config) { c.OpeningWatches = bound }), "application/vnd.kubernetes.protobuf", "test")
	if err != nil {
		t.Fatal(err)
	}
	ws.publish("p0", "10")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int32
	var stopped sync.WaitGroup
	for range watches {
		stopped.Add(1)
		w.start(ctx, client, watchSpec{name: "pods", path: "/api/v1/pods", handle: func(watch.EventType, k8sruntime.Object) {
			seen.Add(1)
		}}, stopped.Done)
	}
	eventually(t, "every watch saw the first event", func() bool { return seen.Load() == watches })
	if got := most.Load(); got != bound {
		t.Errorf("at most %d watch requests waited for the server at once, want %d", got, bound)
	}
	cancel()
	stopped.Wait()
}

// refusingServer answers every watch-list 403, as the Node authorizer does
// before it has seen the pod that binds an object to the node, lists with
// resource version 42, and holds the watches that resume from there open.
type refusingServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []url.Values
}

func newRefusingServer(t *testing.T) *refusingServer {
	rs := &refusingServer{}
	rs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		rs.mu.Lock()
		rs.requests = append(rs.requests, q)
		rs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status: metav1.StatusFailure, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
				Message: `configmaps "kube-root-ca.crt" is forbidden: no relationship found between node and this object`})
		case q.Get("watch") == "true":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			_ = json.NewEncoder(w).Encode(&v1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"},
				ListMeta: metav1.ListMeta{ResourceVersion: "42"}})
		}
	}))
	rs.EnableHTTP2 = true
	rs.StartTLS()
	t.Cleanup(rs.Close)
	return rs
}

func (rs *refusingServer) queries() []url.Values {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]url.Values(nil), rs.requests...)
}

// TestRefusedWatchListFallsBackToList: a watch-list the apiserver refuses is
// followed at once by a LIST of the same objects, as a reflector's is, which
// counts as the watch's initial state; the watch resumes from the list's
// resource version. A watch whose events the fleet handles is not listed:
// it backs off and tries the watch-list again.
func TestRefusedWatchListFallsBackToList(t *testing.T) {
	rs := newRefusingServer(t)
	client := h2RESTClient(t, rs.Server)
	// The fleet's clock never moves: a backoff would never end.
	f := testFleet(t, func(c *Config) { c.Clock = clocktesting.NewFakeClock(time.Now()) })
	w, err := newWatcher(f, "application/json", "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synced := make(chan struct{})
	selector := "metadata.name=kube-root-ca.crt"
	w.start(ctx, client, watchSpec{name: "configmaps", path: "/api/v1/namespaces/ns/configmaps",
		params: url.Values{"fieldSelector": {selector}}, synced: func() { close(synced) }}, func() {})
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		t.Fatalf("not synced; requests: %v", rs.queries())
	}
	eventually(t, "the watch resumed from the list", func() bool { return len(rs.queries()) == 3 })
	got := rs.queries()
	checks := []struct {
		what string
		ok   bool
	}{
		{"first a watch-list", got[0].Get("watch") == "true" && got[0].Get("sendInitialEvents") == "true"},
		{"then a list at resource version 0 with the selector", got[1].Get("watch") == "" && got[1].Get("resourceVersion") == "0" && got[1].Get("fieldSelector") == selector},
		{"then a watch from the list's version", got[2].Get("watch") == "true" && got[2].Get("resourceVersion") == "42" && got[2].Get("sendInitialEvents") == ""},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s; requests: %v", c.what, got)
		}
	}

	before := len(rs.queries())
	w.start(ctx, client, watchSpec{name: "pods", path: "/api/v1/pods", handle: func(watch.EventType, k8sruntime.Object) {}}, func() {})
	eventually(t, "the handled watch asked", func() bool { return len(rs.queries()) > before })
	time.Sleep(200 * time.Millisecond)
	if got := rs.queries()[before:]; len(got) != 1 || got[0].Get("watch") != "true" {
		t.Errorf("a refused watch with a handler: requests %v, want the one watch-list, then the backoff", got)
	}
}

// TestReflectorBackoff: a watch retries after a kubelet reflector's wait,
// 800 ms doubling to 30 s with up to 100 % jitter, over the whole of that
// range.
func TestReflectorBackoff(t *testing.T) {
	for _, c := range []struct {
		failures int
		base     time.Duration
	}{
		{0, 800 * time.Millisecond},
		{1, 800 * time.Millisecond},
		{2, 1600 * time.Millisecond},
		{3, 3200 * time.Millisecond},
		{6, 25600 * time.Millisecond},
		{7, 30 * time.Second},
		{70, 30 * time.Second},
	} {
		lo, hi := 2*c.base, time.Duration(0)
		for range 2000 {
			d := reflectorBackoff(c.failures)
			lo, hi = min(lo, d), max(hi, d)
		}
		// 2000 uniform draws leave no more than 1 % of the range uncovered
		// at either end, but by a chance of e^-20.
		if slack := c.base / 100; lo < c.base || hi > 2*c.base || lo > c.base+slack || hi < 2*c.base-slack {
			t.Errorf("failures %d: backoffs span [%v, %v], want [%v, %v]", c.failures, lo, hi, c.base, 2*c.base)
		}
	}
}
