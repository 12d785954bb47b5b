package fidelity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/kscale/kscale/measurements"
)

// Env is the cluster a comparison runs in.
type Env struct {
	Client kubernetes.Interface
	Config *rest.Config
	// AuditLog is the apiserver's audit log, written with AuditPolicy.
	AuditLog string
	// Log receives a line per step; nil is quiet.
	Log io.Writer
	// Clock is the clock the run reads; nil is the real one.
	Clock clock.PassiveClock
}

func (e *Env) clock() clock.PassiveClock {
	if e.Clock != nil {
		return e.Clock
	}
	return clock.RealClock{}
}

func (e *Env) now() time.Time { return e.clock().Now() }

func (e *Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, "fidelity: "+format+"\n", args...)
	}
}

// Options size the workloads.
type Options struct {
	// BurstPods are created at once on the target's first node.
	BurstPods int
	// PatchedPods of the burst get their Ready condition set False by
	// someone else.
	PatchedPods int
	// StreamPodsPerNode pods per node are created at StreamQPS and placed
	// by the scheduler.
	StreamPodsPerNode int
	StreamQPS         float64
	// StreamNamespaces spreads the stream's pods over that many namespaces,
	// one pod in each in turn (0: one).
	StreamNamespaces int
	// Workloads are the workloads to run, in their fixed order (nil: all).
	// The status-patched and node-notready workloads act on the burst's pods.
	Workloads []string
	// Timeout bounds each wait.
	Timeout time.Duration
	// Round, when set, names the namespaces of one of several rounds.
	Round int
}

// DefaultOptions are the sizes of the small comparison.
func DefaultOptions() Options {
	return Options{BurstPods: 12, PatchedPods: 3, StreamPodsPerNode: 3, StreamQPS: 20, Timeout: 3 * time.Minute}
}

// TailOptions are the workload that finds a late tail of pod starts: only
// the stream, 3 pods per node at 20/s over 2 namespaces, on nodes that ran
// nothing before (a node's first pod of each namespace opens the watches of
// what it references).
func TailOptions() Options {
	return Options{Workloads: []string{WorkloadStream}, StreamPodsPerNode: 3, StreamQPS: 20, StreamNamespaces: 2, Timeout: 3 * time.Minute}
}

func (o *Options) validate() error {
	var problems []string
	for _, w := range o.Workloads {
		if !slices.Contains(workloads, w) {
			problems = append(problems, fmt.Sprintf("unknown workload %q (known: %s)", w, strings.Join(workloads, ", ")))
		}
	}
	if o.runs(WorkloadBurst) && (o.BurstPods < 10 || o.PatchedPods < 1 || o.PatchedPods > o.BurstPods) {
		problems = append(problems, "want at least 10 burst pods and 1..BurstPods patched")
	}
	if (o.runs(WorkloadPatched) || o.runs(WorkloadNotReady)) && !o.runs(WorkloadBurst) {
		problems = append(problems, "the status-patched and node-notready workloads need the burst")
	}
	if o.runs(WorkloadStream) && (o.StreamPodsPerNode < 1 || o.StreamQPS <= 0 || o.StreamNamespaces < 0) {
		problems = append(problems, "want a stream of at least 1 pod per node at a positive QPS")
	}
	if o.Timeout <= 0 {
		problems = append(problems, "want a timeout")
	}
	if len(problems) > 0 {
		return fmt.Errorf("fidelity options: %s", strings.Join(problems, "; "))
	}
	return nil
}

// runs reports whether the workload is one the options run.
func (o *Options) runs(workload string) bool {
	return o.Workloads == nil || slices.Contains(o.Workloads, workload)
}

// Workloads, in the order they run on each target.
const (
	WorkloadBurst    = "burst"
	WorkloadPatched  = "status-patched"
	WorkloadNotReady = "node-notready"
	WorkloadStream   = "stream"
	WorkloadDeletion = "deletion"
)

var workloads = []string{WorkloadBurst, WorkloadPatched, WorkloadNotReady, WorkloadStream, WorkloadDeletion}

// workloadLabel marks each pod with the workload that made it, runLabel
// with the run (its first namespace's name).
const (
	workloadLabel = "fidelity.kscale.io/workload"
	runLabel      = "fidelity.kscale.io/run"
)

// Observation is what one target did under the workloads.
type Observation struct {
	Kind string `json:"kind"`
	// Startup are PodStartupLatency's percentiles (ms) by workload and
	// transition ("pod_startup p99").
	Startup map[string]map[string]float64 `json:"startup"`
	// PodsPerNode is where the scheduler put the stream's pods.
	PodsPerNode map[string]int `json:"podsPerNode"`
	// Calls are the API calls per pod of each workload by verb and
	// resource; Refused those answered 403 Forbidden.
	Calls   map[string]map[string]float64 `json:"callsPerPod"`
	Refused map[string]map[string]float64 `json:"refusedPerPod,omitempty"`
	// Events per pod of each workload by reason.
	Events map[string]map[string]float64 `json:"eventsPerPod"`
	// Seconds are per-pod durations in seconds by what they time: a
	// patched status written back, a pod Ready again after its node,
	// a deleted pod gone.
	Seconds map[string][]float64 `json:"seconds"`
	// Statuses are the normalized statuses seen at each stage ("running",
	// "restored", "recovered", "terminated"), each once.
	Statuses map[string][]string `json:"-"`
	// Sequences are the distinct status sequences the burst's pods went
	// through on their way to Running (normalized, phase and conditions).
	Sequences []string `json:"sequences"`
	// FirstRead are the percentiles ("p50") by workload of the ms from a
	// pod's binding to its node's first read of it (fromBinding, readOf).
	FirstRead map[string]map[string]float64 `json:"firstReadMs,omitempty"`
	// TokenRequest are the percentiles by workload of the ms from a pod's
	// binding to its node's request for its token (fromBinding, tokenOf).
	TokenRequest map[string]map[string]float64 `json:"tokenRequestMs,omitempty"`
	// Slowest are the stream's slowest pods (slowestPods).
	Slowest []SlowPod `json:"slowestStreamPods,omitempty"`
}

// window is when a workload ran and on how many pods.
type window struct {
	name     string
	from, to time.Time
	pods     int
}

// run is one target under the workloads.
type run struct {
	env *Env
	o   Options
	t   *Target
	// ns is the run's namespace; namespaces are it and the stream's others.
	ns         string
	namespaces []string
	podNS      map[string]string // namespace of each pod by name
	rec        *recorder
	obs        *Observation
	windows    []window
	burst      []string
	stream     []string
}

// Run runs the workloads on each target in turn, in a namespace of its own,
// and compares what every target did with the first's: the first target is
// the oracle.
func Run(ctx context.Context, env Env, o Options, targets ...Target) (*Report, error) {
	return compareRuns(o, targets, func(o Options) ([]*Observation, error) {
		var obs []*Observation
		for i := range targets {
			ob, err := observe(ctx, env, o, &targets[i])
			if err != nil {
				return nil, err
			}
			obs = append(obs, ob)
		}
		return obs, nil
	})
}

// RunSideBySide runs the workloads on every target at once, in one cluster,
// and compares them as Run does. The stream of each target is created at
// StreamQPS/len(targets), so the control plane carries the rate the options
// name. Run's targets take turns; side by side, every kind meets the same
// control plane and the same machine at the same moment: on a machine that
// also runs the nodes, how fast the control plane answers (and how often the
// Node authorizer has not yet linked a pod to its node) follows what every
// node costs together, and a comparison in turns would set each kind
// against the load it makes itself.
func RunSideBySide(ctx context.Context, env Env, o Options, targets ...Target) (*Report, error) {
	return compareRuns(o, targets, func(o Options) ([]*Observation, error) {
		o.StreamQPS /= float64(len(targets))
		obs := make([]*Observation, len(targets))
		errs := make([]error, len(targets))
		var wg sync.WaitGroup
		for i := range targets {
			wg.Go(func() { obs[i], errs[i] = observe(ctx, env, o, &targets[i]) })
		}
		wg.Wait()
		return obs, errors.Join(errs...)
	})
}

// compareRuns checks the options and targets, observes the targets with
// observeAll, and compares each with the first.
func compareRuns(o Options, targets []Target, observeAll func(Options) ([]*Observation, error)) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if len(targets) < 2 {
		return nil, errors.New("fidelity: compare at least two targets")
	}
	obs, err := observeAll(o)
	if err != nil {
		return nil, err
	}
	return compare(obs[0], obs[1:]...), nil
}

// observe runs the workloads on one target and counts its calls in env's
// audit log.
func observe(ctx context.Context, env Env, o Options, t *Target) (*Observation, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	r := &run{env: &env, o: o, t: t, ns: o.namespace(t), podNS: map[string]string{}, obs: newObservation(t.Kind)}
	r.namespaces = []string{r.ns}
	for k := 2; k <= o.StreamNamespaces && o.runs(WorkloadStream); k++ {
		r.namespaces = append(r.namespaces, fmt.Sprintf("%s-%d", r.ns, k))
	}
	if err := r.do(ctx); err != nil {
		return nil, fmt.Errorf("fidelity on %s nodes: %w", t.Kind, err)
	}
	calls, err := readAudit(env.AuditLog)
	if err != nil {
		return nil, err
	}
	countCalls(r.obs, calls, t, r.namespaces, r.windows)
	for workload, names := range map[string][]string{WorkloadBurst: r.burst, WorkloadStream: r.stream} {
		if ms := fromBinding(calls, t, r.podNS, names, readOf); len(ms) > 0 {
			r.obs.FirstRead[workload] = percentiles(ms)
		}
		if ms := fromBinding(calls, t, r.podNS, names, tokenOf); len(ms) > 0 {
			r.obs.TokenRequest[workload] = percentiles(ms)
		}
	}
	records := map[string]*podRecord{}
	for _, name := range r.stream {
		records[name] = r.rec.pod(name)
	}
	r.obs.Slowest = slowestPods(calls, records, r.podNS, r.stream, slowestCount)
	return r.obs, nil
}

// namespace is where a target's workloads run.
func (o *Options) namespace(t *Target) string {
	if o.Round > 0 {
		return fmt.Sprintf("fidelity-%s-%d", t.Kind, o.Round)
	}
	return "fidelity-" + t.Kind
}

func newObservation(kind string) *Observation {
	return &Observation{
		Kind: kind, Startup: map[string]map[string]float64{}, PodsPerNode: map[string]int{},
		Calls: map[string]map[string]float64{}, Refused: map[string]map[string]float64{},
		Events: map[string]map[string]float64{}, Seconds: map[string][]float64{}, Statuses: map[string][]string{},
		FirstRead: map[string]map[string]float64{}, TokenRequest: map[string]map[string]float64{},
	}
}

// percentiles are the p50, p90 and p99 of ms.
func percentiles(ms []float64) map[string]float64 {
	return map[string]float64{"p50": quantile(ms, 0.5), "p90": quantile(ms, 0.9), "p99": quantile(ms, 0.99)}
}

func (r *run) do(ctx context.Context) error {
	defer func() {
		// A failed run leaves its pods; the namespaces go either way.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for _, ns := range r.namespaces {
			_ = r.env.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		}
	}()
	for _, ns := range r.namespaces {
		if err := r.createNamespace(ctx, ns); err != nil {
			return err
		}
	}
	rec, err := startRecorder(ctx, r.env.Client, runLabel+"="+r.ns, r.env.clock())
	if err != nil {
		return err
	}
	r.rec = rec
	defer rec.stop()
	for _, step := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{WorkloadBurst, r.burstPods},
		{WorkloadPatched, r.patchStatuses},
		{WorkloadNotReady, r.failNode},
		{WorkloadStream, r.streamPods},
		{WorkloadDeletion, r.deletePods},
	} {
		if !r.o.runs(step.name) {
			continue
		}
		r.env.logf("%s nodes: %s", r.t.Kind, step.name)
		if err := step.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	return r.countEvents(ctx)
}

func (r *run) createNamespace(ctx context.Context, name string) error {
	c := r.env.Client.CoreV1()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kscale.io/fidelity": r.t.Kind}}}
	if _, err := c.Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	// Pods need the namespace's default service account.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, r.o.Timeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// pod is a pause pod of a workload in namespace with the target's node
// selector.
func (r *run) pod(namespace, name, workload string, selector map[string]string) *v1.Pod {
	sel := map[string]string{r.t.LabelKey: r.t.LabelValue}
	for k, v := range selector {
		sel[k] = v
	}
	r.podNS[name] = namespace
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{workloadLabel: workload, runLabel: r.ns}},
		Spec: v1.PodSpec{
			NodeSelector: sel,
			Containers: []v1.Container{{
				Name: "pause", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("10Mi"),
				}},
			}},
		},
	}
}

// latency starts PodStartupLatency on a workload's pods; its stop gathers
// the percentiles into the observation.
func (r *run) latency(ctx context.Context, workload string) (func() error, error) {
	m := measurements.NewManager(&measurements.Env{Client: r.env.Client, Config: r.env.Config, Clock: r.env.Clock})
	params := func(action string) map[string]any {
		return map[string]any{"action": action, "labelSelector": workloadLabel + "=" + workload + "," + runLabel + "=" + r.ns, "threshold": "1h"}
	}
	if err := m.Execute(ctx, "PodStartupLatency", workload, params("start")); err != nil {
		return nil, err
	}
	return func() error {
		if err := m.Execute(ctx, "PodStartupLatency", workload, params("gather")); err != nil {
			return err
		}
		got := map[string]float64{}
		for _, s := range m.Summaries() {
			if s.PerfData == nil || s.FileName() != "PodStartupLatency_"+workload {
				continue
			}
			for _, item := range s.PerfData.DataItems {
				for _, p := range []string{"Perc50", "Perc90", "Perc99"} {
					got[item.Labels["Metric"]+" p"+strings.TrimPrefix(p, "Perc")] = item.Data[p]
				}
			}
		}
		if len(got) == 0 {
			return fmt.Errorf("PodStartupLatency measured no %s pod", workload)
		}
		r.obs.Startup[workload] = got
		return nil
	}, nil
}

// createPods creates pods, interval apart (0: all at once).
func (r *run) createPods(ctx context.Context, pods []*v1.Pod, interval time.Duration) error {
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		if interval > 0 && i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(interval):
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.env.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// settle gives the nodes time to write what they write after a pod is
// Running, so a workload's calls and statuses are complete.
const settle = 3 * time.Second

func (r *run) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// burstPods creates BurstPods pods at once on the first node.
func (r *run) burstPods(ctx context.Context) error {
	gather, err := r.latency(ctx, WorkloadBurst)
	if err != nil {
		return err
	}
	from := r.env.now()
	var pods []*v1.Pod
	for i := range r.o.BurstPods {
		p := r.pod(r.ns, fmt.Sprintf("burst-%02d", i), WorkloadBurst, map[string]string{"kubernetes.io/hostname": r.t.Nodes[0]})
		pods = append(pods, p)
		r.burst = append(r.burst, p.Name)
	}
	if err := r.createPods(ctx, pods, 0); err != nil {
		return err
	}
	if err := r.rec.waitAll(ctx, r.burst, r.o.Timeout, "Running and Ready", running); err != nil {
		return err
	}
	if err := r.sleep(ctx, settle); err != nil {
		return err
	}
	if err := gather(); err != nil {
		return err
	}
	r.windows = append(r.windows, window{WorkloadBurst, from, r.env.now(), len(pods)})
	seqs := map[string]bool{}
	for _, name := range r.burst {
		rec := r.rec.pod(name)
		r.keepStatus("running", rec.last().status)
		seqs[sequence(rec)] = true
	}
	r.obs.Sequences = slices.Sorted(maps.Keys(seqs))
	return nil
}

// sequence is the pod's way to Running: each distinct phase and set of
// conditions it was seen with, in order.
func sequence(rec *podRecord) string {
	var steps []string
	for _, s := range rec.statuses {
		step := string(s.status.Phase)
		for _, c := range s.status.Conditions {
			step += fmt.Sprintf(" %s=%s", c.Type, c.Status)
			if c.Reason != "" {
				step += "(" + c.Reason + ")"
			}
		}
		if s.status.PodIP != "" {
			step += " +IP"
		}
		if len(steps) == 0 || steps[len(steps)-1] != step {
			steps = append(steps, step)
		}
		if s.status.Phase == v1.PodRunning && podReady(&s.status) {
			break
		}
	}
	return strings.Join(steps, "\n  → ")
}

func (r *run) keepStatus(stage string, s v1.PodStatus) {
	text := statusText(s)
	for _, have := range r.obs.Statuses[stage] {
		if have == text {
			return
		}
	}
	r.obs.Statuses[stage] = append(r.obs.Statuses[stage], text)
}

// patchStatuses sets Ready=False on PatchedPods burst pods, as a controller
// or a user might, and times how long each node takes to write its own
// status back.
func (r *run) patchStatuses(ctx context.Context) error {
	from := r.env.now()
	patch := []byte(`{"status":{"conditions":[{"type":"Ready","status":"False","reason":"FidelityCheck","message":"set by the fidelity check"}]}}`)
	names := r.burst[:r.o.PatchedPods]
	patched := map[string]time.Time{}
	for _, name := range names {
		patched[name] = r.env.now()
		if _, err := r.env.Client.CoreV1().Pods(r.ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("patching the status of %s: %w", name, err)
		}
	}
	err := r.rec.waitAll(ctx, names, r.o.Timeout, "Ready again after the patch", func(n string, rec *podRecord) bool {
		notReady := rec.readyAt(patched[n], false)
		return !notReady.IsZero() && !rec.readyAt(notReady, true).IsZero()
	})
	if err != nil {
		return err
	}
	for _, n := range names {
		rec := r.rec.pod(n)
		notReady := rec.readyAt(patched[n], false)
		back := rec.readyAt(notReady, true)
		r.obs.Seconds["status written back"] = append(r.obs.Seconds["status written back"], back.Sub(patched[n]).Seconds())
		r.keepStatus("restored", rec.last().status)
	}
	if err := r.sleep(ctx, settle); err != nil {
		return err
	}
	r.windows = append(r.windows, window{WorkloadPatched, from, r.env.now(), len(names)})
	return nil
}

// failNode stops the burst's node until the node lifecycle controller has
// marked it and its pods not ready and tainted it NoExecute, lets it go on,
// and times each pod's Ready after the node's. Waiting for the taint makes
// the outage one the controller has fully acted on, whichever kind the node
// is: its tainting pass is rate limited and skips a node that is Ready
// again, so a node back within that pass would otherwise miss the taint,
// and its pods the taint eviction controller's events, by timing alone.
func (r *run) failNode(ctx context.Context) error {
	node := r.t.Nodes[0]
	from := r.env.now()
	if err := r.t.Fail(ctx, []string{node}); err != nil {
		return fmt.Errorf("failing node %s: %w", node, err)
	}
	failed := r.env.now()
	err := r.rec.waitAll(ctx, r.burst, r.o.Timeout, "marked not ready with their node", func(_ string, rec *podRecord) bool {
		return !rec.readyAt(failed, false).IsZero()
	})
	if err == nil {
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, r.o.Timeout, true, func(ctx context.Context) (bool, error) {
			return nodeTaintedNoExecute(ctx, r.env.Client, node)
		})
		if err != nil {
			err = fmt.Errorf("waiting for node %s to be tainted NoExecute: %w", node, err)
		}
	}
	if err != nil {
		_ = r.t.Recover(ctx, []string{node})
		return err
	}
	if err := r.t.Recover(ctx, []string{node}); err != nil {
		return fmt.Errorf("recovering node %s: %w", node, err)
	}
	var ready time.Time
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, r.o.Timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := nodeReady(ctx, r.env.Client, node)
		if ok {
			ready = r.env.now()
		}
		return ok, err
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to be Ready again: %w", node, err)
	}
	// A pod may be Ready again before the node is seen Ready: its kubelet
	// writes the status back as soon as it runs again.
	readyAgain := func(rec *podRecord) time.Time { return rec.readyAt(rec.readyAt(failed, false), true) }
	err = r.rec.waitAll(ctx, r.burst, r.o.Timeout, "Ready again after their node", func(_ string, rec *podRecord) bool {
		return !readyAgain(rec).IsZero()
	})
	if err != nil {
		return err
	}
	for _, n := range r.burst {
		after := max(0, readyAgain(r.rec.pod(n)).Sub(ready))
		r.obs.Seconds["ready after node"] = append(r.obs.Seconds["ready after node"], after.Seconds())
	}
	if err := r.sleep(ctx, settle); err != nil {
		return err
	}
	for _, n := range r.burst {
		r.keepStatus("recovered", r.rec.pod(n).last().status)
	}
	r.windows = append(r.windows, window{WorkloadNotReady, from, r.env.now(), len(r.burst)})
	return nil
}

// streamPods creates StreamPodsPerNode pods per node at StreamQPS for the
// scheduler to place.
func (r *run) streamPods(ctx context.Context) error {
	gather, err := r.latency(ctx, WorkloadStream)
	if err != nil {
		return err
	}
	from := r.env.now()
	var pods []*v1.Pod
	for i := range r.o.StreamPodsPerNode * len(r.t.Nodes) {
		p := r.pod(r.namespaces[i%len(r.namespaces)], fmt.Sprintf("stream-%03d", i), WorkloadStream, nil)
		pods = append(pods, p)
		r.stream = append(r.stream, p.Name)
	}
	if err := r.createPods(ctx, pods, time.Duration(float64(time.Second)/r.o.StreamQPS)); err != nil {
		return err
	}
	if err := r.rec.waitAll(ctx, r.stream, r.o.Timeout, "Running and Ready", running); err != nil {
		return err
	}
	if err := r.sleep(ctx, settle); err != nil {
		return err
	}
	if err := gather(); err != nil {
		return err
	}
	r.windows = append(r.windows, window{WorkloadStream, from, r.env.now(), len(pods)})
	for _, n := range r.t.Nodes {
		r.obs.PodsPerNode[n] = 0
	}
	for _, name := range r.stream {
		rec := r.rec.pod(name)
		r.obs.PodsPerNode[rec.node]++
		r.keepStatus("running", rec.last().status)
	}
	return nil
}

// deletePods deletes every pod at once, with the default grace period, and
// times each until it is gone.
func (r *run) deletePods(ctx context.Context) error {
	from := r.env.now()
	names := append(append([]string(nil), r.burst...), r.stream...)
	deleted := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			deleted[n] = r.env.now()
			mu.Unlock()
			err := r.env.Client.CoreV1().Pods(r.podNS[n]).Delete(ctx, n, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := r.rec.waitAll(ctx, names, r.o.Timeout, "gone", func(_ string, rec *podRecord) bool { return !rec.gone.IsZero() }); err != nil {
		return err
	}
	for _, n := range names {
		rec := r.rec.pod(n)
		r.obs.Seconds["gone after delete"] = append(r.obs.Seconds["gone after delete"], rec.gone.Sub(deleted[n]).Seconds())
		r.keepStatus("terminated", rec.last().status)
		for _, s := range rec.statuses {
			if s.deleting {
				r.keepStatus("deleting", s.status)
			}
		}
	}
	if err := r.sleep(ctx, settle); err != nil {
		return err
	}
	r.windows = append(r.windows, window{WorkloadDeletion, from, r.env.now(), len(names)})
	return nil
}

// countEvents counts the events of each workload's pods by reason.
func (r *run) countEvents(ctx context.Context) error {
	var events []v1.Event
	for _, ns := range r.namespaces {
		list, err := r.env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing the events of %s: %w", ns, err)
		}
		events = append(events, list.Items...)
	}
	pods := map[string]int{WorkloadBurst: len(r.burst), WorkloadStream: len(r.stream)}
	for _, ev := range events {
		if ev.InvolvedObject.Kind != "Pod" || ev.Source.Component == "default-scheduler" {
			continue
		}
		w := WorkloadStream
		if strings.HasPrefix(ev.InvolvedObject.Name, "burst-") {
			w = WorkloadBurst
		}
		if r.obs.Events[w] == nil {
			r.obs.Events[w] = map[string]float64{}
		}
		r.obs.Events[w][ev.Reason] += float64(ev.Count) / float64(pods[w])
	}
	return nil
}

// countCalls fills the observation's calls per pod from the audit log.
func countCalls(ob *Observation, calls []call, t *Target, namespaces []string, windows []window) {
	for _, w := range windows {
		all, refused := callCounts(calls, t, namespaces, w.from, w.to)
		per := map[string]float64{}
		for k, n := range all {
			per[k] = float64(n) / float64(w.pods)
		}
		ob.Calls[w.name] = per
		if len(refused) > 0 {
			ob.Refused[w.name] = map[string]float64{}
			for k, n := range refused {
				ob.Refused[w.name][k] = float64(n) / float64(w.pods)
			}
		}
	}
}
