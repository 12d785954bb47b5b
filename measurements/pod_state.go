package measurements

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// This file holds what the wait measurements share: the selector params
// clusterloader2's methods take, the pod and node states they wait for,
// stoppable informers and a context-aware poll loop. Names carry a
// distinctive prefix because other methods of the package are written
// concurrently.

// watchSelector is the namespace, labelSelector and fieldSelector params
// of clusterloader2's object selector. An empty namespace means all
// namespaces.
type watchSelector struct {
	Namespace     string
	LabelSelector string
	FieldSelector string
	labels        labels.Selector
}

// parseWatchSelector reads and validates the selector params, so a typo
// fails the call that has it rather than an informer much later.
func parseWatchSelector(params Params) (watchSelector, error) {
	var s watchSelector
	var err error
	if s.Namespace, err = params.String("namespace", ""); err != nil {
		return s, err
	}
	if s.LabelSelector, err = params.String("labelSelector", ""); err != nil {
		return s, err
	}
	if s.FieldSelector, err = params.String("fieldSelector", ""); err != nil {
		return s, err
	}
	if s.labels, err = labels.Parse(s.LabelSelector); err != nil {
		return s, fmt.Errorf("param labelSelector: %q: %w", s.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(s.FieldSelector); err != nil {
		return s, fmt.Errorf("param fieldSelector: %q: %w", s.FieldSelector, err)
	}
	return s, nil
}

// apply sets the selectors on list options.
func (s watchSelector) apply(o *metav1.ListOptions) {
	o.LabelSelector = s.LabelSelector
	o.FieldSelector = s.FieldSelector
}

// listOptions are list options with the selectors.
func (s watchSelector) listOptions() metav1.ListOptions {
	var o metav1.ListOptions
	s.apply(&o)
	return o
}

// matchesLabels checks labels on the client side too: the server filters
// already, but a fake client's watch does not, and it costs little.
func (s watchSelector) matchesLabels(l map[string]string) bool {
	return s.labels == nil || s.labels.Matches(labels.Set(l))
}

// String names the selection in logs and "not measured" reasons.
func (s watchSelector) String() string {
	ns := "(all)"
	if s.Namespace != "" {
		ns = s.Namespace
	}
	out := fmt.Sprintf("namespace=%s labelSelector=%q", ns, s.LabelSelector)
	if s.FieldSelector != "" {
		out += fmt.Sprintf(" fieldSelector=%q", s.FieldSelector)
	}
	return out
}

// newSelectedListWatch returns a ListerWatcher of one resource that applies
// the selector to every list and watch. client is the clientset behind the
// functions: a fake one makes the reflector skip watch-list streaming, which
// fakes do not implement.
func newSelectedListWatch(client any, sel watchSelector,
	list func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error),
	watchFn func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)) cache.ListerWatcher {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			sel.apply(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			sel.apply(&o)
			return watchFn(ctx, o)
		},
	}
	return cache.ToListWatcherWithWatchListSemantics(lw, client)
}

// informerSet runs informers until stop is called or the context they were
// started with ends.
type informerSet struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// startInformerSet runs the informers under a child of ctx and returns once
// every one has synced. ctx should be the run's context: the informers
// outlive the call that started them. On a failed sync they are stopped.
func startInformerSet(ctx context.Context, what string, informers ...cache.SharedIndexInformer) (*informerSet, error) {
	ictx, cancel := context.WithCancel(ctx)
	s := &informerSet{cancel: cancel}
	synced := make([]cache.InformerSynced, 0, len(informers))
	for _, inf := range informers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			inf.RunWithContext(ictx)
		}()
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ictx.Done(), synced...) {
		s.stop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("syncing the %s informer did not finish", what)
	}
	return s, nil
}

// stop ends the informers and waits until their goroutines are gone.
// Safe on nil and more than once.
func (s *informerSet) stop() {
	if s == nil {
		return
	}
	s.once.Do(s.cancel)
	s.wg.Wait()
}

// waitPoll calls cond at once and then every interval until it reports done,
// fails, or ctx ends (ctx.Err() is returned then).
func waitPoll(ctx context.Context, interval time.Duration, cond func(ctx context.Context) (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		done, err := cond(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// podStateRunningReady reports whether a pod is Running with its Ready
// condition true: clusterloader2 counts a pod as running only then.
func podStateRunningReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podTally counts pods by state, the way clusterloader2's pod waits judge
// them: terminating pods apart, Running pods only when ready, Succeeded and
// Failed pods as inactive.
type podTally struct {
	Total           int
	Running         int // Running and ready
	RunningUpdated  int // Running, ready and of the controller's current template
	RunningNotReady int
	Pending         int // scheduled, not running yet
	Unscheduled     int
	Succeeded       int
	Failed          int
	Terminating     int
	Unknown         int
}

// add counts one pod; updated (nil means every pod is current) says whether
// a running pod has the controller's current template.
func (t *podTally) add(p *corev1.Pod, updated func(*corev1.Pod) bool) {
	t.Total++
	switch {
	case p.DeletionTimestamp != nil:
		t.Terminating++
	case p.Status.Phase == corev1.PodRunning:
		if !podStateRunningReady(p) {
			t.RunningNotReady++
			return
		}
		t.Running++
		if updated == nil || updated(p) {
			t.RunningUpdated++
		}
	case p.Status.Phase == corev1.PodPending:
		if p.Spec.NodeName == "" {
			t.Unscheduled++
		} else {
			t.Pending++
		}
	case p.Status.Phase == corev1.PodSucceeded:
		t.Succeeded++
	case p.Status.Phase == corev1.PodFailed:
		t.Failed++
	default:
		t.Unknown++
	}
}

// inactive are the pods that finished: they neither run nor block a wait.
func (t podTally) inactive() int { return t.Succeeded + t.Failed }

// reached reports whether exactly desired pods run the current template
// and every other pod has finished, or, with a margin, whether nearly
// enough run without the pod count growing unchecked: clusterloader2's rule
// for a controller's pods.
func (t podTally) reached(desired, margin int) bool {
	if t.Total == t.Running+t.inactive() && t.Running == t.RunningUpdated && t.RunningUpdated == desired {
		return true
	}
	return margin > 0 && t.RunningUpdated >= desired-margin &&
		t.Total-t.inactive() <= desired && t.inactive() <= margin
}

// String summarises the tally: "7/10 pods running, 2 pending, 1 failed".
func (t podTally) String(desired int) string {
	s := fmt.Sprintf("%d/%d pods running", t.Running, desired)
	if t.Running != t.RunningUpdated {
		s += fmt.Sprintf(" (%d of an old template)", t.Running-t.RunningUpdated)
	}
	for _, d := range t.others() {
		s += ", " + d
	}
	return s
}

// others counts the pods that are not running and ready, by state, the
// states with none left out: "2 running but not ready", "1 pending".
func (t podTally) others() []string {
	var out []string
	for _, c := range []struct {
		n    int
		what string
	}{
		{t.RunningNotReady, "running but not ready"}, {t.Pending, "pending"},
		{t.Unscheduled, "unscheduled"}, {t.Terminating, "terminating"},
		{t.Succeeded, "succeeded"}, {t.Failed, "failed"}, {t.Unknown, "in an unknown phase"},
	} {
		if c.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return out
}

// plus is the tally of both tallies' pods.
func (t podTally) plus(o podTally) podTally {
	return podTally{
		Total: t.Total + o.Total, Running: t.Running + o.Running, RunningUpdated: t.RunningUpdated + o.RunningUpdated,
		RunningNotReady: t.RunningNotReady + o.RunningNotReady, Pending: t.Pending + o.Pending,
		Unscheduled: t.Unscheduled + o.Unscheduled, Succeeded: t.Succeeded + o.Succeeded, Failed: t.Failed + o.Failed,
		Terminating: t.Terminating + o.Terminating, Unknown: t.Unknown + o.Unknown,
	}
}

// nodeStateReady reports whether a node's Ready condition is true.
func nodeStateReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeStateSchedulable reports whether pods may land on a node: ready,
// not cordoned, and without a NoSchedule or NoExecute taint. clusterloader2
// counts such nodes when it waits for nodes.
func nodeStateSchedulable(n *corev1.Node) bool {
	if !nodeStateReady(n) || n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	return true
}

// waitSortedKeys returns a map's keys in order, for stable messages.
func waitSortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// waitFirstN joins at most n items and says how many more there were, so an
// error about 5000 objects stays readable.
func waitFirstN(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:n], "; ") + fmt.Sprintf("; ... and %d more", len(items)-n)
}
