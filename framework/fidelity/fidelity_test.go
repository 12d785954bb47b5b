package fidelity

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFidelity runs the workloads on five kubelet morphs and five fleet
// nodes and holds the fleet to the kubelet in what must hold in every run:
// statuses equal field by field at every stage, the same kinds of calls
// and events, the same calls per pod where the node's logic alone decides
// them, patched statuses written back and pods Ready again after their node
// within their limits. Figures that vary from run to run (latencies,
// placement, calls that depend on how fast a node keeps up) are reported;
// BenchmarkFidelity holds them to their targets on 20 + 20 nodes. The test
// checks only that the fleet is not several times slower than the kubelet
// beside it.
func TestFidelity(t *testing.T) {
	env, targets := startGroups(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	report, err := Run(ctx, env, DefaultOptions(), targets...)
	if err != nil {
		t.Fatal(err)
	}
	holdToKubelet(t, report)
}

// TestFidelityTail runs the tail workload (TailOptions: 60 pods at 20/s over
// two namespaces) on 20 kubelet morphs and then on 20 fleet nodes, each on
// a fresh cluster of its own, and holds the fleet to the kubelet as
// TestFidelity does. Its latencies are reported; BenchmarkFidelity holds
// them to their targets in three pairs of runs.
func TestFidelityTail(t *testing.T) {
	report := tailPair(t, 20)
	holdToKubelet(t, report)
}

// tailSettle is how long a fresh cluster idles before the tail workload, so
// that the nodes' start-up (their first statuses, the controllers' first
// passes over them) is over, as on a cluster a test is run against.
const tailSettle = 20 * time.Second

// tailPair runs the tail workload on n kubelet morphs and then on n fleet
// nodes, each kind on a fresh cluster of its own, stopped before the next
// starts, and compares the two.
func tailPair(t testing.TB, n int) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var obs []*Observation
	for _, kind := range []string{Kubelet, Fleet} {
		c := startCluster(t, n, kind)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(tailSettle):
		}
		ob, err := observe(ctx, c.env, TailOptions(), &c.targets[0])
		c.stop()
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, ob)
	}
	return compare(obs[0], obs[1])
}

// holdToKubelet fails the test on what must hold in every run: figures of
// the node's own logic that missed, statuses of one kind only, and a fleet
// several times slower than the kubelet beside it.
func holdToKubelet(t *testing.T, report *Report) {
	t.Helper()
	t.Log("\n" + report.String())
	for _, f := range report.Missed(false) {
		t.Errorf("missed: %s", f)
	}
	for _, d := range report.Status {
		t.Errorf("statuses at %q differ (%d only on %s, %d only on %s)", d.Stage, len(d.Oracle), report.Oracle, len(d.Other), report.Other)
	}
	for _, f := range report.Figures {
		if f.Varies && strings.HasSuffix(f.Name, " ms") && f.Other > 2*f.Oracle+1000 {
			t.Errorf("fleet far slower than the kubelet: %s", f)
		}
	}
}
