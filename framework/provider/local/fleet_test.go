package local

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kscale/kscale/framework/provider/local/localtest"
)

// The fleet tests share one 200-node fleet, started on first use next to the
// shared cluster's kubelet-morph nodes.
var (
	fleetOnce sync.Once
	fleet200  *FleetProcess
	fleetErr  error
)

const fleetNodes = 200

func sharedFleet(t *testing.T) (*ControlPlane, *FleetProcess) {
	t.Helper()
	c, _ := sharedCluster(t)
	fleetOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		fleet200, fleetErr = c.StartFleet(ctx, FleetOptions{Group: "fleet", Nodes: fleetNodes})
		if fleetErr != nil {
			return
		}
		fleetErr = WaitNodesReady(ctx, c.Client, HollowLabel+"=fleet", fleetNodes, testWriter{t})
		cleanups = append(cleanups, func() error { return fleet200.Stop() })
	})
	if fleetErr != nil {
		t.Fatalf("fleet of %d: %v", fleetNodes, fleetErr)
	}
	return c, fleet200
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func fleetMetric(t *testing.T, f *FleetProcess, name string, labels map[string]string) float64 {
	t.Helper()
	v, err := localtest.FleetMetric(f.Endpoint, name, labels)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitFleetMetric polls a fleet metric until it equals want.
func waitFleetMetric(ctx context.Context, t *testing.T, f *FleetProcess, name string, labels map[string]string, want float64) {
	t.Helper()
	var got float64
	var err error
	pollErr := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		got, err = localtest.FleetMetric(f.Endpoint, name, labels)
		return err == nil && got == want, nil
	})
	if pollErr != nil {
		t.Fatalf("%s%v = %v, want %v (last error: %v)", name, labels, got, want, err)
	}
}

func TestFleetNodesRegisterAndStayReady(t *testing.T) {
	c, f := sharedFleet(t)
	ctx := context.Background()
	// Watches open once the registrations queued before them are sent:
	// all six per node, soon.
	waitFleetMetric(ctx, t, f, "kscale_fleet_watches", nil, 6*fleetNodes)
	node, err := c.Client.CoreV1().Nodes().Get(ctx, "fleet-7", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Spec.ProviderID != "kubemark://fleet-7" || node.Status.NodeInfo.KubeletVersion != "v1.37.2" ||
		node.Labels["kubernetes.io/hostname"] != "fleet-7" || node.Labels["topology.kubernetes.io/zone"] == "" {
		t.Errorf("node registered unlike a kubelet: labels %v, providerID %q, version %q", node.Labels, node.Spec.ProviderID, node.Status.NodeInfo.KubeletVersion)
	}

	// A kubelet's lease controller first tries before the Node exists, fails
	// to read it for the owner reference, and creates the Lease one renew
	// interval (10 s) later.
	fleetLeases := func() int {
		leases, err := c.Client.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range leases.Items {
			if strings.HasPrefix(l.Name, "fleet-") {
				n++
			}
		}
		return n
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
		return fleetLeases() == fleetNodes, nil
	}); err != nil {
		t.Fatalf("%d fleet leases after a minute, want %d", fleetLeases(), fleetNodes)
	}

	// For 60 s: every node Ready, every lease renewed within 15 s.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: HollowLabel + "=fleet"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range nodes.Items {
			if !NodeReady(&nodes.Items[i]) {
				t.Fatalf("%s not Ready", nodes.Items[i].Name)
			}
		}
		leases, err := c.Client.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		renewed := 0
		for _, l := range leases.Items {
			if strings.HasPrefix(l.Name, "fleet-") {
				if age := time.Since(l.Spec.RenewTime.Time); age > 15*time.Second {
					t.Fatalf("lease %s last renewed %v ago", l.Name, age.Round(time.Second))
				}
				renewed++
			}
		}
		if renewed != fleetNodes {
			t.Fatalf("%d fleet leases, want %d", renewed, fleetNodes)
		}
		time.Sleep(5 * time.Second)
	}
	if errs := fleetMetric(t, f, "kscale_fleet_lease_renewals_total", map[string]string{"result": "error"}); errs != 0 {
		t.Errorf("%v failed lease renewals", errs)
	}
	if ok := fleetMetric(t, f, "kscale_fleet_lease_renewals_total", map[string]string{"result": "ok"}); ok < 4*fleetNodes {
		t.Errorf("only %v lease renewals in over 60 s for %d nodes", ok, fleetNodes)
	}

	// Each node made the CSINode a kubelet makes at start-up, owned by its Node.
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: HollowLabel + "=fleet"})
	if err != nil {
		t.Fatal(err)
	}
	csiNodes, err := c.Client.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]types.UID{}
	for _, cn := range csiNodes.Items {
		for _, ref := range cn.OwnerReferences {
			if ref.Kind == "Node" && ref.Name == cn.Name {
				owner[cn.Name] = ref.UID
			}
		}
	}
	for _, n := range nodes.Items {
		if owner[n.Name] != n.UID {
			t.Errorf("node %s (UID %s): CSINode owned by UID %q", n.Name, n.UID, owner[n.Name])
		}
	}
}

// A fleet node carries what the real kubelet of the same version puts in its
// Node (the shared cluster's hollow kubelets run the kubelet's code), and the
// scheduler treats it as such: a pod whose restart rule needs a feature the
// kubelet declares (RestartAllContainers) is placed on a fleet node and runs,
// and the node then lists the pod's image as the kubelet node lists it.
func TestFleetNodesLookLikeKubeletNodes(t *testing.T) {
	c, _ := sharedFleet(t)
	_, kubelets := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := testNamespace(t, c)
	const image = "kscale.test/look-alike:1" // new to every node
	restartAll := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "restart-all"},
		Spec: v1.PodSpec{
			NodeSelector:  map[string]string{HollowLabel: "fleet"},
			RestartPolicy: v1.RestartPolicyNever,
			Containers: []v1.Container{{
				Name: "c", Image: image,
				RestartPolicy: ptr.To(v1.ContainerRestartPolicyNever),
				RestartPolicyRules: []v1.ContainerRestartRule{{
					Action:    v1.ContainerRestartRuleActionRestartAllContainers,
					ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
				}},
			}},
		},
	}
	onKubelet := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "on-kubelet"},
		Spec: v1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": kubelets.Names[0]},
			Containers:   []v1.Container{{Name: "c", Image: image}},
		},
	}
	nodeOf := map[string]string{}
	for _, pod := range []*v1.Pod{restartAll, onKubelet} {
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, pod := range []*v1.Pod{restartAll, onKubelet} {
		var got *v1.Pod
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var err error
			got, err = c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			return err == nil && got.Status.Phase == v1.PodRunning, nil
		})
		if err != nil {
			t.Fatalf("pod %s: phase %q on node %q, conditions %+v", pod.Name, got.Status.Phase, got.Spec.NodeName, got.Status.Conditions)
		}
		nodeOf[pod.Name] = got.Spec.NodeName
	}

	// A kubelet lists a new image 10–40 s after pulling it.
	listed := func(node *v1.Node) *v1.ContainerImage {
		for i, img := range node.Status.Images {
			if slices.Contains(img.Names, image) {
				return &node.Status.Images[i]
			}
		}
		return nil
	}
	var kubeletNode, fleetNode *v1.Node
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if kubeletNode, err = c.Client.CoreV1().Nodes().Get(ctx, nodeOf["on-kubelet"], metav1.GetOptions{}); err != nil {
			return false, nil
		}
		if fleetNode, err = c.Client.CoreV1().Nodes().Get(ctx, nodeOf["restart-all"], metav1.GetOptions{}); err != nil {
			return false, nil
		}
		return listed(kubeletNode) != nil && listed(fleetNode) != nil, nil
	})
	if err != nil {
		t.Fatalf("%s not listed in both Nodes' images: kubelet node %+v, fleet node %+v", image, kubeletNode.Status.Images, fleetNode.Status.Images)
	}
	if want, got := *listed(kubeletNode), *listed(fleetNode); !reflect.DeepEqual(got, want) {
		t.Errorf("image listed as %+v by the fleet node, %+v by the kubelet node", got, want)
	}
	if want, got := kubeletNode.Status.DeclaredFeatures, fleetNode.Status.DeclaredFeatures; len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("declared features: fleet %q, kubelet %q", got, want)
	}
	for _, path := range [][]string{{"status"}, {"status", "nodeInfo"}} {
		if want, got := fieldNames(t, kubeletNode, path...), fieldNames(t, fleetNode, path...); !slices.Equal(got, want) {
			t.Errorf("%s: fleet node has fields %q, kubelet node %q", strings.Join(path, "."), got, want)
		}
	}
	for key := range kubeletNode.Labels {
		if _, ok := fleetNode.Labels[key]; !ok {
			t.Errorf("fleet node lacks the kubelet's label %s", key)
		}
	}

	// The kubelet's CSI volume plugin makes a CSINode for its node at
	// start-up; the fleet node has the same one.
	var csiNodes []*storagev1.CSINode
	for _, node := range []*v1.Node{kubeletNode, fleetNode} {
		cn, err := c.Client.StorageV1().CSINodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("CSINode of %s: %v", node.Name, err)
		}
		if len(cn.OwnerReferences) != 1 || cn.OwnerReferences[0].Kind != "Node" || cn.OwnerReferences[0].UID != node.UID {
			t.Errorf("CSINode of %s owned by %+v, want its Node (UID %s)", node.Name, cn.OwnerReferences, node.UID)
		}
		csiNodes = append(csiNodes, cn)
	}
	if want, got := csiNodes[0], csiNodes[1]; !maps.Equal(got.Annotations, want.Annotations) || !reflect.DeepEqual(got.Spec, want.Spec) {
		t.Errorf("fleet CSINode: annotations %v, spec %+v; kubelet's: %v, %+v", got.Annotations, got.Spec, want.Annotations, want.Spec)
	}

	// Both recorded the kubelet's start-up events about their Node, as often.
	if want, got := startupEvents(ctx, t, c, kubeletNode.Name), startupEvents(ctx, t, c, fleetNode.Name); len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("start-up events (reason: count) of the fleet node %v, of the kubelet node %v", got, want)
	}
}

// startupEvents returns the kubelet's events about the Node name, as reason:
// count. Left out: MissingClusterDNS, as the hollow kubelets run without
// cluster DNS, and NodeAllocatableEnforced, as their container manager is a
// stub that enforces nothing; a kubelet on a machine records it.
func startupEvents(ctx context.Context, t *testing.T, c *ControlPlane, name string) map[string]int32 {
	t.Helper()
	list, err := c.Client.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Node", "involvedObject.name": name}.String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int32{}
	for _, e := range list.Items {
		if e.Source.Component == "kubelet" && e.Reason != "MissingClusterDNS" && e.Reason != "NodeAllocatableEnforced" {
			counts[e.Reason] += e.Count
		}
	}
	return counts
}

// fieldNames returns the sorted field names of the object at path in obj's
// JSON form.
func fieldNames(t *testing.T, obj any, path ...string) []string {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := unstructured.NestedMap(u, path...)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(m))
}

// A v1.37 kubelet whose Node is deleted does not register it again until it
// restarts (kubernetes/kubernetes#71398): neither does a fleet node. Its
// Lease goes with the Node and is not made again, and the other nodes carry
// on. A Node of its name that someone else makes is taken over as the
// kubelet takes it over; the others register again when the fleet restarts.
func TestFleetNodeDeletedStaysDeleted(t *testing.T) {
	c, _ := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const nodes, gone, madeAgain = 3, "deleted-1", "deleted-2"
	f := startTestFleet(ctx, t, c, FleetOptions{Group: "deleted", Nodes: nodes})
	if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=deleted", nodes, nil); err != nil {
		t.Fatal(err)
	}
	leases := c.Client.CoordinationV1().Leases("kube-node-lease")
	waitLease := func(name, want string, done func(*coordinationv1.Lease, error) bool) {
		t.Helper()
		if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			return done(leases.Get(ctx, name, metav1.GetOptions{})), nil
		}); err != nil {
			t.Fatalf("Lease %s: not %s: %v", name, want, err)
		}
	}
	for _, name := range []string{gone, madeAgain} {
		// The Lease comes one renew interval after the Node.
		waitLease(name, "made", func(_ *coordinationv1.Lease, err error) bool { return err == nil })
		if err := c.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFleetMetric(ctx, t, f, "kscale_fleet_nodes_deleted", nil, 2)
	for _, name := range []string{gone, madeAgain} {
		waitLease(name, "collected with its deleted Node", func(_ *coordinationv1.Lease, err error) bool { return apierrors.IsNotFound(err) })
	}
	// Three lease renew intervals later: still no Node and no Lease; the
	// other node Ready.
	time.Sleep(30 * time.Second)
	for _, name := range []string{gone, madeAgain} {
		if _, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: %v, want it to stay deleted", name, err)
		}
		if _, err := leases.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Lease %s: %v, want none without its Node", name, err)
		}
	}
	list, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: HollowLabel + "=deleted"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "deleted-0" || !NodeReady(&list.Items[0]) {
		t.Errorf("%d nodes left, want deleted-0 alone and Ready", len(list.Items))
	}

	// A bare Node made by someone else: taken over, its status patched in,
	// a Lease owned by it.
	made, err := c.Client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: madeAgain, Labels: map[string]string{HollowLabel: "deleted"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=deleted", nodes-1, nil); err != nil {
		t.Fatalf("Node made again: %v", err)
	}
	waitLease(madeAgain, "owned by the Node made again", func(lease *coordinationv1.Lease, err error) bool {
		return err == nil && len(lease.OwnerReferences) == 1 && lease.OwnerReferences[0].UID == made.UID
	})
	waitFleetMetric(ctx, t, f, "kscale_fleet_nodes_deleted", nil, 1)

	if err := f.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := f.Restart(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=deleted", nodes, nil); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}

func TestFleetRunsADeploymentOfAThousandPods(t *testing.T) {
	c, _ := sharedFleet(t)
	ns := testNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const replicas = 1000
	deploy := localtest.PauseDeployment("load", map[string]string{HollowLabel: "fleet"}, replicas)
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods *v1.PodList
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		return localtest.PodPhases(pods)[v1.PodRunning] == replicas, nil
	})
	if err != nil {
		t.Fatalf("%v; %s", err, podSummary(pods))
	}
	ips := map[string]string{}
	for _, p := range pods.Items {
		if other, dup := ips[p.Status.PodIP]; dup || p.Status.PodIP == "" {
			t.Fatalf("pod %s has IP %q, also used by %s", p.Name, p.Status.PodIP, other)
		}
		ips[p.Status.PodIP] = p.Name
		if !strings.HasPrefix(p.Spec.NodeName, "fleet-") || p.Status.HostIP == "" || p.Status.StartTime == nil {
			t.Fatalf("pod %s on %q hostIP %q", p.Name, p.Spec.NodeName, p.Status.HostIP)
		}
		cs := p.Status.ContainerStatuses
		if len(cs) != 1 || cs[0].State.Running == nil || !cs[0].Ready || cs[0].Started == nil || !*cs[0].Started || cs[0].ContainerID == "" {
			t.Fatalf("pod %s container statuses %+v", p.Name, cs)
		}
		conds := map[v1.PodConditionType]v1.ConditionStatus{}
		for _, c := range p.Status.Conditions {
			conds[c.Type] = c.Status
		}
		for _, typ := range []v1.PodConditionType{v1.PodScheduled, v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
			if conds[typ] != v1.ConditionTrue {
				t.Fatalf("pod %s condition %s = %q", p.Name, typ, conds[typ])
			}
		}
	}

	// Scale to 0: the fleet's nodes see the deletions and remove every pod.
	// The deployment controller writes the Deployment's status meanwhile:
	// a scale read before one of its writes conflicts, and is read again.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := c.Client.AppsV1().Deployments(ns).GetScale(ctx, "load", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = 0
		_, err = c.Client.AppsV1().Deployments(ns).UpdateScale(ctx, "load", scale, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("scaling to 0: %v", err)
	}
	err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, err
	})
	if err != nil {
		t.Fatalf("pods left after scaling to 0: %v; %s", err, podSummary(pods))
	}
}

// TestFleetAdmissionAndCompletion runs a two-node fleet that admits two pods
// per node, and binds pods to it directly as a scheduler would.
func TestFleetAdmissionAndCompletion(t *testing.T) {
	c, _ := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	startTestFleet(ctx, t, c, FleetOptions{Group: "admission", Nodes: 2, ExtraArgs: []string{"--max-pods=2", "--cpu=2", "--memory=2Gi"}})
	ns := testNamespace(t, c)
	if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=admission", 2, nil); err != nil {
		t.Fatal(err)
	}
	bound := func(name, node string, cpu, mem string, mutate func(*v1.Pod)) {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "img", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)},
			}}}},
		}
		if mutate != nil {
			mutate(p)
		}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPhase := func(name string, phase v1.PodPhase, reason string) {
		t.Helper()
		var p *v1.Pod
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var err error
			p, err = c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == phase, nil
		})
		if err != nil {
			t.Fatalf("pod %s: phase %q reason %q, want %s %s", name, p.Status.Phase, p.Status.Reason, phase, reason)
		}
		if p.Status.Reason != reason {
			t.Errorf("pod %s: reason %q, want %q (message %q)", name, p.Status.Reason, reason, p.Status.Message)
		}
	}

	bound("too-much-cpu", "admission-0", "3", "1Mi", nil)
	waitPhase("too-much-cpu", v1.PodFailed, "OutOfcpu")
	bound("too-much-memory", "admission-0", "1m", "3Gi", nil)
	waitPhase("too-much-memory", v1.PodFailed, "OutOfmemory")

	bound("fits-1", "admission-1", "1m", "1Mi", nil)
	bound("fits-2", "admission-1", "1m", "1Mi", nil)
	waitPhase("fits-1", v1.PodRunning, "")
	waitPhase("fits-2", v1.PodRunning, "")
	bound("one-too-many", "admission-1", "1m", "1Mi", nil)
	waitPhase("one-too-many", v1.PodFailed, "OutOfpods")

	bound("batch", "admission-0", "1m", "1Mi", func(p *v1.Pod) {
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Annotations = map[string]string{"kscale.io/run-duration": "2s"}
	})
	waitPhase("batch", v1.PodSucceeded, "")
	p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "batch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	term := p.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 0 || term.FinishedAt.Sub(term.StartedAt.Time) < 2*time.Second {
		t.Errorf("finished container: %+v, want exit 0 after running 2s", term)
	}
}

func TestFleetNodeFailureAndRecovery(t *testing.T) {
	c, f := sharedFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	body, err := f.Call(ctx, "POST", "/fail?fraction=0.1")
	if err != nil {
		t.Fatal(err)
	}
	var failed struct{ Failed []string }
	if err := json.Unmarshal(body, &failed); err != nil {
		t.Fatal(err)
	}
	if len(failed.Failed) != fleetNodes/10 {
		t.Fatalf("failed %d nodes, want %d", len(failed.Failed), fleetNodes/10)
	}
	want := map[string]bool{}
	for _, n := range failed.Failed {
		want[n] = true
	}
	notReady := func() (map[string]bool, error) {
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: HollowLabel + "=fleet"})
		if err != nil {
			return nil, err
		}
		out := map[string]bool{}
		for i := range nodes.Items {
			if !NodeReady(&nodes.Items[i]) {
				out[nodes.Items[i].Name] = true
			}
		}
		return out, nil
	}
	var got map[string]bool
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		got, err = notReady()
		return err == nil && len(got) >= len(want), err
	})
	if err != nil {
		t.Fatalf("node lifecycle controller marked %d NotReady, want %d: %v", len(got), len(want), err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("NotReady nodes %v, want exactly the failed %v", keys(got), keys(want))
	}

	if _, err := f.Call(ctx, "POST", "/recover"); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		got, err = notReady()
		return err == nil && len(got) == 0, err
	})
	if err != nil {
		t.Fatalf("after recovery still NotReady: %v (%v)", keys(got), err)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestFleetRestartAdoptsNodesAndPods kills a fleet with running pods and
// starts it again: the same Node and Pod objects are taken over, nothing is
// created twice.
func TestFleetRestartAdoptsNodesAndPods(t *testing.T) {
	c, _ := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const nodes, replicas = 10, 40
	f := startTestFleet(ctx, t, c, FleetOptions{Group: "restart", Nodes: nodes})
	ns := testNamespace(t, c)
	if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=restart", nodes, nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.Client.AppsV1().Deployments(ns).Create(ctx, localtest.PauseDeployment("restart", map[string]string{HollowLabel: "restart"}, replicas), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	running := func() (*v1.PodList, error) {
		var pods *v1.PodList
		err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err == nil && localtest.PodPhases(pods)[v1.PodRunning] == replicas && len(pods.Items) == replicas, err
		})
		return pods, err
	}
	before, err := running()
	if err != nil {
		t.Fatalf("pods before the restart: %v; %s", err, podSummary(before))
	}
	nodeUIDs := func() map[string]string {
		list, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: HollowLabel + "=restart"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range list.Items {
			out[n.Name] = string(n.UID)
		}
		return out
	}
	uidsBefore := nodeUIDs()

	if err := f.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := f.Restart(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFleetMetric(ctx, t, f, "kscale_fleet_node_registrations_total", nil, nodes)
	if got := fleetMetric(t, f, "kscale_fleet_nodes_adopted_total", nil); got != nodes {
		t.Errorf("adopted %v nodes, want %d", got, nodes)
	}
	if got := nodeUIDs(); fmt.Sprint(got) != fmt.Sprint(uidsBefore) {
		t.Errorf("nodes were recreated: UIDs %v, before %v", got, uidsBefore)
	}
	waitFleetMetric(ctx, t, f, "kscale_fleet_pods_adopted_total", nil, replicas)
	after, err := running()
	if err != nil {
		t.Fatalf("pods after the restart: %v; %s", err, podSummary(after))
	}
	was := map[string]string{}
	for _, p := range before.Items {
		was[string(p.UID)] = p.Status.PodIP
	}
	for _, p := range after.Items {
		ip, ok := was[string(p.UID)]
		if !ok || ip != p.Status.PodIP {
			t.Errorf("pod %s (uid %s, IP %s) was not there before the restart with that IP", p.Name, p.UID, p.Status.PodIP)
		}
	}
}

// TestFleetLightProfile runs the light profile: shared credential and two
// shared watches for the whole fleet, no events — and pods still run.
func TestFleetLightProfile(t *testing.T) {
	c, _ := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const nodes, replicas = 50, 100
	f := startTestFleet(ctx, t, c, FleetOptions{Group: "light", Nodes: nodes, Profile: "light"})
	ns := testNamespace(t, c)
	if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=light", nodes, nil); err != nil {
		t.Fatal(err)
	}
	waitFleetMetric(ctx, t, f, "kscale_fleet_watches", nil, 2)
	checkBornWithStatus(ctx, t, c, HollowLabel+"=light")
	_, err := c.Client.AppsV1().Deployments(ns).Create(ctx, localtest.PauseDeployment("light", map[string]string{HollowLabel: "light"}, replicas), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pods *v1.PodList
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && localtest.PodPhases(pods)[v1.PodRunning] == replicas, err
	})
	if err != nil {
		t.Fatalf("light fleet pods: %v; %s", err, podSummary(pods))
	}
	events, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "source=kubelet"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 0 {
		t.Errorf("the light profile sent %d kubelet events, want none", len(events.Items))
	}
	csiNodes, err := c.Client.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cn := range csiNodes.Items {
		if strings.HasPrefix(cn.Name, "light-") {
			t.Errorf("the light profile made CSINode %s, want none", cn.Name)
		}
	}
}

// checkBornWithStatus checks that the light profile's Nodes got their whole
// status with the create, in one write, as a kubelet creates its Node (see
// nodeObject in kubemark/fleet for why the light profile does not do it in
// two), and that nothing of the status is missing.
func checkBornWithStatus(ctx context.Context, t *testing.T, c *ControlPlane, selector string) {
	t.Helper()
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		// Status written with the create is not in managedFields (the
		// main resource's writes reset status); a status write shows as
		// an entry for the status subresource.
		for _, m := range n.ManagedFields {
			if m.Manager == "kubelet" && m.Subresource == "status" { // the fleet's user agent, as a kubelet's
				t.Errorf("node %s: its status was written after the Node was created (managedFields %v)", n.Name, managers(n.ManagedFields))
			}
		}
		s := n.Status
		if s.DaemonEndpoints.KubeletEndpoint.Port != 10250 || s.NodeInfo.KubeletVersion != "v1.37.2" || s.Allocatable.Pods().IsZero() || len(s.Addresses) != 2 || len(s.Conditions) != 4 {
			t.Errorf("node %s: incomplete status: endpoints %+v, kubelet %q, allocatable pods %s, %d addresses, %d conditions",
				n.Name, s.DaemonEndpoints, s.NodeInfo.KubeletVersion, s.Allocatable.Pods(), len(s.Addresses), len(s.Conditions))
		}
	}
}

func managers(entries []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, m := range entries {
		out = append(out, m.Manager+"/"+string(m.Operation)+"/"+m.Subresource)
	}
	return out
}
