package local

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kscale/kscale/controlplane/freeport"
	"github.com/kscale/kscale/framework/provider/local/localtest"
)

// testNamespace creates a namespace for one test. When the test ends the
// namespace is deleted and waited for: the tests share one cluster, and a
// namespace still emptying — its pods being terminated by their nodes — would
// load the control plane under the next test's measurements.
func testNamespace(t *testing.T, c *ControlPlane) string {
	t.Helper()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kscale-it-", Labels: map[string]string{"kscale.io/test": t.Name()}}}
	created, err := c.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", created.Name, err)
			return
		}
		err := wait.PollUntilContextTimeout(ctx, time.Second, namespaceDeletionTimeout, true, func(ctx context.Context) (bool, error) {
			_, err := c.Client.CoreV1().Namespaces().Get(ctx, created.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			pods, _ := c.Client.CoreV1().Pods(created.Name).List(ctx, metav1.ListOptions{})
			t.Errorf("namespace %s not gone %s after its deletion; %s", created.Name, namespaceDeletionTimeout, podSummary(pods))
		}
	})
	return created.Name
}

// namespaceDeletionTimeout bounds the wait for a test namespace to go: the
// namespace controller's retries while the nodes delete the pods take tens
// of seconds.
const namespaceDeletionTimeout = 3 * time.Minute

// startTestFleet starts a fleet of its own for one test, stopped with its
// Nodes deleted (--delete-nodes-on-exit) when the test ends. Call it before
// testNamespace: cleanups run last-registered first, so the namespace is
// gone — its pods deleted by this fleet, as kubelets delete them — before the
// fleet stops. A fleet stopped first would leave its pods Terminating and
// its Nodes to go NotReady under a later test.
func startTestFleet(ctx context.Context, t *testing.T, c *ControlPlane, opts FleetOptions) *FleetProcess {
	t.Helper()
	opts.ExtraArgs = append(opts.ExtraArgs, "--delete-nodes-on-exit")
	f, err := c.StartFleet(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Errorf("stopping fleet %s: %v", opts.Group, err)
		}
		nodes, err := c.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: HollowLabel + "=" + opts.Group})
		if err != nil || len(nodes.Items) != 0 {
			t.Errorf("after a stop with --delete-nodes-on-exit: %d nodes of fleet %s left (%v)", len(nodes.Items), opts.Group, err)
		}
	})
	return f
}

func TestHollowNodesRegisterAsKubelets(t *testing.T) {
	c, nodes := sharedCluster(t)
	for _, name := range nodes.Names {
		node, err := c.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := node.Status.NodeInfo.KubeletVersion; got != "v1.37.2" {
			t.Errorf("%s kubelet version = %q, want v1.37.2", name, got)
		}
		if got := node.Spec.ProviderID; got != "kubemark://"+name {
			t.Errorf("%s providerID = %q", name, got)
		}
		if node.Spec.PodCIDR == "" {
			t.Errorf("%s has no podCIDR: the controller-manager's node IPAM did not run", name)
		}
		if !NodeReady(node) {
			t.Errorf("%s not Ready", name)
		}
	}
}

func TestDeploymentRunsOnHollowKubelets(t *testing.T) {
	c, nodes := sharedCluster(t)
	ns := testNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const replicas = 20
	deploy := localtest.PauseDeployment("smoke", map[string]string{HollowLabel: "shared"}, replicas)
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	selector := "app=smoke"
	var pods *v1.PodList
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == v1.PodRunning {
				running++
			}
		}
		return running == replicas && len(pods.Items) == replicas, nil
	})
	if err != nil {
		t.Fatalf("pods not all Running: %v; %s", err, podSummary(pods))
	}
	onNode := map[string]int{}
	for _, p := range pods.Items {
		onNode[p.Spec.NodeName]++
		if len(p.Status.ContainerStatuses) != 1 {
			t.Fatalf("pod %s has %d container statuses", p.Name, len(p.Status.ContainerStatuses))
		}
		cs := p.Status.ContainerStatuses[0]
		if cs.State.Running == nil || cs.Started == nil || !*cs.Started || !cs.Ready || cs.ContainerID == "" {
			t.Errorf("pod %s container %s: running=%v started=%v ready=%v id=%q; want running, started, ready, with an id",
				p.Name, cs.Name, cs.State.Running != nil, cs.Started, cs.Ready, cs.ContainerID)
		}
		if p.Status.PodIP == "" || p.Status.HostIP == "" {
			t.Errorf("pod %s lacks podIP/hostIP: %q/%q", p.Name, p.Status.PodIP, p.Status.HostIP)
		}
	}
	for node := range onNode {
		if !slices.Contains(nodes.Names, node) {
			t.Errorf("pods placed on %q, not a hollow node of this test", node)
		}
	}
	if len(onNode) < 2 {
		t.Errorf("the scheduler put all %d pods on %v; it spreads them over the %d nodes", replicas, onNode, len(nodes.Names))
	}

	// Deleting the Deployment removes every pod (garbage collector, then
	// the kubelets confirm the containers are gone).
	if err := c.Client.AppsV1().Deployments(ns).Delete(ctx, "smoke", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(pods.Items) == 0, err
	})
	if err != nil {
		t.Fatalf("pods left after deleting the Deployment: %v; %s", err, podSummary(pods))
	}
}

func TestProxyMorphSyncsServices(t *testing.T) {
	c, nodes := sharedCluster(t)
	ns := testNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	port, err := freeport.Pick()
	if err != nil {
		t.Fatal(err)
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	proxy, err := c.StartNodes(ctx, 1, NodeOptions{
		// Named as the shared group's first node: its kubelet and this proxy
		// make one hollow node, as in upstream kubemark's two containers.
		Group:      "proxy",
		NamePrefix: strings.TrimSuffix(nodes.Names[0], "0"),
		Morphs:     []string{"proxy"},
		ExtraArgs:  []string{fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := proxy.Stop(); err != nil {
			t.Error(err)
		}
	}()

	services := func() (float64, error) {
		fams, err := localtest.Scrape(http.DefaultClient, metricsURL)
		if err != nil {
			return 0, err
		}
		f, ok := fams["kscale_hollow_proxy_services"]
		if !ok || len(f.GetMetric()) == 0 {
			return 0, fmt.Errorf("no kscale_hollow_proxy_services yet")
		}
		return f.GetMetric()[0].GetGauge().GetValue(), nil
	}
	waitFor := func(want float64) {
		t.Helper()
		var got float64
		var err error
		if pollErr := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			got, err = services()
			return err == nil && got == want, nil
		}); pollErr != nil {
			t.Fatalf("hollow proxy knows %v services, want %v (last error %v)", got, want, err)
		}
	}

	// The proxy syncs the services that exist, then follows changes.
	var base float64
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		base, err = services()
		return err == nil && base >= 1, nil // at least "kubernetes" in default
	}); err != nil {
		t.Fatalf("hollow proxy never synced the existing services: %v", err)
	}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "proxied"},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"app": "none"},
			Ports:    []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(base + 1)
	if err := c.Client.CoreV1().Services(ns).Delete(ctx, "proxied", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	waitFor(base)
}

func podSummary(pods *v1.PodList) string {
	if pods == nil {
		return "no pod list"
	}
	phases := map[v1.PodPhase]int{}
	unscheduled := 0
	for _, p := range pods.Items {
		phases[p.Status.Phase]++
		if p.Spec.NodeName == "" {
			unscheduled++
		}
	}
	return fmt.Sprintf("%d pods, phases %v, %d unscheduled", len(pods.Items), phases, unscheduled)
}
