package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/freeport"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/provider/local/localtest"
)

// kwokBinary is the KWOK binary make bench built (bin/tools/kwok-<version>)
// and its version, the release the light fleet is measured against.
func kwokBinary(b *testing.B) (path, version string) {
	b.Helper()
	bin := os.Getenv("KSCALE_KWOK")
	if bin == "" {
		b.Fatal("$KSCALE_KWOK is not set: run this benchmark with make bench, which builds KWOK into bin/tools")
	}
	if _, err := os.Stat(bin); err != nil {
		b.Fatalf("$KSCALE_KWOK: %v (make bench builds it)", err)
	}
	return bin, strings.TrimPrefix(filepath.Base(bin), "kwok-")
}

// BenchmarkFleetLight5000VsKWOK registers 5000 nodes with the light fleet
// and, each time on a fresh cluster, 5000 nodes handled by KWOK, and reports
// for each the time until all are Ready and, once the controller-manager has
// caught up, the idle cost of the simulator and the control plane and the
// calls the apiserver served. The two run four times each in the order
// fleet, KWOK, KWOK, fleet, KWOK, fleet, fleet, KWOK, so that neither is
// favoured by its place on a drifting machine, and every figure is compared
// over the four runs of each: their means and the Mann–Whitney p-value
// (results.comparison).
//
// KWOK's Nodes are created as `kwokctl scale node` creates them, with the
// status.declaredFeatures a v1.37 kubelet's Node carries, as the fleet's do:
// the scheduler places on a Node only the pods whose features it declares,
// so without them KWOK's nodes would do less than a v1.37 node (and the
// control plane would hold less). A last run is a control with Nodes exactly
// as kwokctl makes them. With KSCALE_BENCH_PROFILES set to a folder, CPU
// and heap profiles of the apiserver and the controller-manager over each
// window are written there.
func BenchmarkFleetLight5000VsKWOK(b *testing.B) {
	kwok, kwokVersion := kwokBinary(b)
	runs := map[string][]simulatorRun{}
	kwokRuns := map[string]nodeBirth{"kwok-declaring": bornDeclaring, "kwok-kwokctl": bornAsKwokctl}
	order := []string{"fleet-light", "kwok-declaring", "kwok-declaring", "fleet-light", "kwok-declaring", "fleet-light", "fleet-light", "kwok-declaring", "kwok-kwokctl"}
	for i, sim := range order {
		var r simulatorRun
		if birth, ok := kwokRuns[sim]; ok {
			r = measureKWOK(b, kwok, i, birth)
		} else {
			r = measureLightFleet(b, i)
		}
		runs[sim] = append(runs[sim], r)
	}
	results := fleetLightVsKWOKResult{Nodes: simulatedNodes, WindowSeconds: simulatorWindow.Seconds(), Order: strings.Join(order, ", ")}
	for _, sim := range []struct {
		name string
		to   *simulatorRuns
	}{
		{"fleet-light", &results.FleetLight},
		{"kwok-declaring", &results.KWOKDeclaring},
		{"kwok-kwokctl", &results.KWOKKwokctl},
	} {
		rs := runs[sim.name]
		mean := meanRun(rs)
		*sim.to = simulatorRuns{Mean: mean, Runs: rs}
		if _, ok := kwokRuns[sim.name]; ok {
			sim.to.Version = kwokVersion
		}
		b.ReportMetric(mean.ReadySeconds, "s/ready-"+sim.name)
		b.ReportMetric(mean.Processes["simulator"].RSSMiB, "MiB/"+sim.name)
	}
	results.Comparison = compareSimulators(runs["fleet-light"], runs["kwok-declaring"])
	for _, f := range results.Comparison {
		b.Logf("%-42s fleet %10.3f  KWOK %10.3f  %+6.1f %%  p=%.3f  %s", f.Figure, f.Fleet, f.KWOK, f.DeltaPercent, f.P, f.Verdict)
	}
	writeBench(b, "fleet-light-5000-vs-kwok", results)
}

const (
	simulatedNodes  = 5000
	simulatorSettle = 30 * time.Second
	simulatorWindow = 60 * time.Second
)

// cpuPerLeaseUpdate divides each control plane component's cores by the lease
// renewals per second the apiserver served.
func cpuPerLeaseUpdate(usage map[string]processUsage, calls map[string]float64) map[string]float64 {
	renewals := calls["PUT leases"]
	if renewals == 0 {
		return nil
	}
	out := map[string]float64{}
	for proc, u := range usage {
		if proc != "simulator" {
			out[proc] = u.Cores / renewals * 1000
		}
	}
	return out
}

// meanRun averages runs figure by figure; restarts are summed. A heap figure
// taken in some runs only is summed over those and divided by all of them.
func meanRun(runs []simulatorRun) simulatorRun {
	out := simulatorRun{Processes: map[string]processUsage{}, APIServerCalls: map[string]float64{}, ComponentRestarts: map[string]int{}, CPUMsPerLeaseUpdate: map[string]float64{}}
	n := float64(len(runs))
	addShare := func(sum, v *float64) *float64 {
		if v == nil {
			return sum
		}
		total := *v / n
		if sum != nil {
			total += *sum
		}
		return &total
	}
	for _, r := range runs {
		out.ReadySeconds += r.ReadySeconds / n
		out.WindowStartSeconds += r.WindowStartSeconds / n
		out.LeaseAgeMaxSeconds += r.LeaseAgeMaxSeconds / n
		for proc, u := range r.Processes {
			m := out.Processes[proc]
			m.Cores += u.Cores / n
			m.RSSMiB += u.RSSMiB / n
			m.RSSAnonMiB += u.RSSAnonMiB / n
			m.RSSFileMiB += u.RSSFileMiB / n
			m.HeapInUseMiB = addShare(m.HeapInUseMiB, u.HeapInUseMiB)
			m.HeapLiveMiB = addShare(m.HeapLiveMiB, u.HeapLiveMiB)
			out.Processes[proc] = m
		}
		for call, rate := range r.APIServerCalls {
			out.APIServerCalls[call] += rate / n
		}
		for comp, ms := range r.CPUMsPerLeaseUpdate {
			out.CPUMsPerLeaseUpdate[comp] += ms / n
		}
		for comp, restarts := range r.ComponentRestarts {
			out.ComponentRestarts[comp] += restarts
		}
	}
	return out
}

// measureLightFleet runs the light fleet on a fresh cluster.
func measureLightFleet(b *testing.B, run int) simulatorRun {
	c := benchCluster(b)
	ctx := context.Background()
	start := time.Now()
	f, err := c.StartFleet(ctx, local.FleetOptions{Group: "light", Nodes: simulatedNodes, Profile: "light"})
	if err != nil {
		b.Fatal(err)
	}
	if err := local.WaitNodesReady(ctx, c.Client, local.HollowLabel+"=light", simulatedNodes, nil); err != nil {
		b.Fatal(err)
	}
	r := measureSimulator(ctx, b, c, local.HollowLabel+"=light", "light-", f.PID, start, fmt.Sprintf("%d-fleet-light", run))
	if err := f.Stop(); err != nil {
		b.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	return r
}

// measureKWOK runs KWOK on a fresh cluster, managing nodes the benchmark
// creates as birth says. The node lifecycle controller keeps each Node as its
// first health pass (every 5 s) finds it, for as long as the node exists
// (knownNodeSet), so how a node is born — and how long KWOK takes to give it
// its status — shows in the controller-manager's memory for good.
func measureKWOK(b *testing.B, kwok string, run int, birth nodeBirth) simulatorRun {
	c := benchCluster(b)
	ctx := context.Background()
	port, err := freeport.Pick()
	if err != nil {
		b.Fatal(err)
	}
	stages, err := filepath.Abs("testdata/kwok/stages.yaml")
	if err != nil {
		b.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(c.Dir.LogDir(), "kwok.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(kwok,
		"--kubeconfig="+c.Dir.AdminKubeconfig(),
		"--config="+stages,
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-lease-duration-seconds=40",
		"--server-address=127.0.0.1:"+strconv.Itoa(port),
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	createNodes(b, c, simulatedNodes, birth)
	if err := local.WaitNodesReady(ctx, c.Client, "kscale.io/kwok=true", simulatedNodes, nil); err != nil {
		b.Fatalf("%v (log %s)", err, logFile.Name())
	}
	if birth == bornDeclaring {
		// KWOK's stages patch the status; the list must survive them.
		node, err := c.Client.CoreV1().Nodes().Get(ctx, "kwok-node-0", metav1.GetOptions{})
		if err != nil || !slices.Equal(node.Status.DeclaredFeatures, kubeletDeclaredFeatures) {
			b.Fatalf("kwok-node-0 declares %v (%v), want %v", node.Status.DeclaredFeatures, err, kubeletDeclaredFeatures)
		}
	}
	label := fmt.Sprintf("%d-kwok-born-%s", run, birth)
	r := measureSimulator(ctx, b, c, "kscale.io/kwok=true", "kwok-node-", cmd.Process.Pid, start, label)
	if err := c.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	return r
}

// measureSimulator takes the figures of a simulator whose nodes are all
// Ready, once the controller-manager is done with them.
func measureSimulator(ctx context.Context, b *testing.B, c *local.ControlPlane, selector, leasePrefix string, pid int, start time.Time, label string) simulatorRun {
	ready := time.Since(start).Seconds()
	waitPodCIDRs(ctx, b, c, selector, simulatedNodes)
	waitNodeWritesQuiet(b, c)
	time.Sleep(simulatorSettle)
	pids := controlPlanePIDs(b, c)
	pids["simulator"] = pid
	windowStart := time.Since(start).Seconds()
	profiled := profileComponents(b, c, simulatorWindow, label)
	usage, calls := usageAndCallsOver(b, c, pids, simulatorWindow)
	profiled()
	addHeapFigures(b, c, usage)
	return simulatorRun{
		ReadySeconds:        ready,
		WindowStartSeconds:  windowStart,
		Processes:           usage,
		APIServerCalls:      calls,
		LeaseAgeMaxSeconds:  leaseAgeMax(ctx, b, c, leasePrefix),
		ComponentRestarts:   componentRestarts(b, c),
		CPUMsPerLeaseUpdate: cpuPerLeaseUpdate(usage, calls),
	}
}

// addHeapFigures sets each control plane component's HeapInUseMiB to its Go
// heap in use now (go_memstats_heap_inuse_bytes) and, for those that serve
// /debug/pprof, its HeapLiveMiB to its live heap after a forced collection
// (go_gc_heap_live_bytes); a figure it cannot read stays nil. RSS keeps the
// high-water mark of a burst, since Go hands freed memory back to the OS
// lazily, and the heap in use counts garbage not yet collected; the live heap
// is what the component holds, exactly — a sampled heap profile is too coarse
// to tell two simulators apart. The collection is forced after the window,
// so it does not count in the CPU figures.
func addHeapFigures(b *testing.B, c *local.ControlPlane, usage map[string]processUsage) {
	b.Helper()
	client := adminHTTPClient(b, c)
	eps, err := c.Endpoints()
	if err != nil {
		b.Fatal(err)
	}
	for name, ep := range eps {
		u, ok := usage[name]
		if !ok {
			continue
		}
		u.HeapInUseMiB, u.HeapLiveMiB = heapFigures(b, client, name, ep.Metrics)
		usage[name] = u
	}
}

// heapFigures reads the heap in use and the live heap, in MiB, of the
// component name whose metrics are at metricsURL (see addHeapFigures).
func heapFigures(b *testing.B, client *http.Client, name, metricsURL string) (inUse, live *float64) {
	b.Helper()
	fams, err := localtest.Scrape(client, metricsURL)
	if err != nil {
		b.Logf("reading the heap of %s: %v", name, err)
		return nil, nil
	}
	if m := fams["go_memstats_heap_inuse_bytes"].GetMetric(); len(m) == 1 {
		inUse = ptr.To(m[0].GetGauge().GetValue() / (1 << 20))
	}
	if name == clusterdir.Etcd {
		return inUse, nil // it serves no /debug/pprof unless started to
	}
	gc := strings.TrimSuffix(metricsURL, "/metrics") + "/debug/pprof/heap?gc=1"
	if err := fetchProfile(client, gc, os.DevNull); err != nil {
		b.Logf("collecting the garbage of %s: %v", name, err)
		return inUse, nil
	}
	if fams, err = localtest.Scrape(client, metricsURL); err != nil {
		b.Logf("reading the live heap of %s: %v", name, err)
		return inUse, nil
	}
	if m := fams["go_gc_heap_live_bytes"].GetMetric(); len(m) == 1 {
		live = ptr.To(m[0].GetGauge().GetValue() / (1 << 20))
	}
	return inUse, live
}

// profileComponents, when KSCALE_BENCH_PROFILES names a folder, takes a
// CPU profile of the apiserver and the controller-manager over the next
// window into <folder>/<label>-<component>.pprof and, at its end, a heap
// profile of each into <label>-<component>.heap.pprof; the returned
// function waits for all of them.
func profileComponents(b *testing.B, c *local.ControlPlane, window time.Duration, label string) func() {
	dir := os.Getenv("KSCALE_BENCH_PROFILES")
	if dir == "" {
		return func() {}
	}
	client := adminHTTPClient(b, c)
	var wg sync.WaitGroup
	for _, name := range []string{clusterdir.APIServer, clusterdir.ControllerManager} {
		base := strings.TrimSuffix(c.State.Component(name).MetricsURL, "/metrics") + "/debug/pprof/"
		wg.Go(func() {
			for _, p := range []struct{ query, file string }{
				{fmt.Sprintf("profile?seconds=%d", int(window.Seconds())), ".pprof"},
				{"heap?gc=1", ".heap.pprof"},
			} {
				if err := fetchProfile(client, base+p.query, filepath.Join(dir, label+"-"+name+p.file)); err != nil {
					b.Logf("profiling %s: %v", name, err)
				}
			}
		})
	}
	return wg.Wait
}

// fetchProfile writes what a pprof endpoint answers to file.
func fetchProfile(client *http.Client, url, file string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, data)
	}
	return os.WriteFile(file, data, 0o644)
}

// waitPodCIDRs waits until the controller-manager has given every node a
// podCIDR. Its node IPAM patches nodes at its own pace, behind registration:
// a simulator that registers faster would otherwise have that backlog land in
// its measuring window.
func waitPodCIDRs(ctx context.Context, b *testing.B, c *local.ControlPlane, selector string, want int) {
	b.Helper()
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
		if err != nil {
			return false, nil
		}
		withCIDR := 0
		for i := range nodes.Items {
			if nodes.Items[i].Spec.PodCIDR != "" {
				withCIDR++
			}
		}
		return withCIDR >= want, nil
	})
	if err != nil {
		b.Fatalf("nodes %s without a podCIDR after 10 minutes: %v", selector, err)
	}
}

// waitNodeWritesQuiet waits until the apiserver has served no PATCH of a
// Node for 10 s: behind node IPAM the node lifecycle controller patches each
// new node once, at its own pace, and that too must not fall into one
// simulator's window and not the other's.
func waitNodeWritesQuiet(b *testing.B, c *local.ControlPlane) {
	b.Helper()
	client, url := apiserverMetrics(b, c)
	last, quietSince := -1.0, time.Now()
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		n := apiserverRequests(b, client, url)["PATCH nodes"]
		if n != last {
			last, quietSince = n, time.Now()
		} else if time.Since(quietSince) >= 10*time.Second {
			return
		}
	}
	b.Fatal("the apiserver kept patching Nodes for 10 minutes")
}

// kwokNode is the i-th Node for KWOK to take over, with the labels,
// annotations, providerID and addresses the fleet's nodes register with (zones spread
// round robin over the fleet's default three), so that the controller-manager
// and the apiserver hold Node objects of the same size for both simulators.
func kwokNode(i int) *v1.Node {
	name := fmt.Sprintf("kwok-node-%d", i)
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":                                     "fake",
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
			Labels: map[string]string{
				"kscale.io/kwok":              "true",
				"kubernetes.io/hostname":      name,
				"kubernetes.io/os":            "linux",
				"kubernetes.io/arch":          "amd64",
				"beta.kubernetes.io/os":       "linux",
				"beta.kubernetes.io/arch":     "amd64",
				"topology.kubernetes.io/zone": []string{"zone-a", "zone-b", "zone-c"}[i%3],
			},
		},
		Spec: v1.NodeSpec{ProviderID: "kwok://" + name},
		Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", 64+i>>16, i>>8&255, i&255)},
			{Type: v1.NodeHostName, Address: name},
		}},
	}
}

// nodeBirth is how the benchmark creates the Nodes KWOK takes over.
type nodeBirth string

const (
	// bornAsKwokctl: metadata, spec and addresses (kwokNode), and capacity,
	// allocatable and the node info's architecture and OS — the status that
	// `kwokctl scale node` (KWOK's own way to add nodes, v0.8.0) writes into
	// every Node it creates, here
	// with the values the stages write, so the Node does not change size
	// later; conditions, the daemon endpoint and the rest of the node info
	// come from the stages. The podCIDR kwokctl also sets is left to the
	// controller-manager's node IPAM, as for every other run.
	bornAsKwokctl nodeBirth = "kwokctl"
	// bornDeclaring: as kwokctl, plus the status.declaredFeatures of a
	// v1.37.2 kubelet with its default feature gates (what the fleet's
	// Nodes carry; TestFleetNodesLookLikeKubeletNodes holds the fleet's
	// list to the kubelet's). KWOK v0.8.0 writes none.
	bornDeclaring nodeBirth = "declaring"
)

// kubeletDeclaredFeatures is what a v1.37.2 kubelet declares by default.
var kubeletDeclaredFeatures = []string{
	"ExtendWebSocketsToKubelet",
	"InPlacePodLevelResourcesVerticalScaling",
	"InPlacePodVerticalScalingInitContainers",
	"RestartAllContainersOnContainerExits",
}

// setKwokctlStatus gives node the status `kwokctl scale node` creates Nodes
// with, holding the capacity and allocatable testdata/kwok/stages.yaml
// writes.
func setKwokctlStatus(node *v1.Node) {
	node.Status.Capacity = v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("4"),
		v1.ResourceMemory:           resource.MustParse("16Gi"),
		v1.ResourcePods:             resource.MustParse("110"),
		v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	node.Status.Allocatable = v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("4"),
		v1.ResourceMemory:           resource.MustParse("16284Mi"),
		v1.ResourcePods:             resource.MustParse("110"),
		v1.ResourceEphemeralStorage: resource.MustParse("96636764160"),
	}
	node.Status.NodeInfo = v1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "amd64"}
}

// createNodes creates Node objects for KWOK to take over, 32 at a time,
// born as birth says.
func createNodes(b *testing.B, c *local.ControlPlane, n int, birth nodeBirth) {
	b.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 1000, 1000 // the default 5 QPS would take 17 minutes
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				node := kwokNode(i)
				if birth == bornAsKwokctl || birth == bornDeclaring {
					setKwokctlStatus(node)
				}
				if birth == bornDeclaring {
					node.Status.DeclaredFeatures = kubeletDeclaredFeatures
				}
				if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

// usageAndCallsOver is usageOver that also returns the requests the
// apiserver completed per second in the window, by "VERB resource[/sub]"
// (rates under 0.5/s left out): where two simulators cost the control plane
// differently, these say which calls differ.
func usageAndCallsOver(b *testing.B, c *local.ControlPlane, pids map[string]int, window time.Duration) (map[string]processUsage, map[string]float64) {
	b.Helper()
	client, url := apiserverMetrics(b, c)
	before := apiserverRequests(b, client, url)
	usage := usageOver(b, pids, window)
	calls := map[string]float64{}
	for call, n := range apiserverRequests(b, client, url) {
		if rate := (n - before[call]) / window.Seconds(); rate >= 0.5 {
			calls[call] = rate
		}
	}
	return usage, calls
}

// apiserverRequests reads apiserver_request_total at url, summed by verb
// and resource.
func apiserverRequests(b *testing.B, client *http.Client, url string) map[string]float64 {
	b.Helper()
	fams, err := localtest.Scrape(client, url)
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range fams["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		call := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			call += "/" + labels["subresource"]
		}
		out[call] += m.GetCounter().GetValue()
	}
	return out
}

// leaseAgeMax returns the age of the oldest renewal among the node Leases
// whose names start with prefix.
func leaseAgeMax(ctx context.Context, b *testing.B, c *local.ControlPlane, prefix string) float64 {
	b.Helper()
	leases, err := c.Client.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	oldest := 0.0
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, prefix) && l.Spec.RenewTime != nil {
			oldest = max(oldest, time.Since(l.Spec.RenewTime.Time).Seconds())
		}
	}
	return oldest
}
