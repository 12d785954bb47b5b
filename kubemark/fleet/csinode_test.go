package fleet

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestSyncCSINode checks the calls a node makes for its CSINode, from what the
// API has: the kubelet's start-up sequence.
func TestSyncCSINode(t *testing.T) {
	const nodeUID = types.UID("uid-now")
	owned := func(uid types.UID, annotation string) *storagev1.CSINode {
		return &storagev1.CSINode{
			TypeMeta: metav1.TypeMeta{Kind: "CSINode", APIVersion: "storage.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{
				Name: "hollow-node-0", UID: "csinode-uid",
				Annotations:     map[string]string{v1.MigratedPluginsAnnotationKey: annotation},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "hollow-node-0", UID: uid}},
			},
		}
	}
	for _, tc := range []struct {
		name     string
		existing *storagev1.CSINode
		want     []string
	}{
		{"missing: created", nil, []string{"GET", "POST"}},
		{"ours: left alone", owned(nodeUID, migratedPlugins), []string{"GET"}},
		{"an earlier Node's: replaced", owned("uid-before", migratedPlugins), []string{"GET", "DELETE", "POST"}},
		{"ours, other plugins migrated: annotation fixed", owned(nodeUID, "kubernetes.io/gce-pd"), []string{"GET", "PUT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu    sync.Mutex
				calls []string
				wrote *storagev1.CSINode
				del   metav1.DeleteOptions
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, r.Method)
				w.Header().Set("Content-Type", "application/json")
				switch r.Method {
				case http.MethodGet:
					if tc.existing == nil {
						w.WriteHeader(http.StatusNotFound)
						_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
						return
					}
					_ = json.NewEncoder(w).Encode(tc.existing)
					return
				case http.MethodDelete:
					if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &del); err != nil {
						t.Errorf("delete options %q: %v", body, err)
					}
				case http.MethodPost, http.MethodPut:
					wrote = &storagev1.CSINode{}
					if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, wrote); err != nil {
						t.Errorf("%s body %q: %v", r.Method, body, err)
					}
				}
				_, _ = w.Write([]byte(`{"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"hollow-node-0"}}`))
			}))
			defer srv.Close()
			f := testFleetOn(t, srv.URL)
			n := f.nodes[0]
			if err := n.syncCSINode(context.Background(), nodeUID); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(calls, tc.want) {
				t.Fatalf("calls %q, want %q", calls, tc.want)
			}
			if slices.Contains(calls, http.MethodDelete) {
				if del.Preconditions == nil || del.Preconditions.UID == nil || *del.Preconditions.UID != "csinode-uid" {
					t.Errorf("delete without the old CSINode's UID as precondition: %+v", del)
				}
			}
			if wrote == nil {
				return
			}
			if got := wrote.Annotations[v1.MigratedPluginsAnnotationKey]; got != migratedPlugins {
				t.Errorf("written annotation %q, want %q", got, migratedPlugins)
			}
			if !ownedByNode(wrote, "hollow-node-0", nodeUID) || len(wrote.OwnerReferences) != 1 {
				t.Errorf("written owners %+v, want the Node hollow-node-0 with UID %s", wrote.OwnerReferences, nodeUID)
			}
		})
	}
}
