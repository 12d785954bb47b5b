package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestNodeImageList(t *testing.T) {
	many := make([]containerInfo, maxNodeImages+5)
	for i := range many {
		many[i] = containerInfo{"c", fmt.Sprintf("img-%d", i), ""}
	}
	for _, tc := range []struct {
		name   string
		listed []v1.ContainerImage // on the Node an earlier run left; nil: a new Node
		pods   [][]containerInfo
		want   []string
		sent   int
	}{
		{name: "one pod", pods: [][]containerInfo{{{"a", "x", ""}, {"b", "y", ""}}}, want: []string{"x", "y"}},
		{name: "repeated images listed once", pods: [][]containerInfo{{{"a", "x", ""}}, {{"a", "x", ""}, {"b", "y", ""}}, {{"c", "y", ""}}}, want: []string{"x", "y"}},
		{name: "at most the kubelet's 50", pods: [][]containerInfo{many}, want: func() (w []string) {
			for _, c := range many[:maxNodeImages] {
				w = append(w, c.image)
			}
			return w
		}()},
		{name: "adopted list kept, new images after it", listed: []v1.ContainerImage{{Names: []string{"old"}}, {Names: []string{"x"}}},
			pods: [][]containerInfo{{{"a", "x", ""}, {"b", "new", ""}}}, want: []string{"old", "x", "new"}, sent: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := testFleet(t, nil).nodes[0]
			n.mu.Lock()
			defer n.mu.Unlock()
			if tc.listed != nil {
				n.adoptImages(tc.listed)
			}
			for _, cs := range tc.pods {
				n.notePulled(&pod{containers: cs})
			}
			var got []string
			for _, img := range n.containerImages() {
				if len(img.Names) != 1 || img.SizeBytes != 0 {
					t.Errorf("image %+v: want one name and no size, as a hollow kubelet lists it", img)
				}
				got = append(got, img.Names...)
			}
			if !slices.Equal(got, tc.want) || n.imagesSent != tc.sent {
				t.Errorf("images %q (API has %d), want %q (%d)", got, n.imagesSent, tc.want, tc.sent)
			}
			if !n.imagesReportQueued {
				t.Error("no report of the new images scheduled")
			}
		})
	}
}

// TestStatusCarriesImagesOnlyWhenTheyChange: a node's status patch sends the
// image list when it grew since the API last had it, and not again.
func TestStatusCarriesImagesOnlyWhenTheyChange(t *testing.T) {
	var mu sync.Mutex
	var patches []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch || r.URL.Path != "/api/v1/nodes/hollow-node-0/status" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var patch struct {
			Status map[string]any `json:"status"`
		}
		if err := json.Unmarshal(body, &patch); err != nil {
			t.Errorf("patch %s: %v", body, err)
		}
		mu.Lock()
		patches = append(patches, patch.Status)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"hollow-node-0"}}`))
	}))
	defer srv.Close()
	f := testFleetOn(t, srv.URL)
	n := f.nodes[0]
	ctx := context.Background()

	send := func() {
		t.Helper()
		if err := n.patchStatus(ctx); err != nil {
			t.Fatal(err)
		}
	}
	send() // no images yet
	n.mu.Lock()
	n.notePulled(&pod{containers: []containerInfo{{"c", "img-a", ""}}})
	n.mu.Unlock()
	send() // img-a new
	send() // nothing new
	n.mu.Lock()
	n.notePulled(&pod{containers: []containerInfo{{"c", "img-a", ""}, {"d", "img-b", ""}}})
	n.mu.Unlock()
	send() // img-b new

	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, p := range patches {
		images, ok := p["images"]
		if _, beat := p["conditions"]; !beat {
			t.Errorf("status patch without conditions: %v", p)
		}
		if !ok {
			got = append(got, "-")
			continue
		}
		b, _ := json.Marshal(images)
		got = append(got, string(b))
	}
	want := []string{"-", `[{"names":["img-a"]}]`, "-", `[{"names":["img-a"]},{"names":["img-b"]}]`}
	if !slices.Equal(got, want) {
		t.Errorf("images in the four status patches: %q, want %q", got, want)
	}
}
