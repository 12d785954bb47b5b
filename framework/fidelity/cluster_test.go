package fidelity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	c, err := local.Start(ctx, filepath.Join(dir, "cluster"), o, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	kubelets, err := c.StartNodes(ctx, n, local.NodeOptions{Group: Kubelet, NamePrefix: "kubelet-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kubelets.Stop(); err != nil {
			t.Errorf("kubelet morphs: %v", err)
		}
	})
	fleet, err := c.StartFleet(ctx, local.FleetOptions{Group: Fleet, Nodes: n, NamePrefix: "fleet-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fleet.Stop(); err != nil {
			t.Errorf("fleet: %v", err)
		}
	})
	waitCtx, stop := local.UntilExit(ctx, append(kubelets.Processes, fleet.HollowProcess)...)
	defer stop()
	if err := local.WaitNodesReady(waitCtx, c.Client, local.HollowLabel, 2*n, os.Stderr); err != nil {
		t.Fatal(err)
	}
	// The workloads' own client must not be what paces them: a burst is
	// created at once and the stream at StreamQPS, well under these.
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Client: client, Config: cfg, AuditLog: audit, Log: os.Stderr}
	pids := map[string]int{}
	for _, p := range kubelets.Processes {
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
	fleetCall := func(path string) func(context.Context, []string) error {
		return func(ctx context.Context, nodes []string) error {
			_, err := fleet.Call(ctx, "POST", path+"?nodes="+strings.Join(nodes, ","))
			return err
		}
	}
	names := func(prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return out
	}
	return env, []Target{
		// A kubelet cut off from the apiserver is a stopped process.
		{Kind: Kubelet, LabelKey: local.HollowLabel, LabelValue: Kubelet, Nodes: names("kubelet-"),
			Fail: signal(syscall.SIGSTOP), Recover: signal(syscall.SIGCONT)},
		{Kind: Fleet, LabelKey: local.HollowLabel, LabelValue: Fleet, Nodes: names("fleet-"),
			Fail: fleetCall("/fail"), Recover: fleetCall("/recover")},
	}
}
