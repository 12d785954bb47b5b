package fleet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestReferencesWatchedAtAdmission: the ConfigMaps and Secrets a pod uses,
// by volume or by env, are watched as soon as the pod is admitted — as the
// kubelet registers a pod with its managers when its first sync begins —
// not when the volume manager gets to the mount. The fleet's clock stands
// still here, so nothing scheduled for later (the mount) runs.
func TestReferencesWatchedAtAdmission(t *testing.T) {
	var mu sync.Mutex
	watched := map[string]bool{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			mu.Lock()
			watched[r.URL.Path+"?"+r.URL.Query().Get("fieldSelector")] = true
			mu.Unlock()
		}
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer ts.Close()
	f := testFleetOn(t, ts.URL)
	f.clock = clocktesting.NewFakeClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.watchCtx = ctx
	n := f.nodes[0]
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
		Spec: v1.PodSpec{NodeName: n.name,
			Containers: []v1.Container{{Name: "c", Image: "img", EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "env-cm"}}}}}},
			Volumes:    []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "vol-secret"}}}},
		},
	}
	n.observePod("ADDED", pod)
	want := []string{
		"/api/v1/namespaces/ns/configmaps?metadata.name=env-cm",
		"/api/v1/namespaces/ns/secrets?metadata.name=vol-secret",
	}
	eventually(t, "watches of "+strings.Join(want, ", "), func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range want {
			if !watched[w] {
				return false
			}
		}
		return true
	})
	n.mu.Lock()
	p := n.pods["u1"]
	if p == nil || p.phase != podAdmitted || !p.refsHeld || len(p.refsSynced) != 2 {
		t.Errorf("pod after admission: %+v", p)
	}
	n.forget(p)
	left := len(n.refWatches)
	n.mu.Unlock()
	if left != 0 {
		var names []string
		for r := range n.refWatches {
			names = append(names, r.name)
		}
		sort.Strings(names)
		t.Errorf("watches left after the pod went: %v", names)
	}
}
