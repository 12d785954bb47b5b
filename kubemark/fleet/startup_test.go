package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestCSIInitRetryDelay(t *testing.T) {
	ms := time.Millisecond
	want := []time.Duration{
		10 * ms, 50 * ms, 250 * ms, 30 * ms, // first round, then the wait before the second
		10 * ms, 50 * ms, 250 * ms, 240 * ms,
		10 * ms, 50 * ms, 250 * ms, 1920 * ms,
		10 * ms, 50 * ms, 250 * ms, 15360 * ms,
		10 * ms, 50 * ms, 250 * ms, 30 * time.Second, // the kubelet would wait 123 s, then give up
		10 * ms, 50 * ms, 250 * ms, 30 * time.Second,
	}
	for attempt, w := range want {
		if got := csiInitRetryDelay(attempt); got != w {
			t.Errorf("csiInitRetryDelay(%d) = %s, want %s", attempt, got, w)
		}
	}
}

// fakeAPI is an apiserver with one node's Node, Lease and CSINode, enough for
// a kubelet-profile node's start-up. It records every call but watches.
type fakeAPI struct {
	mu      sync.Mutex
	calls   []apiCall
	node    *v1.Node
	lease   *coordinationv1.Lease
	csiNode *storagev1.CSINode
	events  map[string]*v1.Event
}

type apiCall struct {
	call string // "VERB path?query"
	body []byte
}

func (a *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("watch") != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	call := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		call += "?" + r.URL.RawQuery
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, apiCall{call, body})
	w.Header().Set("Content-Type", "application/json")
	reply := func(code int, obj any) {
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(obj)
	}
	status := func(code int, reason metav1.StatusReason) {
		reply(code, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Reason: reason, Code: int32(code)})
	}
	decode := func(into runtime.Object) bool {
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, into); err != nil {
			status(http.StatusBadRequest, metav1.StatusReasonBadRequest)
			return false
		}
		return true
	}
	path := r.URL.Path
	switch {
	case path == "/api/v1/nodes/hollow-node-0" && r.Method == http.MethodGet,
		path == "/api/v1/nodes/hollow-node-0/status" && r.Method == http.MethodPatch:
		if a.node == nil {
			status(http.StatusNotFound, metav1.StatusReasonNotFound)
			return
		}
		if r.Method == http.MethodPatch {
			var patch struct {
				Status struct{ Conditions []v1.NodeCondition } `json:"status"`
			}
			_ = json.Unmarshal(body, &patch)
			for _, c := range patch.Status.Conditions {
				for i := range a.node.Status.Conditions {
					if a.node.Status.Conditions[i].Type == c.Type {
						a.node.Status.Conditions[i] = c
					}
				}
			}
		}
		reply(http.StatusOK, a.node)
	case path == "/api/v1/nodes" && r.Method == http.MethodPost:
		if a.node != nil {
			status(http.StatusConflict, metav1.StatusReasonAlreadyExists)
			return
		}
		node := &v1.Node{}
		if decode(node) {
			node.UID = "node-uid"
			a.node = node
			reply(http.StatusCreated, node)
		}
	case path == leasesPath+"/hollow-node-0" && r.Method == http.MethodGet:
		if a.lease == nil {
			status(http.StatusNotFound, metav1.StatusReasonNotFound)
			return
		}
		reply(http.StatusOK, a.lease)
	case path == leasesPath && r.Method == http.MethodPost,
		path == leasesPath+"/hollow-node-0" && r.Method == http.MethodPut:
		if r.Method == http.MethodPut && a.lease == nil {
			status(http.StatusNotFound, metav1.StatusReasonNotFound)
			return
		}
		lease := &coordinationv1.Lease{}
		if decode(lease) {
			a.lease = lease
			reply(http.StatusOK, lease)
		}
	case path == csiNodesPath+"/hollow-node-0" && r.Method == http.MethodGet:
		if a.csiNode == nil {
			status(http.StatusNotFound, metav1.StatusReasonNotFound)
			return
		}
		reply(http.StatusOK, a.csiNode)
	case path == csiNodesPath && r.Method == http.MethodPost:
		csiNode := &storagev1.CSINode{}
		if decode(csiNode) {
			a.csiNode = csiNode
			reply(http.StatusCreated, csiNode)
		}
	case strings.HasPrefix(path, "/api/v1/namespaces/default/events"):
		if r.Method == http.MethodPost {
			ev := &v1.Event{}
			if decode(ev) {
				a.events[ev.Name] = ev
				reply(http.StatusCreated, ev)
			}
			return
		}
		ev := a.events[strings.TrimPrefix(path, "/api/v1/namespaces/default/events/")]
		if r.Method != http.MethodPatch || ev == nil {
			status(http.StatusNotFound, metav1.StatusReasonNotFound)
			return
		}
		var repeat struct{ Count int32 }
		_ = json.Unmarshal(body, &repeat)
		ev.Count = repeat.Count
		reply(http.StatusOK, ev)
	default:
		status(http.StatusNotFound, metav1.StatusReasonNotFound)
	}
}

// count returns how many recorded calls start with prefix, and the index of
// the first and the last of them (-1 when none).
func (a *fakeAPI) count(prefix string) (n, first, last int) {
	first, last = -1, -1
	for i, c := range a.calls {
		if strings.HasPrefix(c.call, prefix) {
			if first < 0 {
				first = i
			}
			n, last = n+1, i
		}
	}
	return n, first, last
}

// readyIn reports the Ready condition a node write carries, "" when none.
func readyIn(body []byte) string {
	var obj struct {
		Status struct{ Conditions []v1.NodeCondition } `json:"status"`
	}
	if json.Unmarshal(body, &obj) != nil {
		node := &v1.Node{}
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, node); err != nil {
			return ""
		}
		obj.Status.Conditions = node.Status.Conditions
	}
	for _, c := range obj.Status.Conditions {
		if c.Type == v1.NodeReady {
			return fmt.Sprintf("%s %s", c.Status, c.Message)
		}
	}
	return ""
}

// runStartup runs one kubelet-profile node's start-up against api until it
// is Ready with a Lease and its events are sent.
func runStartup(t *testing.T, api *fakeAPI) *Fleet {
	t.Helper()
	srv := httptest.NewServer(api)
	defer srv.Close()
	f := newTestFleet(t, srv.URL, func(c *Config) {
		c.Nodes = 1
		c.LeaseDuration = 4 * time.Second // renewed every second
	})
	client, err := f.clients.shared()
	if err != nil {
		t.Fatal(err)
	}
	n := f.nodes[0]
	n.useClients(sameClient(client))
	ctx, cancel := context.WithCancel(context.Background())
	f.watchCtx = ctx
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.sched.Run(ctx, 8)
	}()
	f.sched.Now(priorityBackground, n.startKubelet)
	deadline := time.Now().Add(15 * time.Second)
	for {
		api.mu.Lock()
		leased := api.lease != nil
		ready := api.node != nil && isReady(api.node)
		api.mu.Unlock()
		n.mu.Lock()
		started := n.heartbeating && n.registered
		n.mu.Unlock()
		if leased && ready && started && n.queuedEvents.Load() == 0 && f.sched.Pending()[priorityEvents] == 0 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("not Ready with a Lease after 15 s; calls: %v", api.calls)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // calls in flight land
	cancel()
	<-done
	f.watches.Wait()
	return f
}

// TestKubeletStartupFresh checks the calls of a kubelet-profile node that
// starts where nothing of it exists: those of a v1.37 kubelet, in its order.
func TestKubeletStartupFresh(t *testing.T) {
	api := &fakeAPI{events: map[string]*v1.Event{}}
	runStartup(t, api)
	api.mu.Lock()
	defer api.mu.Unlock()
	var calls []string
	for _, c := range api.calls {
		calls = append(calls, c.call)
	}
	t.Logf("calls: %q", calls)

	if got := calls[0]; got != "GET "+csiNodesPath+"/hollow-node-0?resourceVersion=0" {
		t.Errorf("first call %q, want the CSI plugin's read of its CSINode from the watch cache", got)
	}
	nodePosts, postNode, _ := api.count("POST /api/v1/nodes")
	if nodePosts != 1 {
		t.Fatalf("%d Node creations, want 1", nodePosts)
	}
	if got := readyIn(api.calls[postNode].body); got != "False CSINode is not yet initialized" {
		t.Errorf("Node registered with Ready %q, want False until its CSINode exists", got)
	}
	// Before the Node exists, the lease controller (once) and the CSI plugin
	// (at 0, 10 and 60 ms) read it in vain.
	if n, _, _ := (&fakeAPI{calls: api.calls[:postNode]}).count("GET /api/v1/nodes/hollow-node-0"); n < 3 {
		t.Errorf("%d reads of the Node before its registration, want at least 3", n)
	}
	csiPosts, postCSI, _ := api.count("POST " + csiNodesPath)
	if csiPosts != 1 || postCSI < postNode {
		t.Errorf("CSINode created %d times (at %d), want once after the Node (at %d)", csiPosts, postCSI, postNode)
	}
	var readyPatch, emptyPatch int
	for i, c := range api.calls {
		if c.call != "PATCH /api/v1/nodes/hollow-node-0/status" {
			continue
		}
		switch {
		case string(c.body) == "{}":
			emptyPatch++
		case strings.HasPrefix(readyIn(c.body), "True"):
			readyPatch++
			if i < postCSI {
				t.Errorf("Ready patched (at %d) before the CSINode was created (at %d)", i, postCSI)
			}
		default:
			t.Errorf("unexpected status patch %s", c.body)
		}
	}
	if readyPatch != 1 || emptyPatch != 1 {
		t.Errorf("status patches: %d to Ready, %d empty; want 1 and 1", readyPatch, emptyPatch)
	}
	if api.lease == nil || len(api.lease.OwnerReferences) != 1 || api.lease.OwnerReferences[0].UID != "node-uid" {
		t.Errorf("Lease %+v, want one owned by the Node's UID", api.lease)
	}
	leaseGets, _, _ := api.count("GET " + leasesPath + "/hollow-node-0")
	leasePosts, postLease, _ := api.count("POST " + leasesPath)
	if leaseGets != 2 || leasePosts != 1 || postLease < postNode {
		t.Errorf("Lease read %d times and created %d times (at %d); want read twice — before and one renew interval after the registration (at %d) — and created once", leaseGets, leasePosts, postLease, postNode)
	}

	reasons := map[string]int32{}
	for _, ev := range api.events {
		reasons[ev.Reason] = ev.Count
		wantUID := types.UID("")
		if ev.Reason == "NodeReady" {
			wantUID = "node-uid"
		}
		if ev.InvolvedObject.Kind != "Node" || ev.InvolvedObject.UID != wantUID {
			t.Errorf("event %s about %+v, want the Node with UID %q", ev.Reason, ev.InvolvedObject, wantUID)
		}
	}
	want := map[string]int32{"Starting": 1, "NodeHasSufficientMemory": 2, "NodeHasNoDiskPressure": 2, "NodeHasSufficientPID": 2, "NodeAllocatableEnforced": 1, "NodeReady": 1}
	if fmt.Sprint(reasons) != fmt.Sprint(want) {
		t.Errorf("events (reason: count) %v, want %v", reasons, want)
	}
}

// TestKubeletStartupAdopts checks a node started where an earlier run left its
// Node (Ready), Lease and CSINode: it takes them over without a write that
// would make the node NotReady, and renews the Lease at once.
func TestKubeletStartupAdopts(t *testing.T) {
	api := &fakeAPI{
		events: map[string]*v1.Event{},
		node: &v1.Node{
			TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "hollow-node-0", UID: "node-uid"},
			Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		},
		lease: &coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "hollow-node-0", Namespace: leaseNamespace, OwnerReferences: ownerRefs("hollow-node-0", "node-uid")},
		},
		csiNode: &storagev1.CSINode{
			TypeMeta: metav1.TypeMeta{Kind: "CSINode", APIVersion: "storage.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{
				Name: "hollow-node-0", OwnerReferences: ownerRefs("hollow-node-0", "node-uid"),
				Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: migratedPlugins},
			},
		},
	}
	runStartup(t, api)
	api.mu.Lock()
	defer api.mu.Unlock()
	for _, c := range api.calls {
		if strings.HasPrefix(c.call, "POST /api/v1/nodes") || strings.HasPrefix(c.call, "PATCH /api/v1/nodes") {
			if ready := readyIn(c.body); strings.HasPrefix(ready, "False") {
				t.Errorf("%s wrote Ready %q to an adopted Ready node", c.call, ready)
			}
			if string(c.body) == "{}" {
				t.Errorf("%s: an empty status patch, which only follows a new registration", c.call)
			}
		}
	}
	if n, _, _ := api.count("POST " + csiNodesPath); n != 0 {
		t.Errorf("%d CSINode creations, want 0: the node's CSINode is there", n)
	}
	if n, _, _ := api.count("POST " + leasesPath); n != 0 {
		t.Errorf("%d Lease creations, want 0: the node's Lease is there", n)
	}
	if n, _, _ := api.count("PUT " + leasesPath + "/hollow-node-0"); n == 0 {
		t.Errorf("the Lease found was not renewed at once")
	}
	if n, _, _ := api.count("POST /api/v1/nodes"); n != 1 {
		t.Errorf("%d registrations, want 1 (answered AlreadyExists)", n)
	}
}

// TestDeletedNodeCalls checks what a kubelet-profile node sends once its Node
// and Lease are gone, as a v1.37 kubelet: per status update round four reads
// of the Node; for the Lease a failed renewal, then a read of the Lease and
// of the Node for the owner — and no registration, no Lease made.
func TestDeletedNodeCalls(t *testing.T) {
	api := &fakeAPI{events: map[string]*v1.Event{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	f := newTestFleet(t, srv.URL, func(c *Config) { c.Nodes = 1 })
	client, err := f.clients.shared()
	if err != nil {
		t.Fatal(err)
	}
	n := f.nodes[0]
	n.useClients(sameClient(client))
	n.started, n.deleted, n.heartbeating = true, true, true
	n.lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: leaseNamespace}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.sched.Run(ctx, 4)
	}()
	f.sched.Now(priorityHeartbeat, n.renewLease)
	f.sched.Now(priorityBackground, n.readDeletedNode)
	time.Sleep(500 * time.Millisecond) // one round of each; the next are 10 s away
	cancel()
	<-done

	api.mu.Lock()
	defer api.mu.Unlock()
	got := map[string]int{}
	for _, c := range api.calls {
		got[c.call]++
	}
	want := map[string]int{
		"PUT " + leasesPath + "/hollow-node-0": 1,
		"GET " + leasesPath + "/hollow-node-0": 1,
		"GET /api/v1/nodes/hollow-node-0":      1 + nodeStatusUpdateRetry - 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if n.lease != nil || n.heartbeating {
		t.Errorf("after its Lease was found gone: lease %v, heartbeating %v; want none until it is made again", n.lease, n.heartbeating)
	}
}

// TestTakeOverNode checks what a node does when its Node, deleted while the
// fleet runs, is made again by someone else: it patches in its whole status
// and, in the light profile, heartbeats again with a Lease owned by the new
// Node.
func TestTakeOverNode(t *testing.T) {
	for _, profile := range []string{ProfileKubelet, ProfileLight} {
		t.Run(profile, func(t *testing.T) {
			api := &fakeAPI{events: map[string]*v1.Event{}}
			srv := httptest.NewServer(api)
			defer srv.Close()
			f := newTestFleet(t, srv.URL, func(c *Config) {
				c.Nodes = 1
				c.Profile = profile
				c.DeclaredFeatures = []string{"FeatureA"}
			})
			client, err := f.clients.shared()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f.watchCtx = ctx
			n := f.nodes[0]
			n.useClients(sameClient(client))
			n.started, n.registered, n.heartbeating, n.uid = true, true, true, "old-uid"
			n.lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: leaseNamespace}}

			n.observeNode(watch.Deleted, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, UID: "old-uid"}})
			if profile == ProfileLight {
				n.renewLease(ctx) // stops: a light node's heartbeats end with its Node
				if n.heartbeating || len(api.calls) != 0 {
					t.Fatalf("light node renewing without its Node: heartbeating %v, calls %v", n.heartbeating, api.calls)
				}
			}
			if !n.deleted || n.registered {
				t.Fatalf("after its Node was deleted: deleted %v, registered %v", n.deleted, n.registered)
			}

			made := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, UID: "new-uid"}}
			api.mu.Lock()
			api.node = made.DeepCopy()
			api.mu.Unlock()
			done := make(chan struct{})
			go func() {
				defer close(done)
				f.sched.Run(ctx, 2)
			}()
			n.observeNode(watch.Added, made)
			time.Sleep(300 * time.Millisecond) // the takeover's calls; renewals are 10 s away
			cancel()
			<-done

			api.mu.Lock()
			defer api.mu.Unlock()
			n.mu.Lock()
			defer n.mu.Unlock()
			if n.deleted || !n.registered || n.uid != "new-uid" {
				t.Errorf("after the Node was made again: deleted %v, registered %v, uid %s", n.deleted, n.registered, n.uid)
			}
			patches, _, last := api.count("PATCH /api/v1/nodes/hollow-node-0/status")
			if patches != 1 {
				t.Fatalf("status patches %d, want 1; calls %v", patches, api.calls)
			}
			var patch struct{ Status v1.NodeStatus }
			if err := json.Unmarshal(api.calls[last].body, &patch); err != nil {
				t.Fatal(err)
			}
			if s := patch.Status; len(s.Conditions) != 4 || len(s.Addresses) != 2 || s.NodeInfo.KubeletVersion == "" ||
				len(s.Capacity) == 0 || len(s.Allocatable) == 0 || fmt.Sprint(s.DeclaredFeatures) != "[FeatureA]" {
				t.Errorf("status patch is not the whole status: %s", api.calls[last].body)
			}
			leaseCalls, _, _ := api.count("GET " + leasesPath)
			switch profile {
			case ProfileLight:
				if api.lease == nil || len(api.lease.OwnerReferences) != 1 || api.lease.OwnerReferences[0].UID != "new-uid" {
					t.Errorf("light node's Lease %+v, want one owned by the new Node", api.lease)
				}
				if !n.heartbeating || n.lease == nil {
					t.Errorf("light node not heartbeating again: heartbeating %v, lease %v", n.heartbeating, n.lease)
				}
			case ProfileKubelet:
				// Its lease start, not started in this test, makes the Lease.
				if leaseCalls != 0 || api.lease != nil {
					t.Errorf("kubelet-profile takeover touched the Lease: %v", api.calls)
				}
			}
		})
	}
}
