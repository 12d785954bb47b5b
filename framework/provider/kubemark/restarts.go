package kubemark

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/report"
)

// restartWatch follows the hollow-node pods from provisioning to teardown.
// A container that restarts (its process killed, the root node's kubelet
// starting it again) is recorded with how it ended; its nodes, adopted by
// the new process, count as back once each has renewed its Lease after the
// restart. The report lists every restart.
type restartWatch struct {
	p        *Provider
	interval time.Duration

	mu       sync.Mutex
	counts   map[string]int32 // pod/container -> restart count seen
	restarts []report.HollowRestart
	cancel   context.CancelFunc
	done     chan struct{}
}

func (p *Provider) startRestartWatch(ctx context.Context) *restartWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &restartWatch{p: p, interval: 2 * time.Second, counts: map[string]int32{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		wait.UntilWithContext(ctx, w.poll, w.interval)
	}()
	return w
}

// stop ends the watch and waits for it.
func (w *restartWatch) stop() {
	w.cancel()
	<-w.done
}

// Restarts are the restarts seen so far.
func (w *restartWatch) Restarts() []report.HollowRestart {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]report.HollowRestart(nil), w.restarts...)
}

func (w *restartWatch) poll(ctx context.Context) {
	d := w.p.m.Data
	dep, err := w.p.m.Deployment()
	if err != nil || dep.Spec.Selector == nil {
		return
	}
	pods, err := w.p.root.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).String()})
	if err != nil {
		return
	}
	now := time.Now()
	for i := range pods.Items {
		pod := &pods.Items[i]
		for _, cs := range pod.Status.ContainerStatuses {
			key := pod.Name + "/" + cs.Name
			w.mu.Lock()
			seen, known := w.counts[key]
			w.counts[key] = cs.RestartCount
			w.mu.Unlock()
			if !known && cs.RestartCount == 0 || known && cs.RestartCount <= seen {
				continue
			}
			r := report.HollowRestart{Pod: pod.Name, Container: cs.Name, At: now, Nodes: d.NodesPerPod}
			if t := cs.LastTerminationState.Terminated; t != nil {
				r.Reason = fmt.Sprintf("%s, exit code %d", t.Reason, t.ExitCode)
				if !t.FinishedAt.IsZero() {
					r.At = t.FinishedAt.Time
				}
			}
			w.p.progressf("kubemark: hollow-node pod %s container %s restarted (%s)", pod.Name, cs.Name, r.Reason)
			w.mu.Lock()
			w.restarts = append(w.restarts, r)
			idx := len(w.restarts) - 1
			w.mu.Unlock()
			go w.waitNodesBack(ctx, idx, r)
		}
	}
}

// waitNodesBack waits until every node of the restarted pod has renewed its
// Lease after the restart, and records how long that took.
func (w *restartWatch) waitNodesBack(ctx context.Context, idx int, r report.HollowRestart) {
	names := w.p.podNodeNames(r.Pod)
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			lease, err := w.p.test.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			if err != nil || lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(r.At) {
				return false, nil
			}
		}
		back := time.Since(r.At).Seconds()
		w.mu.Lock()
		w.restarts[idx].NodesBackSeconds = back
		w.mu.Unlock()
		w.p.progressf("kubemark: the %d nodes of %s renew their Leases again, %.1fs after the restart", len(names), r.Pod, back)
		return true, nil
	})
}

// podNodeNames are the names of a hollow-node pod's nodes: <pod>-<i> in the
// fleet layout, the pod's name in the kubelet layout.
func (p *Provider) podNodeNames(pod string) []string {
	if p.po.Hollow != provider.HollowFleet {
		return []string{pod}
	}
	names := make([]string, p.m.Data.NodesPerPod)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", pod, i)
	}
	return names
}
