package fidelity

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// seenStatus is one status of a pod as a watch delivered it.
type seenStatus struct {
	at       time.Time
	status   v1.PodStatus
	deleting bool
}

// podRecord is what the recorder saw of one pod.
type podRecord struct {
	node     string
	statuses []seenStatus
	gone     time.Time // the watch's DELETED; zero while it exists
}

func (r *podRecord) last() *seenStatus {
	if len(r.statuses) == 0 {
		return nil
	}
	return &r.statuses[len(r.statuses)-1]
}

// readyAt is the first time after since the pod was seen with Ready=want;
// zero if never.
func (r *podRecord) readyAt(since time.Time, want bool) time.Time {
	for _, s := range r.statuses {
		if !s.at.Before(since) && podReady(&s.status) == want {
			return s.at
		}
	}
	return time.Time{}
}

// recorder watches the pods a label selector matches, in every namespace,
// and keeps every status each went through, with when the watch delivered
// it. Pods are known by name: a run names its pods uniquely across its
// namespaces.
type recorder struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	pods  map[string]*podRecord

	cancel context.CancelFunc
	done   chan struct{}
}

func startRecorder(ctx context.Context, client kubernetes.Interface, selector string, clk clock.PassiveClock) (*recorder, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &recorder{clock: clk, pods: map[string]*podRecord{}, cancel: cancel, done: make(chan struct{})}
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.LabelSelector = selector })
	_, controller := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &v1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { r.observe(obj) },
			UpdateFunc: func(_, obj any) { r.observe(obj) },
			DeleteFunc: r.forget,
		},
	})
	go func() {
		defer close(r.done)
		controller.RunWithContext(ctx)
	}()
	if !cache.WaitForCacheSync(ctx.Done(), controller.HasSynced) {
		cancel()
		return nil, fmt.Errorf("watching the pods %s: %w", selector, ctx.Err())
	}
	return r, nil
}

func (r *recorder) stop() {
	r.cancel()
	<-r.done
}

func (r *recorder) observe(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	at := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.pods[p.Name]
	if rec == nil {
		rec = &podRecord{}
		r.pods[p.Name] = rec
	}
	if p.Spec.NodeName != "" {
		rec.node = p.Spec.NodeName
	}
	rec.statuses = append(rec.statuses, seenStatus{at: at, status: *p.Status.DeepCopy(), deleting: p.DeletionTimestamp != nil})
}

func (r *recorder) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.pods[p.Name]; rec != nil {
		rec.gone = r.clock.Now()
	}
}

// pod returns a copy of what was seen of the named pod, nil if nothing.
func (r *recorder) pod(name string) *podRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.pods[name]
	if rec == nil {
		return nil
	}
	c := *rec
	c.statuses = append([]seenStatus(nil), rec.statuses...)
	return &c
}

// waitAll polls until cond holds for every named pod, or timeout.
func (r *recorder) waitAll(ctx context.Context, names []string, timeout time.Duration, what string, cond func(name string, rec *podRecord) bool) error {
	var missing []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		missing = missing[:0]
		for _, n := range names {
			if rec := r.pod(n); rec == nil || !cond(n, rec) {
				missing = append(missing, n)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for pods to be %s: %d of %d are not (first: %v): %w", what, len(missing), len(names), missing[:min(3, len(missing))], err)
	}
	return nil
}

// podReady reports the pod's Ready condition.
func podReady(s *v1.PodStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// running reports a pod Running and Ready.
func running(_ string, r *podRecord) bool {
	s := r.last()
	return s != nil && s.status.Phase == v1.PodRunning && podReady(&s.status)
}

// nodeReady reports whether the named node's Ready condition is True.
func nodeReady(ctx context.Context, client kubernetes.Interface, name string) (bool, error) {
	n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue, nil
		}
	}
	return false, nil
}

// nodeTaintedNoExecute reports whether the node lifecycle controller has
// tainted the node as unreachable or not ready with effect NoExecute.
func nodeTaintedNoExecute(ctx context.Context, client kubernetes.Interface, name string) (bool, error) {
	n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == v1.TaintEffectNoExecute && (t.Key == v1.TaintNodeUnreachable || t.Key == v1.TaintNodeNotReady) {
			return true, nil
		}
	}
	return false, nil
}
