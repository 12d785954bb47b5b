package fleet

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// statusServer is an apiserver stand-in holding one pod: GETs return it,
// status PATCHes are applied to it as strategic merges and counted.
type statusServer struct {
	mu      sync.Mutex
	pod     v1.Pod
	gets    int
	patches []string
}

func (s *statusServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespaces/ns/pods/p":
		s.gets++
	case r.Method == http.MethodPatch && r.URL.Path == "/api/v1/namespaces/ns/pods/p/status":
		body, _ := io.ReadAll(r.Body)
		s.patches = append(s.patches, string(body))
		old, _ := json.Marshal(s.pod)
		merged, err := strategicpatch.StrategicMergePatch(old, body, v1.Pod{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.pod = v1.Pod{}
		_ = json.Unmarshal(merged, &s.pod)
	default:
		http.NotFound(w, r)
		return
	}
	s.pod.Kind, s.pod.APIVersion = "Pod", "v1"
	_ = json.NewEncoder(w).Encode(&s.pod)
}

func (s *statusServer) ready() (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return podReady(&s.pod.Status), len(s.patches)
}

func podReady(s *v1.PodStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// TestStatusChangedByOthersIsWrittenBack: someone sets Ready=False on a
// running pod (the node lifecycle controller, a user); the node writes its
// own status back at its next status sync, as the kubelet's status manager
// does, keeping conditions it does not own. A node whose heartbeats are
// stopped writes nothing until it resumes, and then at once.
func TestStatusChangedByOthersIsWrittenBack(t *testing.T) {
	srv := &statusServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	f := testFleetOn(t, ts.URL)
	f.statusSyncPeriod = 300 * time.Millisecond
	n := f.nodes[0]
	p := &pod{uid: "u1", namespace: "ns", name: "p",
		podState:   podState{phase: podRunning, sandboxReady: true, startTime: time.Now(), sandboxAt: time.Now(), runningSince: time.Now()},
		containers: []containerInfo{{"c", "img", ""}}, ip: ipToUint(net.ParseIP("10.64.0.5"))}
	n.pods[p.uid] = p
	srv.pod = v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go f.sched.Run(ctx, 2)

	n.mu.Lock()
	n.setStatusLocked(p)
	n.mu.Unlock()
	waitFor(ctx, t, "the first write", func() bool { ok, _ := srv.ready(); return ok })
	tamper := func() {
		srv.mu.Lock()
		for i, c := range srv.pod.Status.Conditions {
			if c.Type == v1.PodReady {
				srv.pod.Status.Conditions[i] = v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "Tampered"}
			}
		}
		srv.pod.Status.Conditions = append(srv.pod.Status.Conditions, v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})
		api := srv.pod.DeepCopy()
		srv.mu.Unlock()
		n.observePod("MODIFIED", api) // as the node's pod watch delivers it
	}

	tamper()
	waitFor(ctx, t, "the status written back", func() bool { ok, _ := srv.ready(); return ok })
	srv.mu.Lock()
	gate := false
	for _, c := range srv.pod.Status.Conditions {
		gate = gate || c.Type == "example.com/gate"
	}
	srv.mu.Unlock()
	if !gate {
		t.Error("the write-back removed a condition the kubelet does not own")
	}

	f.setFailed([]*node{n}, true)
	_, before := srv.ready()
	tamper()
	time.Sleep(3 * f.statusSyncPeriod)
	if ok, patches := srv.ready(); ok || patches != before {
		t.Fatalf("a stopped node wrote its status (ready %v, %d patches, %d before)", ok, patches, before)
	}
	f.setFailed([]*node{n}, false)
	waitFor(ctx, t, "the status written back after resuming", func() bool { ok, _ := srv.ready(); return ok })
}

func TestNextTick(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at, phase, want time.Duration
	}{
		{0, 30 * time.Millisecond, 30 * time.Millisecond},
		{30 * time.Millisecond, 30 * time.Millisecond, 130 * time.Millisecond}, // a tick at t is not after t
		{95 * time.Millisecond, 30 * time.Millisecond, 130 * time.Millisecond},
		{250 * time.Millisecond, 0, 300 * time.Millisecond},
	} {
		if got := nextTick(base.Add(tc.at), 100*time.Millisecond, tc.phase); !got.Equal(base.Add(tc.want)) {
			t.Errorf("nextTick(%v, phase %v) = %v, want %v", tc.at, tc.phase, got.Sub(base), tc.want)
		}
	}
}

// TestVolumesWaited: the pod worker checks its pod's volumes at once and
// every 300 ms; volumes set up after its start are seen at the next check,
// never the first.
func TestVolumesWaited(t *testing.T) {
	n := testFleet(t, nil).nodes[0]
	for _, tc := range []struct{ mountTook, want time.Duration }{
		{0, 300 * time.Millisecond},
		{250 * time.Millisecond, 300 * time.Millisecond},
		{650 * time.Millisecond, 900 * time.Millisecond},
	} {
		began := time.Now().Add(-tc.mountTook)
		got := n.volumesWaited(began).Sub(began)
		if got < tc.want || got > tc.want+volumePollInterval/2 {
			t.Errorf("volumes mounted after %v: seen after %v, want %v", tc.mountTook, got, tc.want)
		}
	}
}

// TestAdoptedPodsAreLeftAsTheyAre: a fleet restarted finds its Running and
// finished pods in the API with the statuses it wrote; it holds them as
// written and sends nothing, however often its watch delivers them.
func TestAdoptedPodsAreLeftAsTheyAre(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.NotFound(w, r)
	}))
	defer ts.Close()
	f := testFleetOn(t, ts.URL)
	f.statusSyncPeriod = 50 * time.Millisecond
	n := f.nodes[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go f.sched.Run(ctx, 2)
	start := metav1.NewTime(time.Now().Add(-time.Minute))
	running := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "running", Namespace: "ns", UID: "u1"},
		Spec:       v1.PodSpec{NodeName: n.name, Containers: []v1.Container{{Name: "c", Image: "img"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.64.0.9", StartTime: &start,
			ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}},
	}
	for _, typ := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled} {
		running.Status.Conditions = append(running.Status.Conditions, v1.PodCondition{Type: typ, Status: v1.ConditionTrue, LastTransitionTime: start})
	}
	done := running.DeepCopy()
	done.Name, done.UID, done.Status.Phase = "done", "u2", v1.PodSucceeded
	for range 3 {
		n.observePod("MODIFIED", running)
		n.observePod("MODIFIED", done)
	}
	time.Sleep(4 * f.statusSyncPeriod)
	if c := calls.Load(); c != 0 {
		t.Fatalf("%d API calls for pods whose statuses the API has", c)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.pods["u1"]; p == nil || p.phase != podRunning || p.status.phase != podRunning || p.apiDiffers {
		t.Fatalf("the running pod is not held as written: %+v", p)
	}
}
