package measurements

import (
	"context"
	"fmt"
	"k8s.io/utils/clock"
	"math"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// podTrackerSyncTimeout bounds the informer's first list at start: a start
// action that cannot list the pods within it fails rather than measure from
// a partial view.
const podTrackerSyncTimeout = time.Minute

// Schedule time sources of a podTimes.
const (
	// scheduledByCondition: the PodScheduled=True condition's
	// lastTransitionTime. The apiserver stamps it when it stores the
	// scheduler's binding (the pods/binding subresource is not an object
	// that can be read back later), so it is the binding's time on the
	// apiserver's clock, with the one-second granularity of the wire format.
	scheduledByCondition = "condition"
	// scheduledByObservation: the local time the tracker first saw
	// spec.nodeName set. Used only for pods that carry no PodScheduled time
	// (a pod created with nodeName; kubelets that add the condition without
	// a time).
	scheduledByObservation = "observed"
)

// podTimes is what a tracker learnt of one pod created after its start.
// Zero times are phases not reached (or not seen) yet.
type podTimes struct {
	Namespace, Name, Node string
	// Stateless: every volume is emptyDir, configMap, secret, downwardAPI or
	// projected; the pod startup SLO covers only such pods.
	Stateless bool
	// Created, Scheduled and Running are the API's whole-second stamps
	// narrowed by when the tracker saw them (refineStamp).
	//
	// Created is the creationTimestamp (apiserver clock).
	Created time.Time
	// Scheduled is when the pod was bound to its node; ScheduledBy says
	// from which source (scheduledByCondition, scheduledByObservation).
	Scheduled   time.Time
	ScheduledBy string
	// Running is the latest state.running.startedAt of the pod's containers
	// when it was first seen with all of them running (kubelet clock).
	Running time.Time
	// Watched is the local clock when the tracker first saw the pod Running
	// with all its containers running: the end of the pod startup SLI,
	// which counts until the start is observable through a watch.
	Watched time.Time
	// Deleted is set when the pod was deleted while tracked.
	Deleted bool
}

// podTracker follows the pods of a selector with an informer from a start
// action until its stop, and keeps the times of the pods created after the
// start. PodStartupLatency and SchedulingThroughput each run their own.
type podTracker struct {
	clock clock.PassiveClock
	since time.Time

	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	mu   sync.Mutex
	pods map[podKey]*podTimes
	// ignored counts the pods created before the start, from their first
	// sight only, so the count is of pods and not of their updates.
	ignored int
}

// podKey identifies a pod across its updates; the UID tells a re-created
// pod of the same name from its predecessor.
type podKey struct {
	namespace, name string
	uid             types.UID
}

// startPodTracker lists and watches the selected pods until stop is called
// or ctx ends, and returns once the first list is in. ctx must be the run's
// context: the tracker outlives the start action that made it. what names
// the measurement in logs.
func startPodTracker(ctx context.Context, env *Env, what string, sel watchSelector) (*podTracker, error) {
	if env == nil || env.Client == nil {
		return nil, fmt.Errorf("%s: no client for the cluster", what)
	}
	now := env.now()
	t := &podTracker{
		clock: env.clock(),
		// creationTimestamp travels in whole seconds, so a pod created in
		// the very second of the start shows a time up to 1s before it.
		// Comparing with the start truncated to its second keeps those
		// pods; the price is that a pod created in the same second just
		// before the start counts too. The start is read on the local
		// clock and the creation on the apiserver's: clock skew between
		// the two moves this line by as much.
		since: now.Truncate(time.Second),
		done:  make(chan struct{}),
		pods:  map[podKey]*podTimes{},
	}
	pods := env.Client.CoreV1().Pods(sel.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			sel.apply(&opts)
			return pods.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			sel.apply(&opts)
			return pods.Watch(ctx, opts)
		},
	}
	_, controller := cache.NewInformerWithOptions(cache.InformerOptions{
		// The wrapper tells the reflector whether the client can stream
		// the initial list (WatchList): a real clientset can, which spares
		// the apiserver a large LIST at 150k pods; the fake cannot.
		ListerWatcher: cache.ToListWatcherWithWatchListSemantics(lw, env.Client),
		ObjectType:    &v1.Pod{},
		Handler: cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(obj any, _ bool) { t.observe(obj, true) },
			UpdateFunc: func(_, obj any) { t.observe(obj, false) },
			DeleteFunc: t.forget,
		},
		// The informer keeps every selected pod in its store; managed
		// fields are most of a pod's bytes and nothing here reads them.
		Transform: func(obj any) (any, error) {
			if pod, ok := obj.(*v1.Pod); ok {
				pod.ManagedFields = nil
			}
			return obj, nil
		},
	})
	runCtx, cancel := context.WithCancel(ctx)
	t.cancel = cancel
	go func() {
		defer close(t.done)
		controller.RunWithContext(runCtx)
	}()
	syncCtx, cancelSync := context.WithTimeout(runCtx, podTrackerSyncTimeout)
	defer cancelSync()
	if !cache.WaitForNamedCacheSyncWithContext(syncCtx, controller.HasSynced) {
		t.stop()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: listing pods %s: %w", what, sel, err)
		}
		return nil, fmt.Errorf("%s: listing pods %s: not done within %s", what, sel, podTrackerSyncTimeout)
	}
	klog.V(2).InfoS("Tracking pods", "measurement", what, "selector", sel.String(), "since", t.since)
	return t, nil
}

// stop ends the informer and waits for it, so that what the tracker holds
// no longer changes. Calling it again does nothing.
func (t *podTracker) stop() {
	if t == nil {
		return
	}
	t.stopOnce.Do(t.cancel)
	<-t.done
}

// stopped reports whether the tracker's informer has ended (stop, or the
// run's context ended).
func (t *podTracker) stopped() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// snapshot returns a copy of every tracked pod, and how many pods created
// before the start were seen and ignored.
func (t *podTracker) snapshot() (pods []podTimes, ignored int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pods = make([]podTimes, 0, len(t.pods))
	for _, p := range t.pods {
		pods = append(pods, *p)
	}
	return pods, t.ignored
}

// observe records the phases a pod version shows that were not recorded
// yet; added says the informer delivers the pod for the first time. The
// first sight of a phase wins: later updates (a restarted container's new
// startedAt, say) do not move a recorded time.
func (t *podTracker) observe(obj any, added bool) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	at := t.clock.Now()
	key := podKey{pod.Namespace, pod.Name, pod.UID}
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, known := t.pods[key]
	if !known {
		if pod.CreationTimestamp.Time.Before(t.since) {
			// Pods of earlier steps would skew both measurements; they are
			// counted only to be logged at gather.
			if added {
				t.ignored++
			}
			return
		}
		rec = &podTimes{
			Namespace: pod.Namespace,
			Name:      pod.Name,
			Stateless: podIsStateless(pod),
			Created:   refineStamp(pod.CreationTimestamp.Time, at),
		}
		t.pods[key] = rec
	}
	if rec.Node == "" {
		rec.Node = pod.Spec.NodeName
	}
	if rec.ScheduledBy != scheduledByCondition {
		if c := podScheduledCondition(pod); c != nil && !c.LastTransitionTime.IsZero() {
			rec.Scheduled, rec.ScheduledBy = refineStamp(c.LastTransitionTime.Time, at), scheduledByCondition
		} else if rec.Scheduled.IsZero() && pod.Spec.NodeName != "" {
			rec.Scheduled, rec.ScheduledBy = at, scheduledByObservation
		}
	}
	if rec.Watched.IsZero() {
		if started, ok := podContainersStarted(pod); ok {
			rec.Running, rec.Watched = refineStamp(started, at), at
		}
	}
}

// refineStamp narrows a time the API stores in whole seconds (creation,
// PodScheduled, container startedAt: metav1.Time drops the fraction) with
// the local time the tracker first saw it. The event happened within the
// second after the stamp, and not after it was seen, so the latest time
// both allow is the estimate: the sighting when it falls in that second
// (a watch delivers within milliseconds), else the end of the second.
// Without this, two stamps of one pod carry up to a second of rounding each
// and a 2 s start reads as 2 s or 3 s by chance. A sighting before the
// stamp (clocks apart) leaves the stamp as it is.
func refineStamp(stamp, seen time.Time) time.Time {
	if stamp.IsZero() || seen.Before(stamp) {
		return stamp
	}
	if end := stamp.Add(time.Second - time.Millisecond); seen.After(end) {
		return end
	}
	return seen
}

// forget marks a deleted pod. Its record stays: a pod that was scheduled
// or started before its deletion was measured all the same.
func (t *podTracker) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec, ok := t.pods[podKey{pod.Namespace, pod.Name, pod.UID}]; ok {
		rec.Deleted = true
	}
}

// podScheduledCondition returns the pod's PodScheduled=True condition, or
// nil when it is not scheduled (or unschedulable).
func podScheduledCondition(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue {
			return c
		}
	}
	return nil
}

// podContainersStarted returns the latest startedAt of the pod's containers
// when the pod is Running and every container of its spec is running; the
// SLI ends when the last one started. Init containers are not looked at:
// the SLO excludes them.
func podContainersStarted(pod *v1.Pod) (time.Time, bool) {
	if pod.Status.Phase != v1.PodRunning || len(pod.Spec.Containers) == 0 {
		return time.Time{}, false
	}
	running := map[string]time.Time{}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			running[cs.Name] = cs.State.Running.StartedAt.Time
		}
	}
	var latest time.Time
	for _, c := range pod.Spec.Containers {
		at, ok := running[c.Name]
		if !ok {
			return time.Time{}, false
		}
		if at.After(latest) {
			latest = at
		}
	}
	return latest, true
}

// podIsStateless reports whether every volume of the pod is one the pod
// startup SLO calls stateless: emptyDir, configMap, secret, downwardAPI or
// projected. Any other volume (a PVC, a hostPath, ...) makes the pod
// stateful, as its startup waits on storage the SLO does not cover.
func podIsStateless(pod *v1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		s := v.VolumeSource
		if s.EmptyDir == nil && s.ConfigMap == nil && s.Secret == nil && s.DownwardAPI == nil && s.Projected == nil {
			return false
		}
	}
	return true
}

// trackerMs is d in milliseconds, the unit of every latency this package
// reports.
func trackerMs(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// trackerDurationText writes milliseconds as a duration ("6.1s", "850ms") for
// violation lines.
func trackerDurationText(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond).String()
}

// trackerRateText writes a rate to two decimals without trailing zeros ("80",
// "12.5", "3.33").
func trackerRateText(r float64) string {
	return strconv.FormatFloat(math.Round(r*100)/100, 'f', -1, 64)
}
