package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kscale/kscale/framework/config"
)

// recordingFailer keeps which nodes are down and every call made.
type recordingFailer struct {
	// unknown is a node the failer cannot fail.
	unknown  string
	mu       sync.Mutex
	down     map[string]bool
	fails    [][]string
	problems []string
}

func (r *recordingFailer) Fail(_ context.Context, nodes []string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var failed []string
	for _, n := range nodes {
		if n == r.unknown {
			continue // a node no fleet runs: the others still fail
		}
		if r.down[n] {
			r.problems = append(r.problems, "failed twice: "+n)
		}
		r.down[n] = true
		failed = append(failed, n)
	}
	r.fails = append(r.fails, nodes)
	if len(failed) < len(nodes) {
		return failed, errors.New("node " + r.unknown + " is in none of the fleets")
	}
	return failed, nil
}

func (r *recordingFailer) Recover(_ context.Context, nodes []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		if !r.down[n] {
			r.problems = append(r.problems, "recovered while up: "+n)
		}
		delete(r.down, n)
	}
	return nil
}

func TestChaosMonkeyFailsAndRecoversNodes(t *testing.T) {
	var objs []runtime.Object
	for i := range 12 {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}}
		ready := v1.ConditionTrue
		switch i {
		case 9:
			n.Labels = map[string]string{"node-role.kubernetes.io/control-plane": ""}
		case 10:
			ready = v1.ConditionUnknown // its fleet is gone
		}
		n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: ready}}
		objs = append(objs, n)
	}
	// n11 is Ready but no fleet runs it: picking it must not leave the
	// others of its batch failed for good.
	failer := &recordingFailer{unknown: "n11", down: map[string]bool{}}
	cm := config.ChaosMonkey{
		NodeFailure: &config.NodeFailure{
			FailureRate: 0.2, Interval: config.Duration(20 * time.Millisecond), JitterFactor: 0.5,
			// Longer than the interval: failures overlap, and the run ends
			// with nodes down that must come back.
			SimulatedDowntime: config.Duration(70 * time.Millisecond),
		},
		ExcludedNodes: []string{"n0"},
	}
	// A second leaves room for a busy machine; 3 rounds need 90 ms at most.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	newChaosMonkey(cm, fake.NewClientset(objs...), failer).run(ctx)

	if len(failer.fails) < 3 {
		t.Fatalf("only %d failures in 1 s at a 20–30 ms interval", len(failer.fails))
	}
	for _, nodes := range failer.fails {
		// ceil(0.2 × 12 nodes) = 3, fewer only when too few are up.
		if len(nodes) > 3 || len(nodes) == 0 {
			t.Errorf("failed %v, want 3 nodes at a time", nodes)
		}
		if slices.Contains(nodes, "n0") || slices.Contains(nodes, "n9") || slices.Contains(nodes, "n10") {
			t.Errorf("failed %v: the excluded node, the control plane and a NotReady node must be left alone", nodes)
		}
	}
	if len(failer.problems) > 0 {
		t.Errorf("%v", failer.problems)
	}
	if len(failer.down) > 0 {
		t.Errorf("nodes still down after the run: %v", failer.down)
	}
}

func TestNewRefusesNodeFailureWithoutAFailer(t *testing.T) {
	compiled := &config.Compiled{Config: &config.Config{ChaosMonkey: config.ChaosMonkey{NodeFailure: &config.NodeFailure{FailureRate: 0.1}}}}
	client, dyn, mapper := fakeClients()
	opts := Options{RunID: "r", Client: client, Dynamic: []dynamic.Interface{dyn}, Mapper: mapper}
	if _, err := New(compiled, opts); !errors.Is(err, ErrNoNodeFailer) {
		t.Fatalf("want ErrNoNodeFailer, got %v", err)
	}
	opts.NodeFailer = &recordingFailer{}
	if _, err := New(compiled, opts); err != nil {
		t.Fatalf("with a failer: %v", err)
	}
}
