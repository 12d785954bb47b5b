package fidelity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/provider/local"
)

// startGroups starts a local cluster that audits its nodes' calls, n
// kubelet morphs and a fleet of n nodes, waits until all are Ready and
// returns the env and the two targets, the oracle first. Everything stops
// with the test.
func startGroups(t testing.TB, n int) (Env, []Target) {
	t.Helper()
	c := startCluster(t, n, Kubelet, Fleet)
	return c.env, c.targets
}

// testCluster is a local cluster that audits its nodes' calls, with hollow
// nodes of the kinds asked for.
type testCluster struct {
	env     Env
	targets []Target
	// stop stops the nodes and the control plane; it runs once, at the
	// latest when the test ends.
	stop func()
}

// startCluster starts a local cluster with n hollow nodes of each kind, in
// the order given (the first is the oracle of a comparison), and waits
// until all are Ready. The nodes run at the control plane's CPU priority:
// what is compared is each node's own speed.
func startCluster(t testing.TB, n int, kinds ...string) *testCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(AuditPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.log")
	if keep := os.Getenv("KSCALE_FIDELITY_AUDIT"); keep != "" {
		audit = keep // kept after the test, to read
	}
	o := controlplane.DefaultOptions()
	o.APIServerPort = 0
	o.EtcdUnsafeNoFsync = true
	o.StopWithCaller = true
	o.APIServerArgs = []string{"--audit-policy-file=" + policy, "--audit-log-path=" + audit}
	// Nodes are marked NotReady 20 s after their last heartbeat instead of
	// 50 s, so the node-notready workload waits less.
	o.ControllerManagerArgs = []string{"--node-monitor-grace-period=20s", "--node-monitor-period=2s"}
	cp, err := local.Start(ctx, filepath.Join(dir, "cluster"), o, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var stops []func() error // in the order they run
	var once sync.Once
	c := &testCluster{}
	c.stop = func() {
		once.Do(func() {
			for _, stop := range stops {
				if err := stop(); err != nil {
					t.Errorf("stopping: %v", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := cp.Stop(ctx); err != nil {
				t.Errorf("stopping the cluster: %v", err)
			}
		})
	}
	t.Cleanup(c.stop)
	var processes []*local.HollowProcess
	for _, kind := range kinds {
		switch kind {
		case Kubelet:
			kubelets, err := cp.StartNodes(ctx, n, local.NodeOptions{Group: Kubelet, NamePrefix: "kubelet-", ControlPlanePriority: true})
			if err != nil {
				t.Fatal(err)
			}
			stops = append(stops, func() error { return kubelets.Stop() })
			processes = append(processes, kubelets.Processes...)
			c.targets = append(c.targets, kubeletTarget(kubelets, n))
		case Fleet:
			fleet, err := cp.StartFleet(ctx, local.FleetOptions{Group: Fleet, Nodes: n, NamePrefix: "fleet-", ControlPlanePriority: true})
			if err != nil {
				t.Fatal(err)
			}
			stops = append(stops, func() error { return fleet.Stop() })
			processes = append(processes, fleet.HollowProcess)
			c.targets = append(c.targets, fleetTarget(fleet, n))
		default:
			t.Fatalf("no hollow node of kind %q", kind)
		}
	}
	waitCtx, stop := local.UntilExit(ctx, processes...)
	defer stop()
	if err := local.WaitNodesReady(waitCtx, cp.Client, local.HollowLabel, len(kinds)*n, os.Stderr); err != nil {
		t.Fatal(err)
	}
	// The workloads' own client must not be what paces them: a burst is
	// created at once and the stream at StreamQPS, well under these.
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.env = Env{Client: client, Config: cfg, AuditLog: audit, Log: os.Stderr}
	return c
}

// names are the names of n nodes from prefix-0.
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// kubeletTarget: a kubelet cut off from the apiserver is a stopped process.
func kubeletTarget(g *local.NodeGroup, n int) Target {
	pids := map[string]int{}
	for _, p := range g.Processes {
		pids[p.Node] = p.PID
	}
	signal := func(sig syscall.Signal) func(context.Context, []string) error {
		return func(_ context.Context, nodes []string) error {
			for _, n := range nodes {
				if err := syscall.Kill(pids[n], sig); err != nil {
					return fmt.Errorf("%s to the kubelet of %s: %w", sig, n, err)
				}
			}
			return nil
		}
	}
	return Target{Kind: Kubelet, LabelKey: local.HollowLabel, LabelValue: Kubelet, Nodes: names("kubelet-", n),
		Fail: signal(syscall.SIGSTOP), Recover: signal(syscall.SIGCONT)}
}

// fleetTarget fails and recovers nodes through the fleet's endpoint.
func fleetTarget(f *local.FleetProcess, n int) Target {
	call := func(path string) func(context.Context, []string) error {
		return func(ctx context.Context, nodes []string) error {
			_, err := f.Call(ctx, "POST", path+"?nodes="+strings.Join(nodes, ","))
			return err
		}
	}
	return Target{Kind: Fleet, LabelKey: local.HollowLabel, LabelValue: Fleet, Nodes: names("fleet-", n),
		Fail: call("/fail"), Recover: call("/recover")}
}
