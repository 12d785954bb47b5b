package measurements

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func init() {
	Register("WaitForNodes", Informational, func(string) Measurement { return &waitForNodes{} })
}

const (
	// clusterloader2's default timeout for WaitForNodes.
	nodesDefaultTimeout = 30 * time.Minute
	// nodesPollInterval is how often the informer's store is counted.
	nodesPollInterval = time.Second
)

// waitForNodes is WaitForNodes: it waits until the number of ready nodes
// matching the selector is within [minDesiredNodeCount,
// maxDesiredNodeCount]. As in clusterloader2 a node counts when pods can
// land on it: Ready, not cordoned and without a NoSchedule or NoExecute
// taint.
type waitForNodes struct {
	// pollInterval overrides nodesPollInterval (tests).
	pollInterval time.Duration
}

func (w *waitForNodes) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	var minCount, maxCount int
	for _, p := range []struct {
		key string
		to  *int
	}{{"minDesiredNodeCount", &minCount}, {"maxDesiredNodeCount", &maxCount}} {
		if _, ok := params[p.key]; !ok {
			return nil, fmt.Errorf("param %s: missing", p.key)
		}
		n, err := params.Int(p.key, 0)
		if err != nil {
			return nil, err
		}
		*p.to = n
	}
	if minCount > maxCount {
		return nil, fmt.Errorf("param minDesiredNodeCount: %d is above maxDesiredNodeCount %d", minCount, maxCount)
	}
	sel, err := parseWatchSelector(params)
	if err != nil {
		return nil, err
	}
	timeout, err := params.Duration("timeout", nodesDefaultTimeout)
	if err != nil {
		return nil, err
	}
	if env == nil || env.Client == nil {
		return nil, fmt.Errorf("no client for the cluster")
	}
	interval := w.pollInterval
	if interval <= 0 {
		interval = nodesPollInterval
	}

	nodes := env.Client.CoreV1().Nodes()
	inf := cache.NewSharedIndexInformer(newSelectedListWatch(env.Client, sel,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nodes.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return nodes.Watch(ctx, o) }),
		&corev1.Node{}, 0, cache.Indexers{})
	_ = inf.SetTransform(informerDropManagedFields)

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ready := 0
	var notReady []string
	// failure explains a wait that did not end: the caller's cancellation
	// as is, a timeout with the count and the nodes that do not count.
	failure := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("waiting for [%d, %d] ready nodes (%s): %w", minCount, maxCount, sel, err)
		}
		msg := fmt.Sprintf("%d ready nodes (%s) after %v, want between %d and %d", ready, sel, timeout, minCount, maxCount)
		if len(notReady) > 0 {
			sort.Strings(notReady)
			msg += "; not ready or not schedulable: " + waitFirstN(notReady, 10)
		}
		return errors.New(msg)
	}
	set, err := startInformerSet(tctx, "node", inf)
	if err != nil {
		return nil, failure(err)
	}
	defer set.stop()

	progress := env.progress("nodes ready", minCount)
	err = waitPoll(tctx, interval, func(context.Context) (bool, error) {
		ready, notReady = 0, notReady[:0]
		for _, obj := range inf.GetStore().List() {
			n, ok := obj.(*corev1.Node)
			if !ok || !sel.matchesLabels(n.Labels) {
				continue
			}
			if nodeStateSchedulable(n) {
				ready++
			} else {
				notReady = append(notReady, n.Name)
			}
		}
		progress.Update(min(ready, minCount))
		return minCount <= ready && ready <= maxCount, nil
	})
	if err != nil {
		return nil, failure(err)
	}
	klog.V(2).InfoS("WaitForNodes done", "selector", sel.String(), "ready", ready)
	return nil, nil
}
