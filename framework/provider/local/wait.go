package local

import (
	"context"
	"fmt"
	"io"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kscale/kscale/measurements/metrics"
	"github.com/kscale/kscale/measurements/progress"
)

// WaitNodesReady waits until want nodes matching selector are Ready, printing
// progress to out. It watches rather than polls, so waiting for thousands of
// nodes costs the apiserver one watch.
func WaitNodesReady(ctx context.Context, client kubernetes.Interface, selector string, want int, out io.Writer) error {
	_, err := TrackNodesReady(ctx, client, selector, want, out)
	return err
}

// TrackNodesReady is WaitNodesReady that also returns the Ready count over
// the wait (x: seconds since it began), a point at each change.
func TrackNodesReady(ctx context.Context, client kubernetes.Interface, selector string, want int, out io.Writer) ([]metrics.Point, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	informer := factory.Core().V1().Nodes().Informer()
	changed := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, n any) { notify(n) },
		DeleteFunc: notify,
	}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory.Start(ctx.Done())
	defer func() {
		cancel() // stops the informer; Shutdown waits for that
		factory.Shutdown()
	}()

	report := progress.New(out, "nodes ready", want, 2*time.Second)
	tick := time.NewTicker(time.Second) // refresh progress and ETA while nothing changes
	defer tick.Stop()
	began := time.Now()
	points := []metrics.Point{{X: 0, Y: 0}}
	for {
		ready := 0
		for _, obj := range informer.GetStore().List() {
			if NodeReady(obj.(*v1.Node)) {
				ready++
			}
		}
		report.Update(ready)
		if last := points[len(points)-1]; float64(ready) != last.Y {
			points = append(points, metrics.Point{X: time.Since(began).Seconds(), Y: float64(ready)})
		}
		if ready >= want {
			return points, nil
		}
		select {
		case <-ctx.Done():
			return points, fmt.Errorf("waiting for %d Ready nodes (%s): %d ready: %w", want, selector, ready, context.Cause(ctx))
		case <-changed:
		case <-tick.C:
		}
	}
}

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
