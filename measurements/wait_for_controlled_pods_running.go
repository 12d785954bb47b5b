package measurements

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/progress"
)

func init() {
	Register("WaitForControlledPodsRunning", Informational, func(id string) Measurement { return &waitForControlledPods{identifier: id} })
}

const (
	// clusterloader2's defaults for the params of the same names.
	controlledPodsDefaultOperationTimeout = 10 * time.Minute
	controlledPodsDefaultSyncTimeout      = time.Minute
	// controlledPodsPollInterval is how often gather looks at the trackers.
	// The trackers themselves are updated by informer events; gather only
	// counts, so a short interval is cheap.
	controlledPodsPollInterval = time.Second
	// controlledPodsExactTimeoutEnv is clusterloader2's switch that stops
	// it doubling operationTimeout for deletions and scale-downs; configs
	// and CI jobs set it, so it is honoured here too.
	controlledPodsExactTimeoutEnv = "CL2_WAIT_FOR_CONTROLLED_PODS_USE_EXACT_OPERATION_TIMEOUT"
)

// waitForControlledPods is WaitForControlledPodsRunning: from `start` on it
// follows every controller of one kind that matches the selector, and for
// each add, spec change or delete it checks that the controller's pods
// reach the desired state within operationTimeout. `gather` waits until
// every followed controller got there or ran out of time, and fails naming
// those that did not.
//
// One pod informer serves every controller: a pod event is matched against
// the selectors of the controllers in its namespace only, and each tracker
// keeps its own pods, so a check costs O(its replicas), not O(all pods).
type waitForControlledPods struct {
	// identifier names the failed-pods file.
	identifier string
	// pollInterval overrides controlledPodsPollInterval (tests).
	pollInterval time.Duration

	mu           sync.Mutex
	running      bool
	env          *Env
	kind         *controllerKind
	sel          watchSelector
	opTimeout    time.Duration
	checkUpdated bool
	margin       int
	informers    []*informerSet
	podIndexer   cache.Indexer
	listObjects  func(ctx context.Context) ([]runtime.Object, error)

	// trackers by controller key (namespace/name), and by namespace for
	// matching pod events.
	trackers map[string]*controllerTracker
	byNS     map[string]map[string]*controllerTracker
	// seen are the keys of the controllers that exist as the handler knows
	// them, and seenRV the highest resource version it handled: gather
	// compares both with a fresh list to know the handler caught up.
	seen   map[string]bool
	seenRV uint64
	// failedPods are the tracked pods seen in phase Failed.
	failedPods map[string]*corev1.Pod
}

// controllerTracker is one operation on one controller (create, scale,
// update, delete) and whether its pods got to the desired state in time.
type controllerTracker struct {
	view     *controllerView
	deleted  bool
	started  time.Time
	deadline time.Time
	timeout  time.Duration
	state    ctrlOpState
	took     time.Duration
	// last describes the pods at the last check ("7/10 pods running"),
	// and tally counts them.
	last  string
	tally podTally
	// initial is how many pods a deletion had to remove, for progress.
	initial int
	// pods are the controller's pods by key, and whether each runs the
	// controller's current template (computed once per pod version: the
	// comparison walks the whole pod spec).
	pods map[string]ctrlPod
}

type ctrlPod struct {
	pod     *corev1.Pod
	updated bool
}

type ctrlOpState int

const (
	ctrlOpWaiting ctrlOpState = iota
	ctrlOpReached
	ctrlOpTimedOut
)

func (w *waitForControlledPods) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather", "stop")
	if err != nil {
		return nil, err
	}
	switch action {
	case "start":
		return nil, w.start(ctx, env, params)
	case "gather":
		syncTimeout, err := params.Duration("syncTimeout", controlledPodsDefaultSyncTimeout)
		if err != nil {
			return nil, err
		}
		return nil, w.gather(ctx, env, params, syncTimeout)
	default:
		w.stop()
		return nil, nil
	}
}

func (w *waitForControlledPods) start(ctx context.Context, env *Env, params Params) error {
	apiVersion, err := params.String("apiVersion", "")
	if err != nil {
		return err
	}
	kindName, err := params.String("kind", "")
	if err != nil {
		return err
	}
	kind, err := lookupControllerKind(apiVersion, kindName)
	if err != nil {
		return err
	}
	sel, err := parseWatchSelector(params)
	if err != nil {
		return err
	}
	opTimeout, err := params.Duration("operationTimeout", controlledPodsDefaultOperationTimeout)
	if err != nil {
		return err
	}
	checkUpdated, err := params.Bool("checkIfPodsAreUpdated", true)
	if err != nil {
		return err
	}
	margin, err := params.Int("countErrorMargin", 0)
	if err != nil {
		return err
	}
	if margin < 0 {
		return fmt.Errorf("param countErrorMargin: %d is negative", margin)
	}
	if env == nil || env.Client == nil {
		return fmt.Errorf("no client for the cluster")
	}

	w.mu.Lock()
	if w.running {
		// clusterloader2 ignores a second start while one runs; configs
		// whose modules each start the same identifier rely on that.
		w.mu.Unlock()
		klog.V(2).InfoS("WaitForControlledPodsRunning already started", "kind", kind.kind)
		return nil
	}
	w.running = true
	w.env, w.kind, w.sel = env, kind, sel
	w.opTimeout, w.checkUpdated, w.margin = opTimeout, checkUpdated, margin
	w.trackers = map[string]*controllerTracker{}
	w.byNS = map[string]map[string]*controllerTracker{}
	w.seen = map[string]bool{}
	w.seenRV = 0
	w.failedPods = map[string]*corev1.Pod{}
	w.mu.Unlock()

	if err := w.startInformers(ctx, env.Client); err != nil {
		w.stop()
		return fmt.Errorf("starting to watch %ss (%s): %w", kind.kind, sel, err)
	}
	klog.V(2).InfoS("WaitForControlledPodsRunning started", "kind", kind.kind, "selector", sel.String())
	return nil
}

// startInformers starts the pod informer, waits until it synced, then the
// controllers' one: a controller's first check then sees all its pods.
func (w *waitForControlledPods) startInformers(ctx context.Context, client kubernetes.Interface) error {
	podSel := watchSelector{Namespace: w.sel.Namespace}
	pods := client.CoreV1().Pods(w.sel.Namespace)
	podInf := cache.NewSharedIndexInformer(
		newSelectedListWatch(client, podSel,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return pods.Watch(ctx, o) }),
		&corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	// Managed fields are most of a pod's bytes and nothing here reads them.
	_ = podInf.SetTransform(informerDropManagedFields)
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onPod(obj, false) },
		UpdateFunc: func(_, obj any) { w.onPod(obj, false) },
		DeleteFunc: func(obj any) { w.onPod(obj, true) },
	}); err != nil {
		return err
	}
	w.podIndexer = podInf.GetIndexer()
	set, err := startInformerSet(ctx, "pod", podInf)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.informers = append(w.informers, set)
	w.mu.Unlock()

	list, watchFn := w.kind.listWatch(client, w.sel.Namespace)
	w.listObjects = func(ctx context.Context) ([]runtime.Object, error) {
		obj, err := list(ctx, w.sel.listOptions())
		if err != nil {
			return nil, err
		}
		return meta.ExtractList(obj)
	}
	ctrlInf := cache.NewSharedIndexInformer(newSelectedListWatch(client, w.sel, list, watchFn), w.kind.example, 0, cache.Indexers{})
	_ = ctrlInf.SetTransform(informerDropManagedFields)
	if _, err := ctrlInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onController(nil, obj) },
		UpdateFunc: func(old, obj any) { w.onController(old, obj) },
		DeleteFunc: func(obj any) { w.onController(obj, nil) },
	}); err != nil {
		return err
	}
	set, err = startInformerSet(ctx, w.kind.kind, ctrlInf)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.informers = append(w.informers, set)
	w.mu.Unlock()
	return nil
}

// stop ends the informers. It must not hold w.mu: the informers' handlers
// take it, and stopping waits for them.
// Dispose stops the informers at the end of the run.
func (w *waitForControlledPods) Dispose() { w.stop() }

func (w *waitForControlledPods) stop() {
	w.mu.Lock()
	sets := w.informers
	w.informers = nil
	w.running = false
	w.mu.Unlock()
	for _, s := range sets {
		s.stop()
	}
}

// onController follows a controller's add (old nil), update or delete (obj
// nil) and starts a new operation when its spec changed.
func (w *waitForControlledPods) onController(old, obj any) {
	if d, ok := old.(cache.DeletedFinalStateUnknown); ok {
		old = d.Obj
	}
	var oldView, newView *controllerView
	if old != nil {
		oldView = w.kind.view(old)
	}
	if obj != nil {
		newView = w.kind.view(obj)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		return
	}
	now := w.env.now()
	for _, v := range []*controllerView{oldView, newView} {
		if v != nil && v.rv > w.seenRV {
			w.seenRV = v.rv
		}
	}
	switch {
	case newView == nil && oldView != nil: // deleted
		delete(w.seen, oldView.key)
		t := w.newTracker(oldView, true, w.scaledTimeout(true), now)
		w.setTracker(t)
		w.evaluate(t, now)
	case newView != nil:
		if !w.sel.matchesLabels(newView.labels) {
			return
		}
		w.seen[newView.key] = true
		t := w.trackers[newView.key]
		if t != nil && !t.deleted && apiequality.Semantic.DeepEqual(t.view.spec, newView.spec) {
			// Same spec: a status update (a DaemonSet's desired count, a
			// Job's completion) refines the same operation.
			t.view = newView
			w.evaluate(t, now)
			return
		}
		scaleDown := t != nil && !t.deleted && newView.desired >= 0 && t.view.desired > newView.desired
		t = w.newTracker(newView, false, w.scaledTimeout(scaleDown), now)
		w.setTracker(t)
		w.evaluate(t, now)
	}
}

// scaledTimeout is operationTimeout, doubled for deletions and scale-downs
// as clusterloader2 does (pod deletion used to run at half the creation
// throughput) unless its exact-timeout switch is set.
func (w *waitForControlledPods) scaledTimeout(removing bool) time.Duration {
	if _, exact := os.LookupEnv(controlledPodsExactTimeoutEnv); removing && !exact {
		return 2 * w.opTimeout
	}
	return w.opTimeout
}

// newTracker starts an operation on a controller with the pods the pod
// informer holds for it now; later pod events keep the set current.
func (w *waitForControlledPods) newTracker(v *controllerView, deleted bool, timeout time.Duration, now time.Time) *controllerTracker {
	t := &controllerTracker{view: v, deleted: deleted, started: now, timeout: timeout,
		deadline: now.Add(timeout), pods: map[string]ctrlPod{}}
	objs, err := w.podIndexer.ByIndex(cache.NamespaceIndex, v.namespace)
	if err != nil {
		klog.ErrorS(err, "Listing pods from the informer", "namespace", v.namespace)
	}
	for _, obj := range objs {
		if p, ok := obj.(*corev1.Pod); ok && v.selector.Matches(labels.Set(p.Labels)) {
			t.pods[p.Namespace+"/"+p.Name] = w.trackPod(t, p)
			w.noteFailed(p)
			if deleted && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				t.initial++
			}
		}
	}
	return t
}

func (w *waitForControlledPods) setTracker(t *controllerTracker) {
	w.trackers[t.view.key] = t
	ns := w.byNS[t.view.namespace]
	if ns == nil {
		ns = map[string]*controllerTracker{}
		w.byNS[t.view.namespace] = ns
	}
	ns[t.view.key] = t
}

// trackPod records whether a pod runs the tracker's current template:
// clusterloader2 compares the template's spec with the pod's, ignoring
// what the template leaves unset (defaults, admission additions).
func (w *waitForControlledPods) trackPod(t *controllerTracker, p *corev1.Pod) ctrlPod {
	updated := true
	if w.checkUpdated && !t.deleted && t.view.template != nil && podStateRunningReady(p) {
		updated = apiequality.Semantic.DeepDerivative(t.view.template.Spec, p.Spec)
	}
	return ctrlPod{pod: p, updated: updated}
}

func (w *waitForControlledPods) noteFailed(p *corev1.Pod) {
	if p.Status.Phase == corev1.PodFailed {
		w.failedPods[p.Namespace+"/"+p.Name] = p
	}
}

// onPod updates the pod sets of the waiting trackers in the pod's
// namespace and checks those whose pods changed.
func (w *waitForControlledPods) onPod(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		return
	}
	now := w.env.now()
	for _, t := range w.byNS[p.Namespace] {
		if t.state != ctrlOpWaiting {
			continue
		}
		_, had := t.pods[key]
		switch {
		case !deleted && t.view.selector.Matches(labels.Set(p.Labels)):
			t.pods[key] = w.trackPod(t, p)
			w.noteFailed(p)
		case had:
			delete(t.pods, key)
		default:
			continue
		}
		w.evaluate(t, now)
	}
}

// evaluate checks a waiting tracker: past its deadline it has timed out,
// whatever its pods do now; else it has reached the desired state when its
// pods say so.
func (w *waitForControlledPods) evaluate(t *controllerTracker, now time.Time) {
	if t.state != ctrlOpWaiting {
		return
	}
	if now.After(t.deadline) {
		t.state = ctrlOpTimedOut
		klog.V(2).InfoS("Controller timed out", "kind", w.kind.kind, "controller", t.view.key, "status", t.last)
		return
	}
	desired := t.view.desired
	if t.deleted {
		desired = 0
	}
	if desired < 0 {
		t.last = t.view.pending
		return
	}
	var tally podTally
	for _, tp := range t.pods {
		updated := tp.updated
		tally.add(tp.pod, func(*corev1.Pod) bool { return updated })
	}
	t.tally = tally
	if t.deleted {
		t.last = fmt.Sprintf("deleted, %d pods left (%s)", tally.Total-tally.inactive(), tally.String(0))
	} else {
		t.last = tally.String(desired)
	}
	if tally.reached(desired, w.margin) {
		t.state = ctrlOpReached
		t.took = now.Sub(t.started)
	}
}

func (w *waitForControlledPods) gather(ctx context.Context, env *Env, params Params, syncTimeout time.Duration) error {
	w.mu.Lock()
	running, kind := w.running, w.kind
	w.mu.Unlock()
	if !running {
		return fmt.Errorf("WaitForControlledPodsRunning was not started (or was stopped): give it an action: start before the gather")
	}
	// It keeps watching after the gather, as clusterloader2's does: the
	// density config gathers once after creating and again after deleting.
	// A cancelled gather ends the run, and the watching with it.
	defer func() {
		if ctx.Err() != nil {
			w.stop()
		}
	}()
	if err := w.sync(ctx, syncTimeout); err != nil {
		return err
	}

	interval := w.pollInterval
	if interval <= 0 {
		interval = controlledPodsPollInterval
	}
	// The line counts pods, not controllers: one Deployment of 3000
	// replicas is one controller at 0 % until its last pod runs. What it
	// counts (running or deleted pods) is settled by the first poll.
	var reporter *progress.Reporter
	err := waitPoll(ctx, interval, func(context.Context) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		now := env.now()
		waiting := 0
		for _, t := range w.trackers {
			// Pod and controller events check the trackers; here only
			// the clock moves.
			if t.state == ctrlOpWaiting && now.After(t.deadline) {
				w.evaluate(t, now)
			}
			if t.state == ctrlOpWaiting {
				waiting++
			}
		}
		p := controlledPodsProgress(kind.kind, w.trackers)
		if reporter == nil {
			reporter = env.progress(p.what, p.total)
		}
		reporter.Report(p.done, p.total, p.note)
		return waiting == 0, nil
	})
	if err != nil {
		return err
	}
	return w.verdict(env, params, kind)
}

// sync waits until the handler has seen every controller a fresh list
// returns, at or past the list's highest resource version: only then does
// every operation that happened before gather have a tracker.
func (w *waitForControlledPods) sync(ctx context.Context, syncTimeout time.Duration) error {
	objs, err := w.listObjects(ctx)
	if err != nil {
		return fmt.Errorf("listing %ss (%s): %w", w.kind.kind, w.sel, err)
	}
	want := map[string]bool{}
	var maxRV uint64
	for _, obj := range objs {
		v := w.kind.view(obj)
		if v == nil || !w.sel.matchesLabels(v.labels) {
			continue
		}
		want[v.key] = true
		if v.rv > maxRV {
			maxRV = v.rv
		}
	}
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	var missing []string
	err = waitPoll(sctx, 50*time.Millisecond, func(context.Context) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		missing = missing[:0]
		for k := range want {
			if !w.seen[k] {
				missing = append(missing, k)
			}
		}
		for k := range w.seen {
			if !want[k] {
				missing = append(missing, k+" (deleted)")
			}
		}
		return len(missing) == 0 && w.seenRV >= maxRV, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the %s watch did not catch up with a list within syncTimeout %v (%d listed; out of step: %s)",
			w.kind.kind, syncTimeout, len(want), waitFirstN(missing, 10))
	}
	return nil
}

// verdict fails naming each controller that did not get to its desired
// state, and the failed pods, which it also writes to the report folder.
func (w *waitForControlledPods) verdict(env *Env, params Params, kind *controllerKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var bad []string
	reached, deleted := 0, 0
	var slowest time.Duration
	for _, key := range waitSortedKeys(w.trackers) {
		t := w.trackers[key]
		switch t.state {
		case ctrlOpReached:
			if t.deleted {
				deleted++
			} else {
				reached++
			}
			if t.took > slowest {
				slowest = t.took
			}
		case ctrlOpTimedOut:
			what := "not running"
			if t.deleted {
				what = "pods not gone"
			}
			bad = append(bad, fmt.Sprintf("%s: %s after %v: %s", key, what, t.timeout, t.last))
		}
	}
	klog.V(2).InfoS("WaitForControlledPodsRunning gathered", "kind", kind.kind, "running", reached,
		"deleted", deleted, "timedOut", len(bad), "slowest", slowest, "operationTimeout", w.opTimeout)
	failed := w.failedPodsNote(env, params, kind)
	if len(bad) == 0 {
		if failed != "" {
			klog.InfoS("Controllers reached their desired state, but some pods failed on the way", "kind", kind.kind, "failedPods", failed)
		}
		return nil
	}
	msg := fmt.Sprintf("%d/%d %ss did not reach their desired state: %s", len(bad), len(w.trackers), kind.kind, waitFirstN(bad, 20))
	if failed != "" {
		msg += "; " + failed
	}
	return fmt.Errorf("%s", msg)
}

// failedPodsNote writes the failed pods to <name>_failed_pods.json in the
// report folder and returns a sentence naming them, or "" when none failed.
func (w *waitForControlledPods) failedPodsNote(env *Env, params Params, kind *controllerKind) string {
	if len(w.failedPods) == 0 {
		return ""
	}
	type failedPod struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Node      string `json:"node,omitempty"`
		Reason    string `json:"reason,omitempty"`
		Message   string `json:"message,omitempty"`
	}
	keys := waitSortedKeys(w.failedPods)
	list := make([]failedPod, 0, len(keys))
	for _, k := range keys {
		p := w.failedPods[k]
		list = append(list, failedPod{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName,
			Reason: p.Status.Reason, Message: p.Status.Message})
	}
	note := fmt.Sprintf("%d failed pods: %s", len(keys), waitFirstN(keys, 10))
	if env.ReportDir == "" {
		return note
	}
	name := "WaitForControlledPodsRunning_" + w.identifier + "_failed_pods.json"
	path := filepath.Join(env.ReportDir, name)
	body, err := json.MarshalIndent(list, "", "  ")
	if err == nil {
		if err = os.MkdirAll(env.ReportDir, 0o755); err == nil {
			err = os.WriteFile(path, append(body, '\n'), 0o644)
		}
	}
	if err != nil {
		klog.ErrorS(err, "Writing the failed pods", "path", path)
		return note
	}
	return note + " (listed in " + path + ")"
}

// informerDropManagedFields is an informer transform that forgets managed fields,
// most of an object's bytes at scale, which no measurement reads.
func informerDropManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// controllerView is what the measurement needs of a controller, whatever
// its kind.
type controllerView struct {
	key, namespace string
	rv             uint64
	labels         map[string]string
	selector       labels.Selector
	// desired is the number of running pods wanted; -1 while unknown
	// (pending says why).
	desired  int
	pending  string
	spec     any
	template *corev1.PodTemplateSpec
}

// controllerKind is one kind of controller the measurement can follow.
type controllerKind struct {
	kind, group string
	example     runtime.Object
	listWatch   func(c kubernetes.Interface, ns string) (
		func(context.Context, metav1.ListOptions) (runtime.Object, error),
		func(context.Context, metav1.ListOptions) (watch.Interface, error))
	// view returns nil for an object of another type.
	view func(obj any) *controllerView
}

// lookupControllerKind checks kind and apiVersion against the controllers
// clusterloader2 supports.
func lookupControllerKind(apiVersion, kind string) (*controllerKind, error) {
	k, ok := controllerKinds[kind]
	if !ok {
		return nil, fmt.Errorf("param kind: %q is not one of Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job", kind)
	}
	if apiVersion == "" {
		return nil, fmt.Errorf("param apiVersion: missing (e.g. apps/v1)")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("param apiVersion: %q: %w", apiVersion, err)
	}
	if gv.Group != k.group {
		return nil, fmt.Errorf("param apiVersion: %s is not a group of %s (want %s)", apiVersion, kind,
			schema.GroupVersion{Group: k.group, Version: "v1"}.String())
	}
	return k, nil
}

// newControllerView fills what every kind shares.
func newControllerView(m metav1.Object, sel *metav1.LabelSelector, spec any, tmpl *corev1.PodTemplateSpec, replicas *int32) *controllerView {
	v := &controllerView{key: m.GetNamespace() + "/" + m.GetName(), namespace: m.GetNamespace(),
		labels: m.GetLabels(), spec: spec, template: tmpl, desired: 1}
	v.rv, _ = strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	if replicas != nil {
		// The API defaults replicas to 1, as used above when unset.
		v.desired = int(*replicas)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || sel == nil {
		// No pod can match: the operation times out saying why.
		v.selector = labels.Nothing()
		v.desired, v.pending = -1, fmt.Sprintf("invalid pod selector: %v", err)
		return v
	}
	v.selector = s
	return v
}

var controllerKinds = map[string]*controllerKind{
	"Deployment": {kind: "Deployment", group: "apps", example: &appsv1.Deployment{},
		listWatch: func(c kubernetes.Interface, ns string) (func(context.Context, metav1.ListOptions) (runtime.Object, error), func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			x := c.AppsV1().Deployments(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return x.List(ctx, o) }, x.Watch
		},
		view: func(obj any) *controllerView {
			d, ok := obj.(*appsv1.Deployment)
			if !ok {
				return nil
			}
			return newControllerView(d, d.Spec.Selector, d.Spec, &d.Spec.Template, d.Spec.Replicas)
		}},
	"ReplicaSet": {kind: "ReplicaSet", group: "apps", example: &appsv1.ReplicaSet{},
		listWatch: func(c kubernetes.Interface, ns string) (func(context.Context, metav1.ListOptions) (runtime.Object, error), func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			x := c.AppsV1().ReplicaSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return x.List(ctx, o) }, x.Watch
		},
		view: func(obj any) *controllerView {
			r, ok := obj.(*appsv1.ReplicaSet)
			if !ok {
				return nil
			}
			return newControllerView(r, r.Spec.Selector, r.Spec, &r.Spec.Template, r.Spec.Replicas)
		}},
	"StatefulSet": {kind: "StatefulSet", group: "apps", example: &appsv1.StatefulSet{},
		listWatch: func(c kubernetes.Interface, ns string) (func(context.Context, metav1.ListOptions) (runtime.Object, error), func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			x := c.AppsV1().StatefulSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return x.List(ctx, o) }, x.Watch
		},
		view: func(obj any) *controllerView {
			s, ok := obj.(*appsv1.StatefulSet)
			if !ok {
				return nil
			}
			return newControllerView(s, s.Spec.Selector, s.Spec, &s.Spec.Template, s.Spec.Replicas)
		}},
	"ReplicationController": {kind: "ReplicationController", group: "", example: &corev1.ReplicationController{},
		listWatch: func(c kubernetes.Interface, ns string) (func(context.Context, metav1.ListOptions) (runtime.Object, error), func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			x := c.CoreV1().ReplicationControllers(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return x.List(ctx, o) }, x.Watch
		},
		view: func(obj any) *controllerView {
			r, ok := obj.(*corev1.ReplicationController)
			if !ok {
				return nil
			}
			var sel *metav1.LabelSelector
			if len(r.Spec.Selector) > 0 {
				sel = &metav1.LabelSelector{MatchLabels: r.Spec.Selector}
			}
			return newControllerView(r, sel, r.Spec, r.Spec.Template, r.Spec.Replicas)
		}},
	"DaemonSet": {kind: "DaemonSet", group: "apps", example: &appsv1.DaemonSet{},
		listWatch: func(c kubernetes.Interface, ns string) (func(context.Context, metav1.ListOptions) (runtime.Object, error), func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			x := c.AppsV1().DaemonSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return x.List(ctx, o) }, x.Watch
		},
		view: func(obj any) *controllerView {
			d, ok := obj.(*appsv1.DaemonSet)
			if !ok {
				return nil
			}
			v := newControllerView(d, d.Spec.Selector, d.Spec, &d.Spec.Template, nil)
			if v.desired < 0 {
				return v
			}
			// The DaemonSet controller knows how many nodes the pods fit
			// (selector, affinity, taints): its count is used once it has
			// seen this spec, rather than redoing its scheduling here.
			if d.Status.ObservedGeneration < d.Generation {
				v.desired = -1
				v.pending = fmt.Sprintf("the DaemonSet controller has not seen generation %d yet", d.Generation)
				return v
			}
			v.desired = int(d.Status.DesiredNumberScheduled)
			return v
		}},
	"Job": {kind: "Job", group: "batch", example: &batchv1.Job{},
		listWatch: func(c kubernetes.Interface, ns string) (func(context.Context, metav1.ListOptions) (runtime.Object, error), func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			x := c.BatchV1().Jobs(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return x.List(ctx, o) }, x.Watch
		},
		view: func(obj any) *controllerView {
			j, ok := obj.(*batchv1.Job)
			if !ok {
				return nil
			}
			v := newControllerView(j, j.Spec.Selector, j.Spec, &j.Spec.Template, j.Spec.Parallelism)
			if v.desired < 0 {
				return v
			}
			// clusterloader2 waits for parallelism running pods; the Job
			// controller never runs more than completions, and none once
			// the Job finished or while it is suspended.
			if j.Spec.Completions != nil && int(*j.Spec.Completions) < v.desired {
				v.desired = int(*j.Spec.Completions)
			}
			if (j.Spec.Suspend != nil && *j.Spec.Suspend) || wfJobFinished(j) != "" {
				v.desired = 0
			}
			return v
		}},
}

// wfJobFinished returns the Job's Complete or Failed condition type when one
// is true, else "".
func wfJobFinished(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			return c.Type
		}
	}
	return ""
}
