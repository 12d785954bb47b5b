package fleet

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestReferencesWatchedAtFirstSync: the ConfigMaps and Secrets a pod uses,
// by volume or by env, are watched as soon as the pod's first sync begins —
// as the kubelet registers a pod with its managers then — not when the
// volume manager gets to the mount; and that sync begins once the kubelet
// has admitted the pod, after the admissions of the pods sent before it.
// The fleet's clock moves only when the test steps it, so nothing scheduled
// for later (the mount) runs.
func TestReferencesWatchedAtFirstSync(t *testing.T) {
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
	clock := clocktesting.NewFakeClock(time.Now())
	f := newTestFleet(t, ts.URL, func(c *Config) { c.Clock = clock })
	client, err := f.clients.shared()
	if err != nil {
		t.Fatal(err)
	}
	f.nodes[0].useClients(sameClient(client))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.watchCtx = ctx
	go f.sched.Run(ctx, 2)
	n := f.nodes[0]
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
		Spec: v1.PodSpec{NodeName: n.name,
			Containers: []v1.Container{{Name: "c", Image: "img", EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "env-cm"}}}}}},
			Volumes:    []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "vol-secret"}}}},
		},
	}
	// A pod without references arrives first: the other's sync waits for
	// its admission too.
	n.observePod("ADDED", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "ns", UID: "u0"},
		Spec: v1.PodSpec{NodeName: n.name, Containers: []v1.Container{{Name: "c", Image: "img"}}}})
	n.observePod("ADDED", pod)
	// A pod gone from the API before its first sync never holds its
	// references.
	gone := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "ns", UID: "u2"},
		Spec: v1.PodSpec{NodeName: n.name, Containers: []v1.Container{{Name: "c", Image: "img"}},
			Volumes: []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "gone-secret"}}}}}}
	n.observePod("ADDED", gone)
	n.observePod("DELETED", gone)
	// Each admission takes admission to twice as long.
	for _, step := range []time.Duration{0, 2*admission - time.Microsecond} {
		clock.Step(step)
		time.Sleep(50 * time.Millisecond) // what was due has run
		n.mu.Lock()
		held := n.pods["u1"].refsHeld
		n.mu.Unlock()
		if held {
			t.Fatal("references held before the admissions of the pod and of the one before it were over")
		}
	}
	clock.Step(2*admission + time.Microsecond)
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
	clock.Step(2 * admission) // the gone pod's admission is over too
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	if watched["/api/v1/namespaces/ns/secrets?metadata.name=gone-secret"] {
		t.Error("a pod deleted before its first sync had its Secret watched")
	}
	mu.Unlock()
	n.mu.Lock()
	p := n.pods["u1"]
	if p == nil || p.phase != podAdmitted || !p.refsHeld || len(n.refWatches) != 2 {
		t.Errorf("pod after admission: %+v, %d watches", p, len(n.refWatches))
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

// TestMountWaitsForWatchesAsTheKubeletDoes: a volume's mount waits up to a
// second for the watch of what it reads. Late, it fails with the kubelet's
// FailedMount event and is tried again after the volume manager's 500 ms
// backoff; a watch in time mounts it at once, without an event.
func TestMountWaitsForWatchesAsTheKubeletDoes(t *testing.T) {
	for _, tc := range []struct {
		name             string
		syncAfter        time.Duration
		earliest, latest time.Duration
		events           int
	}{
		// The poll that sees the watch synced mounts the volume.
		{"watch in time", 300 * time.Millisecond, 300 * time.Millisecond, 350 * time.Millisecond, 0},
		// One second of waiting, the 500 ms backoff, the reconciler's next
		// loop (at most 100 ms later).
		{"watch late", 1200 * time.Millisecond, 1500 * time.Millisecond, 1650 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var messages []string
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
				if ev, ok := obj.(*v1.Event); ok && err == nil && r.Method == http.MethodPost {
					mu.Lock()
					messages = append(messages, ev.Type+" "+ev.Reason+" "+ev.Message)
					mu.Unlock()
				}
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(`{"kind":"Event","apiVersion":"v1"}`))
			}))
			defer ts.Close()
			fake := clocktesting.NewFakeClock(time.Now())
			f := newTestFleet(t, ts.URL, func(c *Config) { c.Clock = fake })
			client, err := f.clients.shared()
			if err != nil {
				t.Fatal(err)
			}
			n := f.nodes[0]
			n.useClients(sameClient(client))
			f.events = &eventRecorder{fleet: f}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go f.sched.Run(ctx, 2)
			ref := objectRef{"configmaps", "ns", "kube-root-ca.crt"}
			synced := make(chan struct{})
			n.mu.Lock()
			n.refWatches[ref] = refWatch{cancel: func() {}, synced: synced}
			n.mu.Unlock()
			p := &pod{uid: "u1", namespace: "ns", name: "p", volumes: []podVolume{{"kube-api-access-abcde", []objectRef{ref}}}}
			p.phase = podAdmitted
			began := fake.Now()
			mounted := make(chan time.Duration, 1)
			n.mount(ctx, p, 0, func(context.Context) { mounted <- fake.Since(began) })
			// Time moves in 10 ms steps, each once the scheduler is idle.
			var took time.Duration
		steps:
			for fake.Since(began) < 5*time.Second {
				if fake.Since(began) == tc.syncAfter {
					close(synced)
				}
				select {
				case took = <-mounted:
					break steps
				case <-time.After(5 * time.Millisecond):
				}
				fake.Step(10 * time.Millisecond)
			}
			if took < tc.earliest || took > tc.latest {
				t.Errorf("mounted after %v, want %v..%v", took, tc.earliest, tc.latest)
			}
			want := `Warning FailedMount MountVolume.SetUp failed for volume "kube-api-access-abcde" : failed to sync configmap cache: timed out waiting for the condition`
			eventually(t, "the events posted", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(messages) >= tc.events
			})
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			if len(messages) != tc.events {
				t.Fatalf("events %q, want %d", messages, tc.events)
			}
			for _, m := range messages {
				if m != want {
					t.Errorf("event %q, want %q", m, want)
				}
			}
		})
	}
}
