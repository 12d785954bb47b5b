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
