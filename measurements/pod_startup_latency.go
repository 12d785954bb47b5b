package measurements

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register(podStartupLatencyMethod, SLO, func(id string) Measurement { return &podStartupLatency{identifier: id} })
}

const (
	podStartupLatencyMethod = "PodStartupLatency"
	// defaultPodStartupThreshold is the pod startup SLO: p99 ≤ 5s.
	defaultPodStartupThreshold = 5 * time.Second
	// slowestPodsKept is how many pods the slowest-pods file lists.
	slowestPodsKept = 100
	// podStartupMetric is the transition the thresholds judge.
	podStartupMetric = "pod_startup"
)

// podPhaseTime reads one phase's time off a tracked pod.
type podPhaseTime func(*podTimes) time.Time

func timesCreated(p *podTimes) time.Time   { return p.Created }
func timesScheduled(p *podTimes) time.Time { return p.Scheduled }
func timesRunning(p *podTimes) time.Time   { return p.Running }
func timesWatched(p *podTimes) time.Time   { return p.Watched }

// podStartupTransitions are the reported transitions, in report order,
// under the names users know from clusterloader2 and the SLO documents.
var podStartupTransitions = []struct {
	name     string
	from, to podPhaseTime
}{
	{"create_to_schedule", timesCreated, timesScheduled},
	{"schedule_to_run", timesScheduled, timesRunning},
	{"run_to_watch", timesRunning, timesWatched},
	{"schedule_to_watch", timesScheduled, timesWatched},
	{"create_to_run", timesCreated, timesRunning},
	{podStartupMetric, timesCreated, timesWatched},
}

// podStartupPercentiles names the judged percentiles, in order, as
// Headline, Thresholds and the perc<N>Threshold params name them.
var podStartupPercentiles = []struct {
	label string
	perc  float64
}{{"p50", 50}, {"p90", 90}, {"p99", 99}}

// podStartupLimits are the thresholds of pod_startup. The SLO is on p99:
// threshold judges p99 unless perc99Threshold overrides it; p50 and p90 are
// judged only when perc50Threshold or perc90Threshold is given (the names
// clusterloader2 gives them).
type podStartupLimits struct {
	threshold time.Duration
	perc      [3]time.Duration // p50, p90, p99; 0 means not given
}

// limit is the threshold of the i-th of podStartupPercentiles, 0 for none.
func (l podStartupLimits) limit(i int) time.Duration {
	if l.perc[i] > 0 {
		return l.perc[i]
	}
	if i == len(l.perc)-1 {
		return l.threshold
	}
	return 0
}

// read returns the limits with the params' thresholds over l's. Both
// actions take them: clusterloader2 configs put PodStartupLatency's on
// start, and a gather may change them.
func (l podStartupLimits) read(params Params) (podStartupLimits, error) {
	var err error
	if l.threshold, err = podStartupDuration(params, "threshold", l.threshold); err != nil {
		return l, err
	}
	for i, key := range []string{"perc50Threshold", "perc90Threshold", "perc99Threshold"} {
		if l.perc[i], err = podStartupDuration(params, key, l.perc[i]); err != nil {
			return l, err
		}
	}
	return l, nil
}

// podStartupDuration is a duration param that must be above zero when given:
// a zero threshold would fail every run.
func podStartupDuration(params Params, key string, def time.Duration) (time.Duration, error) {
	d, err := params.Duration(key, def)
	if err != nil {
		return 0, err
	}
	if _, given := params[key]; given && d <= 0 {
		return 0, fmt.Errorf("param %s: %s must be above zero", key, d)
	}
	return d, nil
}

// podStartupLatency is the PodStartupLatency method: from create to
// observed running of the pods created between its start and gather,
// split as clusterloader2 splits it (all pods, stateless, stateful).
//
// Where each time comes from, and its precision:
//   - create: metadata.creationTimestamp (apiserver clock);
//   - schedule: the PodScheduled=True condition's lastTransitionTime, which
//     the apiserver stamps when it stores the scheduler's binding;
//     clusterloader2 reads the scheduler's Scheduled event instead, whose
//     time is finer but which expires with the events' TTL and costs a
//     large LIST at gather. A pod without that time gets the local time its
//     nodeName was first seen;
//   - run: the latest state.running.startedAt of the pod's containers
//     (kubelet clock);
//   - watch: the local clock (Env.Now) when the informer first delivered
//     the pod Running with every container running.
//
// The API keeps the first three in whole seconds; each is narrowed to the
// moment the informer saw it when that falls within its second
// (refineStamp), so transitions are good to the watch's delivery delay
// instead of ±1s. run_to_watch is therefore 0 unless the status reached the
// watch more than a second after the container started — which is what it
// is for. Clock skew between this machine and the apiserver or kubelet
// leaves the stamps as they are.
type podStartupLatency struct {
	identifier string
	sel        watchSelector
	limits     podStartupLimits
	tracker    *podTracker
}

// Execute runs action start (begin tracking the selected pods) or gather
// (summarise them and stop).
func (m *podStartupLatency) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, m.start(ctx, env, params)
	}
	return m.gather(params)
}

func (m *podStartupLatency) start(ctx context.Context, env *Env, params Params) error {
	if m.tracker != nil && !m.tracker.stopped() {
		// clusterloader2 lets a second start pass; the first one's
		// selection and thresholds stay.
		klog.InfoS("PodStartupLatency already started; this start is ignored", "selector", m.sel.String())
		return nil
	}
	sel, err := parseWatchSelector(params)
	if err != nil {
		return err
	}
	limits, err := podStartupLimits{threshold: defaultPodStartupThreshold}.read(params)
	if err != nil {
		return err
	}
	tracker, err := startPodTracker(ctx, env, podStartupLatencyMethod, sel)
	if err != nil {
		return fmt.Errorf("starting PodStartupLatency: %w", err)
	}
	m.sel, m.limits, m.tracker = sel, limits, tracker
	return nil
}

func (m *podStartupLatency) gather(params Params) ([]Summary, error) {
	if m.tracker == nil {
		return nil, fmt.Errorf("PodStartupLatency: gather without a start")
	}
	limits, err := m.limits.read(params)
	if err != nil {
		return nil, err
	}
	if m.tracker.stopped() {
		klog.InfoS("PodStartupLatency: the run ended before gather; summarising the pods seen until then", "selector", m.sel.String())
	}
	m.tracker.stop()
	pods, ignored := m.tracker.snapshot()
	m.tracker = nil
	klog.V(2).InfoS("Gathering PodStartupLatency", "selector", m.sel.String(), "pods", len(pods), "ignoredBeforeStart", ignored)
	return m.summarise(pods, ignored, limits)
}

// podStartupGroup is one summary's pods: clusterloader2 writes one for all
// pods and one each for the stateless and the stateful ones.
type podStartupGroup struct {
	// prefix starts the summary's name; label names the group in
	// violations, noun in reasons.
	prefix, label, noun string
	member              func(*podTimes) bool
}

var podStartupGroups = []podStartupGroup{
	{"", "all pods", "pods", func(*podTimes) bool { return true }},
	{"Stateless", "stateless", "stateless pods", func(p *podTimes) bool { return p.Stateless }},
	{"Stateful", "stateful", "stateful pods", func(p *podTimes) bool { return !p.Stateless }},
}

// summaryName is a group's summary name as clusterloader2 writes it:
// <prefix>PodStartupLatency_<identifier>.
func (m *podStartupLatency) summaryName(prefix string) string {
	if m.identifier == "" {
		if prefix == "" {
			return "" // the Manager's Method_Identifier is that very name
		}
		return prefix + podStartupLatencyMethod
	}
	return prefix + podStartupLatencyMethod + "_" + m.identifier
}

// slowestPodsFileName names the slowest-pods file after the all-pods
// summary.
func (m *podStartupLatency) slowestPodsFileName() string {
	if m.identifier == "" {
		return podStartupLatencyMethod + "_slowest_pods.json"
	}
	return podStartupLatencyMethod + "_" + m.identifier + "_slowest_pods.json"
}

// summarise makes the three summaries and the verdict. A summary whose
// group has no pod says "not measured" on its own; the call is "not
// measured" only when no pod at all could be measured.
func (m *podStartupLatency) summarise(pods []podTimes, ignored int, limits podStartupLimits) ([]Summary, error) {
	// A pod deleted before it ran was neither measured nor left pending:
	// it leaves the counts.
	live := pods[:0]
	for _, p := range pods {
		if !(p.Deleted && p.Watched.IsZero()) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil, notMeasuredf("no pods matched %s (only pods created after the start count; %d earlier ones ignored)", m.sel, ignored)
	}
	var summaries []Summary
	var items []string
	for gi, g := range podStartupGroups {
		var members, measured []*podTimes
		for i := range live {
			p := &live[i]
			if !g.member(p) {
				continue
			}
			members = append(members, p)
			if !p.Watched.IsZero() {
				measured = append(measured, p)
			}
		}
		s := Summary{Name: m.summaryName(g.prefix)}
		notRunning := len(members) - len(measured)
		switch {
		case len(members) == 0:
			// Nothing of this group existed: the all-pods summary judged
			// every pod there was.
			s.Verdict, s.Reason, s.Empty = NotMeasured, fmt.Sprintf("no %s among the %d pods that matched %s", g.noun, len(live), m.sel), true
		case len(measured) == 0:
			s.Verdict, s.Reason = NotMeasured, fmt.Sprintf("%d %s matched %s, none was running with all containers started at gather", len(members), g.noun, m.sel)
			s.Headline = map[string]float64{"pods": 0, "pods not running": float64(notRunning)}
		default:
			s.Violations = m.fillSummary(&s, g, measured, notRunning, limits)
			s.Verdict = Pass
			if len(s.Violations) > 0 {
				s.Verdict = Violated
			}
			items = append(items, s.Violations...)
		}
		if notRunning > 0 {
			logPodStartupNotRunning(g.label, members)
		}
		if gi == 0 && len(measured) > 0 {
			body, err := slowestPodsJSON(measured)
			if err != nil {
				return nil, fmt.Errorf("PodStartupLatency: encoding the slowest pods: %w", err)
			}
			s.Files = map[string][]byte{m.slowestPodsFileName(): body}
		}
		summaries = append(summaries, s)
	}
	if summaries[0].Verdict == NotMeasured {
		return summaries, &NotMeasuredError{Reason: summaries[0].Reason}
	}
	return summaries, violations(items)
}

// podStartupCDFPoints bounds the pod_startup CDF kept for the report's
// plot: enough for a smooth curve, small at 150 000 pods.
const podStartupCDFPoints = 200

// fillSummary sets a measured group's PerfData, Headline and Thresholds
// and returns its violations.
func (m *podStartupLatency) fillSummary(s *Summary, g podStartupGroup, measured []*podTimes, notRunning int, limits podStartupLimits) []string {
	s.PerfData = &metrics.PerfData{Version: metrics.PhaseLatencyVersion}
	var startup metrics.Percentiles
	for _, tr := range podStartupTransitions {
		samples := make([]float64, 0, len(measured))
		for _, p := range measured {
			from, to := tr.from(p), tr.to(p)
			if from.IsZero() || to.IsZero() {
				continue
			}
			samples = append(samples, trackerMs(to.Sub(from)))
		}
		if len(samples) == 0 {
			continue
		}
		pc := metrics.NearestRankPercentiles(samples)
		if tr.name == podStartupMetric {
			startup = pc
			s.Series = map[string][]metrics.Point{podStartupMetric + " CDF": metrics.CDF(samples, podStartupCDFPoints)}
		}
		s.PerfData.DataItems = append(s.PerfData.DataItems, metrics.DataItem{
			Data:   pc.Data(),
			Unit:   "ms",
			Labels: map[string]string{"Metric": tr.name},
		})
	}
	values := []float64{startup.Perc50, startup.Perc90, startup.Perc99}
	s.Headline = map[string]float64{"pods": float64(len(measured)), "pods not running": float64(notRunning)}
	s.Thresholds = map[string]float64{}
	var out []string
	for i, pc := range podStartupPercentiles {
		key := podStartupMetric + " " + pc.label + " ms"
		s.Headline[key] = values[i]
		limit := limits.limit(i)
		if limit <= 0 {
			continue
		}
		s.Thresholds[key] = trackerMs(limit)
		if values[i] > trackerMs(limit) {
			out = append(out, fmt.Sprintf("%s %s %s > %s (%s, %d pods)",
				podStartupMetric, pc.label, trackerDurationText(values[i]), limit, g.label, len(measured)))
		}
	}
	return out
}

// logPodStartupNotRunning names a few of a group's pods that had not started at
// gather, so that a user can look at them.
func logPodStartupNotRunning(label string, members []*podTimes) {
	var names []string
	n := 0
	for _, p := range members {
		if !p.Watched.IsZero() {
			continue
		}
		n++
		if len(names) < 10 {
			names = append(names, p.Namespace+"/"+p.Name)
		}
	}
	klog.InfoS("PodStartupLatency: pods not running at gather, left out of the percentiles", "group", label, "count", n, "some", strings.Join(names, ","))
}

// slowestPodLine is one line of the slowest-pods file: every time the pod's
// startup was measured from, and each transition in ms.
type slowestPodLine struct {
	Namespace     string             `json:"namespace"`
	Name          string             `json:"name"`
	Node          string             `json:"node"`
	Stateless     bool               `json:"stateless"`
	Created       time.Time          `json:"created"`
	Scheduled     time.Time          `json:"scheduled"`
	ScheduledBy   string             `json:"scheduledBy"`
	Running       time.Time          `json:"running"`
	Watched       time.Time          `json:"watched"`
	TransitionsMs map[string]float64 `json:"transitionsMs"`
}

// slowestPodsJSON lists the slowest measured pods by pod_startup, slowest
// first (ties by namespace and name, so the file is stable).
func slowestPodsJSON(measured []*podTimes) ([]byte, error) {
	sorted := append([]*podTimes(nil), measured...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		da, db := a.Watched.Sub(a.Created), b.Watched.Sub(b.Created)
		if da != db {
			return da > db
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	if len(sorted) > slowestPodsKept {
		sorted = sorted[:slowestPodsKept]
	}
	out := make([]slowestPodLine, 0, len(sorted))
	for _, p := range sorted {
		sp := slowestPodLine{
			Namespace: p.Namespace, Name: p.Name, Node: p.Node, Stateless: p.Stateless,
			Created: p.Created.UTC(), Scheduled: p.Scheduled.UTC(), ScheduledBy: p.ScheduledBy,
			Running: p.Running.UTC(), Watched: p.Watched.UTC(),
			TransitionsMs: map[string]float64{},
		}
		for _, tr := range podStartupTransitions {
			from, to := tr.from(p), tr.to(p)
			if !from.IsZero() && !to.IsZero() {
				sp.TransitionsMs[tr.name] = trackerMs(to.Sub(from))
			}
		}
		out = append(out, sp)
	}
	body, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(body, '\n'), nil
}
