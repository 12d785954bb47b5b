package fleet

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// watchStream encodes events as the apiserver streams them: each object in
// the content type, wrapped in a WatchEvent, framed; with gzip, one member
// per event (the apiserver flushes after each).
func watchStream(t *testing.T, contentType string, gzipped bool, events ...watch.Event) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), contentType)
	if !ok {
		t.Fatalf("no serializer for %s", contentType)
	}
	objEncoder := scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion)
	var out bytes.Buffer
	for _, ev := range events {
		raw, err := runtime.Encode(objEncoder, ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		var frame bytes.Buffer
		fw := info.StreamSerializer.Framer.NewFrameWriter(&frame)
		if err := info.StreamSerializer.Serializer.Encode(&metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}}, fw); err != nil {
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
