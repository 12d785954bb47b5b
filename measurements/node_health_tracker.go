package measurements

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register("NodeHealthTracker", SLO, func(string) Measurement { return &nodeHealthTracker{} })
}

// nodeHealthTracker is kscale's NodeHealthTracker: from `start` to
// `gather` an informer on Nodes records every transition of a node's Ready
// condition from True to False or Unknown (node, time, reason), the way a
// hollow-node fleet that cannot keep up shows. `gather` reports them and
// fails when there were more than maxNotReadyTransitions (default 0).
type nodeHealthTracker struct {
	mu          sync.Mutex
	informers   *informerSet
	env         *Env
	transitions []nodeTransition
}

// nodeTransition is one node leaving the Ready state.
type nodeTransition struct {
	Node   string
	At     time.Time
	Status corev1.ConditionStatus
	Reason string
}

func (n *nodeHealthTracker) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather", "stop")
	if err != nil {
		return nil, err
	}
	switch action {
	case "start":
		return nil, n.start(ctx, env, params)
	case "stop":
		n.stop()
		return nil, nil
	}
	maxTransitions, err := params.Int("maxNotReadyTransitions", 0)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	running := n.informers != nil
	n.mu.Unlock()
	if !running {
		return nil, fmt.Errorf("NodeHealthTracker was not started")
	}
	n.stop()
	n.mu.Lock()
	defer n.mu.Unlock()
	nodes := map[string]bool{}
	var items []string
	for _, t := range n.transitions {
		nodes[t.Node] = true
		items = append(items, fmt.Sprintf("%s went %s at %s (%s)", t.Node, t.Status, t.At.UTC().Format(time.RFC3339), t.Reason))
	}
	s := Summary{
		Headline:   map[string]float64{"NotReadyTransitions": float64(len(n.transitions)), "NodesNotReady": float64(len(nodes))},
		Thresholds: map[string]float64{"NotReadyTransitions": float64(maxTransitions)},
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: []metrics.DataItem{{
			Data: map[string]float64{"NotReadyTransitions": float64(len(n.transitions))}, Unit: "",
		}}},
	}
	if len(n.transitions) > maxTransitions {
		return []Summary{s}, violations(items)
	}
	return []Summary{s}, nil
}

func (n *nodeHealthTracker) start(ctx context.Context, env *Env, params Params) error {
	sel, err := parseWatchSelector(params)
	if err != nil {
		return err
	}
	if env == nil || env.Client == nil {
		return fmt.Errorf("no client for the cluster")
	}
	n.mu.Lock()
	if n.informers != nil {
		n.mu.Unlock()
		return nil
	}
	n.env, n.transitions = env, nil
	n.mu.Unlock()
	nodes := env.Client.CoreV1().Nodes()
	inf := cache.NewSharedIndexInformer(newSelectedListWatch(env.Client, sel,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nodes.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return nodes.Watch(ctx, o) }),
		&corev1.Node{}, 0, cache.Indexers{})
	_ = inf.SetTransform(informerDropManagedFields)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) { n.onUpdate(old, obj) },
	}); err != nil {
		return err
	}
	set, err := startInformerSet(ctx, "node", inf)
	if err != nil {
		return fmt.Errorf("starting to watch nodes (%s): %w", sel, err)
	}
	n.mu.Lock()
	n.informers = set
	n.mu.Unlock()
	return nil
}

// onUpdate records a Ready node that is no longer Ready. Nodes that join
// or leave are not transitions: a node added not ready is still starting.
func (n *nodeHealthTracker) onUpdate(old, obj any) {
	o, ok1 := old.(*corev1.Node)
	c, ok2 := obj.(*corev1.Node)
	if !ok1 || !ok2 || !nodeStateReady(o) || nodeStateReady(c) {
		return
	}
	t := nodeTransition{Node: c.Name, Status: corev1.ConditionUnknown, Reason: "no Ready condition"}
	for _, cond := range c.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			t.Status, t.Reason = cond.Status, cond.Reason
			if cond.Message != "" {
				t.Reason += ": " + cond.Message
			}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	t.At = n.env.now()
	n.transitions = append(n.transitions, t)
	klog.InfoS("Node left the Ready state", "node", t.Node, "status", t.Status, "reason", t.Reason)
}

func (n *nodeHealthTracker) stop() {
	n.mu.Lock()
	set := n.informers
	n.informers = nil
	n.mu.Unlock()
	set.stop()
}
