package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"k8s.io/client-go/rest"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/version"
	"k8s.io/utils/ptr"
)

// testFleet builds a fleet without starting it (nothing talks to a server).
func testFleet(t *testing.T, modify func(*Config)) *Fleet {
	t.Helper()
	return newTestFleet(t, "https://127.0.0.1:1", modify)
}

// testFleetOn builds a fleet, not started, whose first node's client talks
// to server.
func testFleetOn(t *testing.T, server string) *Fleet {
	t.Helper()
	f := newTestFleet(t, server, nil)
	client, err := f.clients.shared()
	if err != nil {
		t.Fatal(err)
	}
	f.nodes[0].useClients(sameClient(client))
	return f
}

func newTestFleet(t *testing.T, server string, modify func(*Config)) *Fleet {
	t.Helper()
	cfg := DefaultConfig()
	cfg.RESTConfig = &rest.Config{Host: server, BearerToken: "t"}
	cfg.Nodes = 3
	cfg.CPU = resource.MustParse("2")
	cfg.Memory = resource.MustParse("1124Mi") // 1Gi allocatable after the 100Mi eviction threshold
	cfg.MaxPods = 3
	if modify != nil {
		modify(&cfg)
	}
	f, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func container(cpu, mem string) v1.Container {
	return v1.Container{Name: "c", Image: "img", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem),
	}}}
}

func TestPodRequests(t *testing.T) {
	tests := []struct {
		name string
		spec v1.PodSpec
		want usage
	}{
		{"one container", v1.PodSpec{Containers: []v1.Container{container("100m", "10Mi")}}, usage{100, 10 << 20, 1}},
		{"sum of containers", v1.PodSpec{Containers: []v1.Container{container("100m", "10Mi"), container("200m", "20Mi")}}, usage{300, 30 << 20, 1}},
		{"init larger than sum", v1.PodSpec{
			InitContainers: []v1.Container{container("1", "1Mi")},
			Containers:     []v1.Container{container("100m", "10Mi")},
		}, usage{1000, 10 << 20, 1}},
		{"overhead added", v1.PodSpec{
			Containers: []v1.Container{container("100m", "10Mi")},
			Overhead:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m")},
		}, usage{150, 10 << 20, 1}},
		{"no requests", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}, usage{0, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podRequests(&v1.Pod{Spec: tt.spec}); got != tt.want {
				t.Errorf("podRequests = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAdmitLikeTheKubelet(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[0]
	tests := []struct {
		name   string
		used   usage
		req    usage
		reason string
	}{
		{"fits", usage{1000, 512 << 20, 1}, usage{1000, 512 << 20, 1}, ""},
		{"cpu", usage{1500, 0, 1}, usage{600, 0, 1}, "OutOfcpu"},
		{"memory", usage{0, 1000 << 20, 1}, usage{0, 100 << 20, 1}, "OutOfmemory"},
		{"pods", usage{0, 0, 3}, usage{0, 0, 1}, "OutOfpods"},
		{"zero request always fits resources", usage{2000, 1 << 30, 1}, usage{0, 0, 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n.used = tt.used
			reason, msg := n.admit(tt.req)
			if reason != tt.reason {
				t.Errorf("reason = %q (%s), want %q", reason, msg, tt.reason)
			}
		})
	}
}

func TestPodIPsAreUniqueAndInsideThePodCIDR(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[1]
	_, cidr, _ := net.ParseCIDR("10.64.3.0/24")
	n.podCIDR = cidr
	seen := map[uint32]bool{}
	for range 253 {
		ip := n.allocateIP()
		if ip == 0 {
			t.Fatal("ran out of addresses before the /24 was full")
		}
		if seen[ip] || !cidr.Contains(uintToIP(ip)) {
			t.Fatalf("address %s repeated or outside %s", uintToIP(ip), cidr)
		}
		seen[ip] = true
	}
	if ip := n.allocateIP(); ip != 0 {
		t.Errorf("allocated %s from a full /24", uintToIP(ip))
	}

	// Without a podCIDR, each node gets its own /24 of the fallback range.
	a, b := f.nodes[0], f.nodes[2]
	ipA, ipB := uintToIP(a.allocateIP()), uintToIP(b.allocateIP())
	if ipA.Mask(net.CIDRMask(24, 32)).Equal(ipB.Mask(net.CIDRMask(24, 32))) {
		t.Errorf("nodes 0 and 2 share a fallback /24: %s, %s", ipA, ipB)
	}
}

// TestRunningPodStatus: a Running pod's status as the kubelet writes it
// when nobody else wrote conditions: every condition it owns True, in its
// order, without reasons (null, so a Pending reason does not survive the
// merge), the container running with its resources, the init container
// completed.
func TestRunningPodStatus(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[0]
	p := &pod{
		uid: "u1", namespace: "ns", name: "p",
		podState:       podState{phase: podRunning, sandboxReady: true, startTime: time.Now().Add(-time.Second), runningSince: time.Now()},
		containers:     []containerInfo{{"app", "img:1", ""}},
		initContainers: []containerInfo{{"init", "img:0", ""}},
		ip:             ipToUint(net.ParseIP("10.64.0.5")),
	}
	patch, err := fullStatusPatch(n.generateStatus(p, p.podState, p.keptSpec(), time.Time{}), p.uid)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Status   v1.PodStatus      `json:"status"`
	}
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	s := got.Status
	if got.Metadata.UID != "u1" {
		t.Errorf("patch lacks the UID precondition: %s", patch)
	}
	if s.Phase != v1.PodRunning || s.PodIP != "10.64.0.5" || s.HostIP != n.ip.String() || s.StartTime == nil {
		t.Errorf("phase %s podIP %s hostIP %s startTime %v", s.Phase, s.PodIP, s.HostIP, s.StartTime)
	}
	var order []v1.PodConditionType
	for _, c := range s.Conditions {
		order = append(order, c.Type)
		if c.Status != v1.ConditionTrue || c.Reason != "" {
			t.Errorf("condition %s = %s %q", c.Type, c.Status, c.Reason)
		}
	}
	wantOrder := []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled}
	if fmt.Sprint(order) != fmt.Sprint(wantOrder) {
		t.Errorf("conditions %v, want the kubelet's order %v", order, wantOrder)
	}
	if !strings.Contains(string(patch), `"reason":null`) {
		t.Errorf("the patch does not clear earlier reasons: %s", patch)
	}
	cs := s.ContainerStatuses[0]
	if cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started || cs.ContainerID == "" || cs.ImageID != "img:1" {
		t.Errorf("container status %+v", cs)
	}
	ics := s.InitContainerStatuses[0]
	if ics.State.Terminated == nil || ics.State.Terminated.ExitCode != 0 || ics.State.Terminated.Reason != "Completed" {
		t.Errorf("init container status %+v", ics)
	}
}

func TestNodeObject(t *testing.T) {
	f := testFleet(t, func(c *Config) {
		c.StartIndex = 10
		c.NodeLabels = map[string]string{"pool": "a"}
		c.RegisterWithTaints = []v1.Taint{{Key: "k", Value: "v", Effect: v1.TaintEffectNoSchedule}}
		c.DeclaredFeatures = []string{"FeatureA", "FeatureB"}
	})
	seenIPs := map[string]bool{}
	for i, n := range f.nodes {
		obj := n.nodeObject()
		if obj.Name != "hollow-node-"+string(rune('0'+1))+string(rune('0'+i)) {
			t.Errorf("name %s", obj.Name)
		}
		l := obj.Labels
		if l["kubernetes.io/hostname"] != obj.Name || l["pool"] != "a" || l["topology.kubernetes.io/zone"] == "" || l[FleetLabel] != "hollow-node" {
			t.Errorf("labels %v", l)
		}
		if obj.Spec.ProviderID != "kubemark://"+obj.Name || len(obj.Spec.Taints) != 1 {
			t.Errorf("spec %+v", obj.Spec)
		}
		if obj.Status.NodeInfo.KubeletVersion != version.Get().String() || obj.Status.Allocatable.Pods().Value() != 3 {
			t.Errorf("status %+v", obj.Status.NodeInfo)
		}
		if got := obj.Status.DeclaredFeatures; len(got) != 2 || got[0] != "FeatureA" || got[1] != "FeatureB" {
			t.Errorf("declared features %q, want the configured FeatureA, FeatureB", got)
		}
		// What a kubelet annotates its Node with at registration; the TTL
		// controller adds its own annotation later.
		want := map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}
		if !maps.Equal(obj.Annotations, want) {
			t.Errorf("annotations %v, want %v", obj.Annotations, want)
		}
		ip := obj.Status.Addresses[0].Address
		if seenIPs[ip] {
			t.Errorf("InternalIP %s repeated", ip)
		}
		seenIPs[ip] = true
	}
	if z0, z1 := f.nodes[0].zone, f.nodes[1].zone; z0 == z1 {
		t.Errorf("zones not spread: %s %s", z0, z1)
	}
}

func TestPickNodesSpreadsEvenly(t *testing.T) {
	f := testFleet(t, func(c *Config) { c.Nodes = 200 })
	picked := f.pickNodes(0.1)
	if len(picked) != 20 {
		t.Fatalf("picked %d of 200 for 10%%", len(picked))
	}
	seen := map[string]bool{}
	for _, n := range picked {
		if seen[n.name] {
			t.Fatalf("%s picked twice", n.name)
		}
		seen[n.name] = true
	}
	if len(f.pickNodes(0)) != 0 || len(f.pickNodes(1)) != 200 {
		t.Error("fractions 0 and 1 pick none and all")
	}
}

func TestPodReferences(t *testing.T) {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns"},
		Spec: v1.PodSpec{
			Volumes: []v1.Volume{
				{Name: "cm", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "config"}}}},
				{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds"}}},
				{Name: "kube-api-access", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrTo(int64(3607))}},
					{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
				}}}},
			},
			Containers: []v1.Container{{
				Name:    "c",
				EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "config"}}}},
				Env: []v1.EnvVar{{Name: "PW", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
					LocalObjectReference: v1.LocalObjectReference{Name: "other"}, Key: "pw",
				}}}},
			}},
		},
	}
	refs, volumes, tokens := podReferences(p)
	want := []objectRef{
		{"configmaps", "ns", "config"}, {"secrets", "ns", "creds"},
		{"configmaps", "ns", "kube-root-ca.crt"}, {"secrets", "ns", "other"},
	}
	if len(refs) != len(want) {
		t.Fatalf("refs = %v, want %v (each object once)", refs, want)
	}
	for i := range want {
		if refs[i] != want[i] {
			t.Errorf("ref %d = %v, want %v", i, refs[i], want[i])
		}
	}
	if len(tokens) != 1 || tokens[0].expiration != 3607 {
		t.Errorf("tokens = %v", tokens)
	}
	// The env's references are watched but read by no volume.
	wantVolumes := []podVolume{
		{"cm", []objectRef{{"configmaps", "ns", "config"}}},
		{"sec", []objectRef{{"secrets", "ns", "creds"}}},
		{"kube-api-access", []objectRef{{"configmaps", "ns", "kube-root-ca.crt"}}},
	}
	if fmt.Sprint(volumes) != fmt.Sprint(wantVolumes) {
		t.Errorf("volumes = %v, want %v", volumes, wantVolumes)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestRefsOpenOneWatchPerObject(t *testing.T) {
	f := testFleet(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.watchCtx = ctx
	n := f.nodes[0]
	client, err := f.clients.shared() // to 127.0.0.1:1: the watches retry until cancelled
	if err != nil {
		t.Fatal(err)
	}
	n.useClients(sameClient(client))
	r := []objectRef{{"configmaps", "ns", "kube-root-ca.crt"}}
	n.holdRefs(r)
	n.holdRefs(r)
	if len(n.refWatches) != 1 || n.refs[r[0]] != 2 {
		t.Fatalf("two pods, one object: %d watches, count %d", len(n.refWatches), n.refs[r[0]])
	}
	n.releaseRefs(r)
	if len(n.refWatches) != 1 {
		t.Fatal("watch closed while a pod still uses the object")
	}
	n.releaseRefs(r)
	if len(n.refWatches) != 0 || len(n.refs) != 0 {
		t.Fatalf("watch left open after the last pod: %v", n.refs)
	}
	cancel()
	f.watches.Wait() // the watch goroutine ended with its context
}

// TestStatusWriteRetriesUntilTheAuthorizerKnowsThePod: the Node authorizer
// refuses a node's GET of a pod it has not linked to the node yet; the
// status write must come back with the node's next status sync rather than
// leave the pod Pending forever, and must not be sent twice once it landed.
func TestStatusWriteRetriesUntilTheAuthorizerKnowsThePod(t *testing.T) {
	var mu sync.Mutex
	gets, patches := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespaces/ns/pods/p":
			gets++
			if gets == 1 {
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
				return
			}
			_, _ = w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u1"}}`))
		case r.Method == http.MethodPatch && r.URL.Path == "/api/v1/namespaces/ns/pods/p/status":
			patches++
			_, _ = w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u1"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := testFleetOn(t, srv.URL)
	f.statusSyncPeriod = 200 * time.Millisecond
	n := f.nodes[0]
	p := &pod{uid: "u1", namespace: "ns", name: "p", podState: podState{phase: podAdmitted, startTime: time.Now()}, containers: []containerInfo{{"c", "img", ""}}}
	n.pods[p.uid] = p

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go f.sched.Run(ctx, 2)
	n.mu.Lock()
	n.setStatusLocked(p)
	n.mu.Unlock()
	waitFor(ctx, t, "the refused status write tried again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return patches > 0
	})
	time.Sleep(3 * f.statusSyncPeriod) // the API has it: nothing more is sent
	mu.Lock()
	defer mu.Unlock()
	if gets != 2 || patches != 1 {
		t.Fatalf("got %d GETs and %d PATCHes, want 2 and 1", gets, patches)
	}
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEventsBeyondTheKubeletQueueAreDropped: with the API slower than the
// events come, a node holds at most the kubelet broadcaster's 1000.
func TestEventsBeyondTheKubeletQueueAreDropped(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[0]
	ref := &v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"}
	for range maxQueuedEvents + 5 {
		f.events.record(n, ref, v1.EventTypeNormal, "Started", "Started container c")
	}
	if got := n.queuedEvents.Load(); got != maxQueuedEvents {
		t.Fatalf("%d events queued, want %d", got, maxQueuedEvents)
	}
	if got := f.sched.Pending()[priorityEvents]; got != maxQueuedEvents {
		t.Fatalf("%d event tasks scheduled, want %d", got, maxQueuedEvents)
	}
	if other := f.nodes[1]; other.queuedEvents.Load() != 0 {
		t.Fatal("another node's queue was charged")
	}
}

// TestStatusSequenceLikeTheKubelet: the statuses a started then deleted pod
// goes through, as a v1.37 kubelet writes them (seen on the kubelet morph):
// Pending without, then with its sandbox, Running (with its IP), and Succeeded
// with the sandbox gone and the conditions' reason PodCompleted; each
// reports the generation it observed, and a condition that is False says
// why in the kubelet's words.
func TestStatusSequenceLikeTheKubelet(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[0]
	p := &pod{uid: "u1", namespace: "ns", name: "p", podState: podState{generation: 2, startTime: time.Now(), runningSince: time.Now()},
		containers: []containerInfo{{"app", "img:1", ""}}, ip: ipToUint(net.ParseIP("10.64.0.5"))}
	for _, tc := range []struct {
		phase                    podPhase
		sandbox                  bool
		want                     v1.PodPhase
		wantSandbox, wantReady   v1.ConditionStatus
		wantIP, wantReadyReason  string
		wantSandboxMessage       string
		wantRunning, wantStopped bool
	}{
		{podAdmitted, false, v1.PodPending, v1.ConditionFalse, v1.ConditionFalse, "", "ContainersNotReady", "no pod sandbox exists", false, false},
		{podAdmitted, true, v1.PodPending, v1.ConditionTrue, v1.ConditionFalse, "", "ContainersNotReady", "", false, false},
		{podRunning, true, v1.PodRunning, v1.ConditionTrue, v1.ConditionTrue, "10.64.0.5", "", "", true, false},
		{podTerminating, true, v1.PodSucceeded, v1.ConditionFalse, v1.ConditionFalse, "10.64.0.5", "PodCompleted", "pod sandbox is not ready", false, true},
	} {
		t.Run(fmt.Sprintf("%s sandbox=%v", tc.want, tc.sandbox), func(t *testing.T) {
			p.phase, p.sandboxReady = tc.phase, tc.sandbox
			s := n.generateStatus(p, p.podState, p.keptSpec(), time.Time{})
			if s.Phase != tc.want || s.PodIP != tc.wantIP || s.ObservedGeneration != 2 {
				t.Errorf("phase %s podIP %q observedGeneration %d", s.Phase, s.PodIP, s.ObservedGeneration)
			}
			for _, c := range s.Conditions {
				want, reason, message := tc.wantReady, tc.wantReadyReason, ""
				if reason == "ContainersNotReady" {
					message = "containers with unready status: [app]"
				}
				switch c.Type {
				case v1.PodReadyToStartContainers:
					want, reason, message = tc.wantSandbox, map[v1.ConditionStatus]string{v1.ConditionFalse: "PodSandboxNotReady"}[tc.wantSandbox], tc.wantSandboxMessage
				case v1.PodInitialized:
					want, reason, message = v1.ConditionTrue, map[bool]string{true: "PodCompleted"}[tc.wantStopped], ""
				case v1.PodScheduled:
					want, reason, message = v1.ConditionTrue, "", ""
				}
				if c.Status != want || c.Reason != reason || c.Message != message || c.ObservedGeneration != 2 {
					t.Errorf("condition %s: %s %q %q (generation %d), want %s %q %q", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration, want, reason, message)
				}
			}
			cs := s.ContainerStatuses[0]
			if (cs.State.Running != nil) != tc.wantRunning || (cs.State.Terminated != nil) != tc.wantStopped {
				t.Errorf("container state %+v", cs.State)
			}
		})
	}
}

// How long a pod that may end runs: its annotation first, then the fleet's
// rule for Job pods, else until it is deleted.
func TestRunDuration(t *testing.T) {
	f := testFleet(t, func(c *Config) { c.JobPodRunDuration = 30 * time.Second })
	job := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u", Controller: ptr.To(true)}}
	tests := []struct {
		name        string
		owners      []metav1.OwnerReference
		annotations map[string]string
		want        time.Duration
	}{
		{"a Job's pod", job, nil, 30 * time.Second},
		{"a Job's pod with its own duration", job, map[string]string{AnnotationRunDuration: "5s"}, 5 * time.Second},
		{"a Job's pod with a bad annotation", job, map[string]string{AnnotationRunDuration: "soon"}, 30 * time.Second},
		{"a bare pod", nil, nil, 0},
		{"a bare pod with a duration", nil, map[string]string{AnnotationRunDuration: "2s"}, 2 * time.Second},
		{"not the controller", []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u"}}, nil, 0},
		{"another group's Job", []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Job", Name: "j", UID: "u", Controller: ptr.To(true)}}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tc.owners, Annotations: tc.annotations}}
			if got := f.runDuration(p); got != tc.want {
				t.Errorf("runDuration = %v, want %v", got, tc.want)
			}
		})
	}
	if got := testFleet(t, nil).runDuration(&v1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: job}}); got != 0 {
		t.Errorf("without the rule a Job's pod runs %v, want until deleted", got)
	}
}
