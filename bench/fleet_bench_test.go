package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/measurements/metrics"
	"github.com/kscale/kscale/measurements/procstat"
)

// auditPolicy records every request of a node identity (kubelet morph or
// fleet) at Metadata level and nothing else: the benchmark counts API calls
// per node by verb and resource from it.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:nodes"]
- level: None
`

// benchCluster starts a cluster as users run it (etcd fsync on), with the
// given extra apiserver flags.
func benchCluster(b *testing.B, apiserverArgs ...string) *local.ControlPlane {
	b.Helper()
	o := controlplane.DefaultOptions()
	o.APIServerArgs = apiserverArgs
	return startBenchCluster(b, o)
}

// startBenchCluster starts a cluster of options o on free ports, stopped
// with the benchmark, whose logs a failed benchmark keeps.
func startBenchCluster(b *testing.B, o controlplane.Options) *local.ControlPlane {
	b.Helper()
	o.APIServerPort = 0
	o.StopWithCaller = true
	c, err := local.Start(context.Background(), filepath.Join(b.TempDir(), "cluster"), o, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = c.Stop(context.Background())
		if b.Failed() {
			keepLogs(b, c)
		}
	})
	return c
}

// keepLogs copies the logs of a failed benchmark's cluster out of its
// temporary folder, which the testing package removes.
func keepLogs(b *testing.B, c *local.ControlPlane) {
	dst, err := os.MkdirTemp("", "kscale-bench-logs-")
	if err == nil {
		err = os.CopyFS(dst, os.DirFS(c.Dir.LogDir()))
	}
	if err != nil {
		b.Logf("keeping the cluster's logs: %v", err)
		return
	}
	b.Logf("the cluster's logs are kept in %s", dst)
}

// componentRestarts returns how often the supervisor restarted each
// component of the cluster.
func componentRestarts(b *testing.B, c *local.ControlPlane) map[string]int {
	b.Helper()
	state, err := c.Dir.ReadState()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int{}
	for _, comp := range state.Components {
		out[comp.Name] = comp.Restarts
	}
	return out
}

// usageOver samples processes over a window and returns each one's cores and
// memory, by name.
func usageOver(b *testing.B, pids map[string]int, window time.Duration) map[string]processUsage {
	b.Helper()
	first := map[string]procstat.Sample{}
	for name, pid := range pids {
		s, err := procstat.Read(pid)
		if err != nil {
			b.Fatal(err)
		}
		first[name] = s
	}
	time.Sleep(window)
	out := map[string]processUsage{}
	for name, pid := range pids {
		s, err := procstat.Read(pid)
		if err != nil {
			b.Fatal(err)
		}
		u := procstat.Between(first[name], s)
		out[name] = processUsage{Cores: u.Cores, RSSMiB: float64(u.RSS) / (1 << 20),
			RSSAnonMiB: float64(u.RSSAnon) / (1 << 20), RSSFileMiB: float64(u.RSSFile) / (1 << 20)}
	}
	return out
}

func controlPlanePIDs(b *testing.B, c *local.ControlPlane) map[string]int {
	b.Helper()
	eps, err := c.Endpoints()
	if err != nil {
		b.Fatal(err)
	}
	pids := map[string]int{}
	for name, ep := range eps {
		pids[name] = ep.PID
	}
	return pids
}

// auditEvent is the part of an audit event the benchmark reads.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// auditCounts counts completed requests per call ("VERB resource[/sub]") for
// the node users that classify() maps to a group, between from and to, and
// the watches those users hold open at to.
func auditCounts(b *testing.B, path string, from, to time.Time, classify func(user string) string) (calls map[string]map[string]float64, watches map[string]float64) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	calls = map[string]map[string]float64{}
	watches = map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.ObjectRef == nil {
			continue
		}
		group := classify(ev.User.Username)
		if group == "" || ev.StageTimestamp.After(to) {
			continue
		}
		resource := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			resource += "/" + ev.ObjectRef.Subresource
		}
		if ev.Verb == "watch" {
			switch ev.Stage {
			case "ResponseStarted":
				watches[group]++
			case "ResponseComplete", "Panic":
				watches[group]--
			}
		}
		if ev.Stage != "ResponseComplete" || ev.StageTimestamp.Before(from) {
			continue
		}
		if calls[group] == nil {
			calls[group] = map[string]float64{}
		}
		calls[group][strings.ToUpper(ev.Verb)+" "+resource]++
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return calls, watches
}

func perUnit(m map[string]float64, divisor float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = v / divisor
	}
	return out
}

// BenchmarkFleetKubelet1000 runs 1000 kubelet-profile hollow nodes in one
// fleet next to 3 real kubelet-morph nodes, on a cluster that audits node
// requests. It reports the fleet's start-up, idle CPU and memory, the
// memory per node of both kinds, and both kinds' API calls per node at
// start-up, per node per minute (idle) and per pod (a pod's life), by verb
// and resource.
func BenchmarkFleetKubelet1000(b *testing.B) {
	const (
		fleetNodes = 1000
		morphNodes = 3
		idle       = 330 * time.Second // one status report (5 min) of every node falls in it
		podsPer    = 4
	)
	dir := b.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.log")
	c := benchCluster(b, "--audit-policy-file="+policy, "--audit-log-path="+auditLog, "--audit-log-maxsize=0")
	ctx := context.Background()

	morphStart := time.Now()
	morph, err := c.StartNodes(ctx, morphNodes, local.NodeOptions{Group: "morph", NamePrefix: "morph-"})
	if err != nil {
		b.Fatal(err)
	}
	defer morph.Stop()
	if err := local.WaitNodesReady(ctx, c.Client, local.HollowLabel+"=morph", morphNodes, nil); err != nil {
		b.Fatal(err)
	}

	start := time.Now()
	f, err := c.StartFleet(ctx, local.FleetOptions{Group: "fleet", Nodes: fleetNodes})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	if err := local.WaitNodesReady(ctx, c.Client, local.HollowLabel+"=fleet", fleetNodes, nil); err != nil {
		b.Fatal(err)
	}
	readySeconds := time.Since(start).Seconds()
	// Settle: all watches open, start-up events sent.
	waitQuiet(b, f, 6*fleetNodes)

	pids := controlPlanePIDs(b, c)
	pids["fleet"] = f.PID
	for i, p := range morph.Processes {
		pids[fmt.Sprintf("morph-%d", i)] = p.PID
	}
	t0 := time.Now()
	usage := usageOver(b, pids, idle)
	t1 := time.Now()
	failedRenewals := fleetMetricB(b, f, "kscale_fleet_lease_renewals_total", map[string]string{"result": "error"})

	// A pod's life on both kinds of node: podsPer pods per node, to Running,
	// then deleted.
	churn := func(group string, replicas int) {
		runAndDelete(b, c, group, replicas)
	}
	churn("morph", morphNodes*podsPer)
	churn("fleet", fleetNodes*podsPer)
	t2 := time.Now()

	classify := func(user string) string {
		switch {
		case strings.HasPrefix(user, "system:node:morph-"):
			return "kubelet-morph"
		case strings.HasPrefix(user, "system:node:fleet-"):
			return "fleet"
		}
		return ""
	}
	idleCalls, watches := auditCounts(b, auditLog, t0, t1, classify)
	podCalls, _ := auditCounts(b, auditLog, t1, t2, classify)
	startCalls, _ := auditCounts(b, auditLog, morphStart, t0, classify)
	minutes := t1.Sub(t0).Minutes()
	nodes := map[string]float64{"kubelet-morph": morphNodes, "fleet": fleetNodes}
	began := map[string]time.Time{"kubelet-morph": morphStart, "fleet": start}
	// Idle calls (lease renewals, status reports) go on through the start-up
	// and the churn; take their share of each window out.
	lessIdle := func(g string, calls map[string]float64, window time.Duration) map[string]float64 {
		out := map[string]float64{}
		for call, v := range calls {
			out[call] = max(0, v-idleCalls[g][call]/minutes*window.Minutes())
		}
		return out
	}
	perNodeMinute := map[string]map[string]float64{}
	perNodeStart := map[string]map[string]float64{}
	perPod := map[string]map[string]float64{}
	for g, n := range nodes {
		perNodeMinute[g] = perUnit(idleCalls[g], n*minutes)
		perNodeStart[g] = perUnit(lessIdle(g, startCalls[g], t0.Sub(began[g])), n)
		perPod[g] = perUnit(lessIdle(g, podCalls[g], t2.Sub(t1)), n*podsPer)
		watches[g] /= n
	}
	var morphMiB []float64
	for i := range morph.Processes {
		morphMiB = append(morphMiB, usage[fmt.Sprintf("morph-%d", i)].RSSMiB)
	}
	fleetPerNodeKiB := usage["fleet"].RSSMiB * 1024 / fleetNodes
	ratio := median(morphMiB) * 1024 / fleetPerNodeKiB
	b.ReportMetric(readySeconds, "s/ready")
	b.ReportMetric(usage["fleet"].RSSMiB, "MiB/fleet")
	b.ReportMetric(1000*usage["fleet"].Cores, "millicores/fleet")
	b.ReportMetric(ratio, "x-less-memory-per-node")
	writeBench(b, "fleet-kubelet-1000", fleetKubelet1000Result{
		Nodes:                     fleetNodes,
		ReadySeconds:              readySeconds,
		IdleWindowSeconds:         idle.Seconds(),
		Processes:                 usage,
		FleetRSSMiB:               usage["fleet"].RSSMiB,
		FleetIdleCores:            usage["fleet"].Cores,
		FleetRSSPerNodeKiB:        fleetPerNodeKiB,
		KubeletMorphRSSPerNodeMiB: median(morphMiB),
		MemoryPerNodeRatio:        ratio,
		FailedLeaseRenewals:       failedRenewals,
		APICallsPerNodePerMinute:  perNodeMinute,
		APICallsPerNodeAtStart:    perNodeStart,
		APICallsPerPod:            perPod,
		OpenWatchesPerNode:        watches,
		PodsPerNodeInChurn:        podsPer,
	})
}

// waitQuiet waits until the fleet holds all its watches and its queues are
// empty (start-up events sent).
func waitQuiet(b *testing.B, f *local.FleetProcess, watches float64) {
	b.Helper()
	if err := settle(f, watches, 1, 10*time.Minute); err != nil {
		b.Fatalf("fleet never settled: %v", err)
	}
}

// settle waits until at least share of the expected watches are open and
// the fleet's event queue is empty. A share below 1 allows for watches that
// are being re-established: past 5 minutes, each reconnects every 5–10
// minutes, as a kubelet's reflectors do, so at thousands of nodes some are
// always between two requests.
func settle(f *local.FleetProcess, watches, share float64, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(context.Context) (bool, error) {
		w, err1 := localtest.FleetMetric(f.Endpoint, "kscale_fleet_watches", nil)
		q, err2 := localtest.FleetMetric(f.Endpoint, "kscale_fleet_queue_length", map[string]string{"priority": "events"})
		return err1 == nil && err2 == nil && w >= share*watches && q == 0, nil
	})
}

// waitWatches waits until the fleet holds at least want watches.
func waitWatches(f *local.FleetProcess, want float64, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(context.Context) (bool, error) {
		w, err := localtest.FleetMetric(f.Endpoint, "kscale_fleet_watches", nil)
		return err == nil && w >= want, nil
	})
}

func fleetMetricB(b *testing.B, f *local.FleetProcess, name string, labels map[string]string) float64 {
	b.Helper()
	v, err := localtest.FleetMetric(f.Endpoint, name, labels)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// runAndDelete runs replicas pause pods on the hollow nodes of group to
// Running, then deletes them and waits until they are gone.
func runAndDelete(b *testing.B, c *local.ControlPlane, group string, replicas int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	name := "bench-" + group
	_, err = c.Client.AppsV1().Deployments(ns.Name).Create(ctx, localtest.PauseDeployment(name, map[string]string{local.HollowLabel: group}, int32(replicas)), metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		return err == nil && localtest.PodPhases(pods)[v1.PodRunning] == replicas, nil
	})
	if err != nil {
		b.Fatalf("%s pods not Running: %v", group, err)
	}
	if err := c.Client.AppsV1().Deployments(ns.Name).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		b.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		b.Fatalf("%s pods not deleted: %v", group, err)
	}
}

// BenchmarkFleetKubelet5000 registers 5000 kubelet-profile hollow nodes in
// one fleet and keeps them for 10 minutes, counting NotReady transitions and
// failed lease renewals, and measuring what the fleet and the control plane
// cost. On a 2-core machine the control plane is expected to be the limit.
func BenchmarkFleetKubelet5000(b *testing.B) {
	const (
		nodes  = 5000
		steady = 10 * time.Minute
	)
	c := benchCluster(b)
	ctx := context.Background()
	start := time.Now()
	f, err := c.StartFleet(ctx, local.FleetOptions{Group: "fleet", Nodes: nodes})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	startup := sampleStartup(c, f, start, 5*time.Second)
	defer startup()
	// Where the control plane cannot take all nodes, the figures of the
	// nodes it did take are still worth recording: that is the finding.
	readyCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	seenReady, err := local.TrackNodesReady(readyCtx, c.Client, local.HollowLabel+"=fleet", nodes, nil)
	allReady := err == nil
	readySeconds := time.Since(start).Seconds()
	readyNodes := countReady(ctx, b, c, local.HollowLabel+"=fleet")
	// Watches open before the start-up events are all sent (those go last):
	// the two times are taken one after the other.
	watchesSeconds, settledSeconds := -1.0, -1.0
	if allReady && waitWatches(f, 0.99*6*nodes, 10*time.Minute) == nil {
		watchesSeconds = time.Since(start).Seconds()
		if settle(f, 6*nodes, 0.99, 10*time.Minute) == nil {
			settledSeconds = time.Since(start).Seconds()
		}
	}
	timeline := startup()

	transitions := countNotReady(ctx, b, c, local.HollowLabel+"=fleet")
	errorsBefore := fleetMetricB(b, f, "kscale_fleet_lease_renewals_total", map[string]string{"result": "error"})
	pids := controlPlanePIDs(b, c)
	pids["fleet"] = f.PID
	var maxLeaseAge float64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Second):
			}
			if v, err := localtest.FleetMetric(f.Endpoint, "kscale_fleet_lease_age_max_seconds", nil); err == nil {
				maxLeaseAge = max(maxLeaseAge, v)
			}
		}
	}()
	usage := usageOver(b, pids, steady)
	close(stop)
	sampler.Wait()
	failed := fleetMetricB(b, f, "kscale_fleet_lease_renewals_total", map[string]string{"result": "error"}) - errorsBefore
	watches := fleetMetricB(b, f, "kscale_fleet_watches", nil)
	busy := 0.0
	for _, u := range usage {
		busy += u.Cores
	}
	b.ReportMetric(readySeconds, "s/ready")
	b.ReportMetric(usage["fleet"].RSSMiB, "MiB/fleet")
	b.ReportMetric(transitions(), "notready-transitions")
	writeBench(b, "fleet-kubelet-5000", fleetKubelet5000Result{
		Nodes:                     nodes,
		AllReady:                  allReady,
		ReadyNodesAtReadySeconds:  readyNodes,
		ReadySeconds:              readySeconds,
		ReadyAsSeenByTheBench:     thin(seenReady, 5),
		StartupTimeline:           timeline,
		ReadyNodesAtEnd:           countReady(ctx, b, c, local.HollowLabel+"=fleet"),
		Watches99PercentOpenAfter: watchesSeconds,
		StartupEventsSentAfter:    settledSeconds,
		SteadySeconds:             steady.Seconds(),
		NotReadyTransitions:       transitions(),
		FailedLeaseRenewals:       failed,
		MaxLeaseAgeSeconds:        maxLeaseAge,
		FleetWatches:              watches,
		CSINodes:                  countCSINodes(ctx, b, c),
		Processes:                 usage,
		CoresBusyOfTwo:            busy,
		ComponentRestarts:         componentRestarts(b, c),
	})
}

// thin keeps the first point, the last, and in between one point per step
// of x: a Ready count over 5000 nodes has a point for nearly every node.
func thin(points []metrics.Point, step float64) []metrics.Point {
	var out []metrics.Point
	for i, p := range points {
		if i == 0 || i == len(points)-1 || p.X-out[len(out)-1].X >= step {
			out = append(out, p)
		}
	}
	return out
}

// sampleStartup samples the fleet's registrations, its own Ready count, its
// API errors and open watches and the CPU of the fleet and of every control
// plane component every interval, until the returned function is first
// called; that returns the samples (defer it too, for the paths that fail
// before). Where a start-up is slow, this says whether
// registration, the control plane or the benchmark's own view of the nodes
// lagged. A component restarted in between has no CPU figure for that step.
func sampleStartup(c *local.ControlPlane, f *local.FleetProcess, start time.Time, every time.Duration) func() []startupSample {
	read := func() map[string]procstat.Sample {
		pids := map[string]int{"fleet": f.PID}
		if eps, err := c.Endpoints(); err == nil {
			for name, ep := range eps {
				pids[name] = ep.PID
			}
		}
		out := map[string]procstat.Sample{}
		for name, pid := range pids {
			if s, err := procstat.Read(pid); err == nil {
				out[name] = s
			}
		}
		return out
	}
	metric := func(name string) float64 {
		v, _ := localtest.FleetMetric(f.Endpoint, name, nil) // a missed scrape reads 0; the next one catches up
		return v
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []startupSample)
	go func() {
		var samples []startupSample
		before := read()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- samples
				return
			case <-tick.C:
			}
			now := read()
			cores := map[string]float64{}
			for name, s := range now {
				if p, ok := before[name]; ok && p.PID == s.PID {
					cores[name] = procstat.Between(p, s).Cores
				}
			}
			before = now
			samples = append(samples, startupSample{
				Seconds:    time.Since(start).Seconds(),
				Registered: metric("kscale_fleet_node_registrations_total"),
				Ready:      metric("kscale_fleet_nodes_ready"),
				APIErrors:  metric("kscale_fleet_api_errors_total"),
				Watches:    metric("kscale_fleet_watches"),
				Cores:      cores,
			})
		}
	}()
	return sync.OnceValue(func() []startupSample {
		cancel()
		return <-done
	})
}

// countReady lists the nodes matching selector and counts the Ready ones.
func countReady(ctx context.Context, b *testing.B, c *local.ControlPlane, selector string) int {
	b.Helper()
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		b.Fatal(err)
	}
	ready := 0
	for i := range nodes.Items {
		if local.NodeReady(&nodes.Items[i]) {
			ready++
		}
	}
	return ready
}

// countCSINodes counts the cluster's CSINodes: one per node a kubelet (or a
// fleet node in the kubelet profile) started.
func countCSINodes(ctx context.Context, b *testing.B, c *local.ControlPlane) int {
	b.Helper()
	list, err := c.Client.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return len(list.Items)
}

// countNotReady counts, from now on, every time a node matching selector
// turns from Ready to not Ready. The returned function reads the count.
func countNotReady(ctx context.Context, b *testing.B, c *local.ControlPlane, selector string) func() float64 {
	b.Helper()
	var mu sync.Mutex
	ready := map[string]bool{}
	count := 0.0
	w, err := c.Client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		b.Fatal(err)
	}
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		b.Fatal(err)
	}
	for i := range nodes.Items {
		ready[nodes.Items[i].Name] = local.NodeReady(&nodes.Items[i])
	}
	go func() {
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*v1.Node)
			if !ok {
				continue
			}
			mu.Lock()
			now := local.NodeReady(n)
			if ready[n.Name] && !now {
				count++
			}
			ready[n.Name] = now
			mu.Unlock()
		}
	}()
	b.Cleanup(w.Stop)
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return count
	}
}

// BenchmarkFleetPods1000x30 runs 30 000 pods on 1000 kubelet-profile nodes
// (ten Deployments of 3000, as density tests spread them) and reports how
// long they took to be Running and what each pod costs the fleet.
func BenchmarkFleetPods1000x30(b *testing.B) {
	const (
		nodes       = 1000
		deployments = 10
		perDeploy   = 3000
		pods        = deployments * perDeploy
	)
	c := benchCluster(b)
	ctx := context.Background()
	f, err := c.StartFleet(ctx, local.FleetOptions{Group: "fleet", Nodes: nodes})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	if err := local.WaitNodesReady(ctx, c.Client, local.HollowLabel+"=fleet", nodes, nil); err != nil {
		b.Fatal(err)
	}
	waitQuiet(b, f, 6*nodes)
	before, err := procstat.Read(f.PID)
	if err != nil {
		b.Fatal(err)
	}
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "density-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := range deployments {
		_, err := c.Client.AppsV1().Deployments(ns.Name).Create(ctx, localtest.PauseDeployment(fmt.Sprintf("density-%d", i), map[string]string{local.HollowLabel: "fleet"}, perDeploy), metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
	}
	var running float64
	err = wait.PollUntilContextTimeout(ctx, 10*time.Second, 60*time.Minute, true, func(context.Context) (bool, error) {
		running = fleetMetricB(b, f, "kscale_fleet_pod_transitions_total", map[string]string{"to": "Running"})
		return running >= pods, nil
	})
	if err != nil {
		b.Fatalf("%v pods Running after %v: %v", running, time.Since(start).Round(time.Second), err)
	}
	runningAfter := time.Since(start).Seconds()
	// Measured as "before" was: once the events queued while the apiserver
	// was the bottleneck are sent and the watches are open, so that the
	// figure is what the fleet holds per pod, not the backlog of the burst.
	waitQuiet(b, f, 6*nodes)
	settledAfter := time.Since(start).Seconds()
	// The fleet counts a pod Running when it starts it; the API must agree.
	list, err := c.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		b.Fatal(err)
	}
	if len(list.Items) != pods {
		b.Fatalf("the fleet started %v pods but the API shows %d Running", running, len(list.Items))
	}
	after, err := procstat.Read(f.PID)
	if err != nil {
		b.Fatal(err)
	}
	perPodKiB := (float64(after.RSS) - float64(before.RSS)) / 1024 / pods
	b.ReportMetric(runningAfter, "s/30000-running")
	b.ReportMetric(perPodKiB, "KiB/pod")
	writeBench(b, "fleet-kubelet-1000x30-pods", fleetPods1000x30Result{
		Nodes:                nodes,
		Pods:                 pods,
		AllRunningSeconds:    runningAfter,
		SettledSeconds:       settledAfter,
		EventsDropped:        fleetMetricB(b, f, "kscale_fleet_events_dropped_total", nil),
		FleetRSSBeforeMiB:    float64(before.RSS) / (1 << 20),
		FleetRSSAfterMiB:     float64(after.RSS) / (1 << 20),
		FleetRSSPerPodKiB:    perPodKiB,
		PodsRunningPerSecond: pods / runningAfter,
	})
}
