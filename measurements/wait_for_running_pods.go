package measurements

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func init() {
	Register("WaitForRunningPods", Informational, func(string) Measurement { return &waitForRunningPods{} })
}

const (
	// clusterloader2's default timeout for WaitForRunningPods.
	runningPodsDefaultTimeout = time.Minute
	// runningPodsPollInterval is how often the informer's store is counted.
	runningPodsPollInterval = time.Second
)

// waitForRunningPods is WaitForRunningPods: it waits until exactly
// desiredPodCount pods matching the selector are Running and ready and
// every other matching pod has finished (Succeeded or Failed), as
// clusterloader2 does; more running pods than desired is not done. One
// informer follows the pods rather than listing them again and again.
type waitForRunningPods struct {
	// pollInterval overrides runningPodsPollInterval (tests).
	pollInterval time.Duration
}

func (w *waitForRunningPods) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	if _, ok := params["desiredPodCount"]; !ok {
		return nil, fmt.Errorf("param desiredPodCount: missing")
	}
	desired, err := params.Int("desiredPodCount", 0)
	if err != nil {
		return nil, err
	}
	if desired < 0 {
		return nil, fmt.Errorf("param desiredPodCount: %d is negative", desired)
	}
	sel, err := parseWatchSelector(params)
	if err != nil {
		return nil, err
	}
	timeout, err := params.Duration("timeout", runningPodsDefaultTimeout)
	if err != nil {
		return nil, err
	}
	if env == nil || env.Client == nil {
		return nil, fmt.Errorf("no client for the cluster")
	}
	interval := w.pollInterval
	if interval <= 0 {
		interval = runningPodsPollInterval
	}

	pods := env.Client.CoreV1().Pods(sel.Namespace)
	inf := cache.NewSharedIndexInformer(newSelectedListWatch(env.Client, sel,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return pods.Watch(ctx, o) }),
		&corev1.Pod{}, 0, cache.Indexers{})
	_ = inf.SetTransform(informerDropManagedFields)

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	set, err := startInformerSet(tctx, "pod", inf)
	if err != nil {
		return nil, w.failure(ctx, err, timeout, desired, sel, nil)
	}
	defer set.stop()

	progress := env.progress("pods running", desired)
	var last []*corev1.Pod
	err = waitPoll(tctx, interval, func(context.Context) (bool, error) {
		last = last[:0]
		var tally podTally
		for _, obj := range inf.GetStore().List() {
			p, ok := obj.(*corev1.Pod)
			if !ok || !sel.matchesLabels(p.Labels) {
				continue
			}
			last = append(last, p)
			tally.add(p, nil)
		}
		progress.Update(tally.Running)
		return tally.reached(desired, 0), nil
	})
	if err != nil {
		return nil, w.failure(ctx, err, timeout, desired, sel, last)
	}
	klog.V(2).InfoS("WaitForRunningPods done", "selector", sel.String(), "running", desired)
	return nil, nil
}

// failure explains a wait that did not end: the caller's cancellation as
// is, a timeout with the pods' states and the pods that do not run.
func (w *waitForRunningPods) failure(ctx context.Context, err error, timeout time.Duration, desired int, sel watchSelector, pods []*corev1.Pod) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		// A failed sync within the timeout is reported like a timeout
		// below, with no pods seen.
		return fmt.Errorf("waiting for %d running pods (%s): %w", desired, sel, err)
	}
	var tally podTally
	var notRunning []string
	for _, p := range pods {
		tally.add(p, nil)
		if !podStateRunningReady(p) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			state := string(p.Status.Phase)
			if p.DeletionTimestamp != nil {
				state = "Terminating"
			} else if p.Status.Phase == corev1.PodRunning {
				state = "Running, not ready"
			}
			notRunning = append(notRunning, fmt.Sprintf("%s/%s (%s)", p.Namespace, p.Name, state))
		}
	}
	msg := fmt.Sprintf("%d pods (%s) not running after %v: %s", desired, sel, timeout, tally.String(desired))
	if len(notRunning) > 0 {
		msg += "; not running: " + waitFirstN(notRunning, 10)
	}
	return errors.New(msg)
}
