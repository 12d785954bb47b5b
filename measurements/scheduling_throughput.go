package measurements

import (
	"context"
	"fmt"
	"sort"
	"time"

	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register(schedulingThroughputMethod, SLO, func(string) Measurement { return &schedulingThroughput{} })
}

const (
	schedulingThroughputMethod = "SchedulingThroughput"
	// defaultSchedulingInterval is clusterloader2's default window (5s),
	// kept so that thresholds written for clusterloader2 configs mean the
	// same here.
	defaultSchedulingInterval = 5 * time.Second
	// schedulingSeries is the report plot of the per-window rates.
	schedulingSeries = "scheduled pods/s"
)

// schedulingThroughput is the SchedulingThroughput method: pods scheduled
// per second over consecutive windows, from the pods created between its
// start and gather.
//
// The rates come from each pod's own schedule time (the PodScheduled
// condition's lastTransitionTime, the apiserver's time of the binding), not
// from counting scheduled pods every interval as clusterloader2 does: a
// periodic count adds a zero window for every idle interval before the
// first pod and after the last one, which drags the percentiles down
// with the length of the measurement rather than the scheduler's speed.
// Windows run from the first scheduled pod to the last one; an idle window
// between them is kept, as the scheduler was idle then.
type schedulingThroughput struct {
	sel       watchSelector
	interval  time.Duration
	threshold float64
	tracker   *podTracker
}

// Execute runs action start (begin tracking the selected pods) or gather
// (summarise the rates and stop).
func (m *schedulingThroughput) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, m.start(ctx, env, params)
	}
	return m.gather(params)
}

// schedulingInterval reads the window length. clusterloader2 spells the
// param "measurmentInterval"; that spelling is accepted too so its configs
// carry over.
//
// Windows shorter than a second, or not a whole number of seconds, are
// refused: lastTransitionTime travels in whole seconds, and only a binding
// the watch delivered within that second gets a finer time (refineStamp);
// the others pile up at the end of their second. A 500ms window would then
// alternate between a second's late pods and none, and a 1.5s window between
// one and two seconds' worth; either reports rates the scheduler never had.
func schedulingInterval(params Params, def time.Duration) (time.Duration, error) {
	key := "measurementInterval"
	if _, ok := params[key]; !ok {
		if _, ok := params["measurmentInterval"]; ok {
			key = "measurmentInterval"
		}
	}
	d, err := params.Duration(key, def)
	if err != nil {
		return 0, err
	}
	if d < time.Second || d%time.Second != 0 {
		return 0, fmt.Errorf("param %s: %s must be a whole number of seconds, at least 1s: schedule times have one-second granularity", key, d)
	}
	return d, nil
}

// schedulingThreshold reads the minimum max rate, in pods/s; 0 is none.
func schedulingThreshold(params Params, def float64) (float64, error) {
	t, err := params.Float("threshold", def)
	if err != nil {
		return 0, err
	}
	if t < 0 {
		return 0, fmt.Errorf("param threshold: %v pods/s is negative", t)
	}
	return t, nil
}

func (m *schedulingThroughput) start(ctx context.Context, env *Env, params Params) error {
	if m.tracker != nil && !m.tracker.stopped() {
		// clusterloader2 lets a second start pass; the first one's
		// selection stays.
		klog.InfoS("SchedulingThroughput already started; this start is ignored", "selector", m.sel.String())
		return nil
	}
	sel, err := parseWatchSelector(params)
	if err != nil {
		return err
	}
	interval, err := schedulingInterval(params, defaultSchedulingInterval)
	if err != nil {
		return err
	}
	// clusterloader2 reads threshold at gather; taking it at start too
	// lets a config keep all of an identifier's params on one entry.
	threshold, err := schedulingThreshold(params, 0)
	if err != nil {
		return err
	}
	tracker, err := startPodTracker(ctx, env, schedulingThroughputMethod, sel)
	if err != nil {
		return fmt.Errorf("starting SchedulingThroughput: %w", err)
	}
	m.sel, m.interval, m.threshold, m.tracker = sel, interval, threshold, tracker
	return nil
}

func (m *schedulingThroughput) gather(params Params) ([]Summary, error) {
	if m.tracker == nil {
		return nil, fmt.Errorf("SchedulingThroughput: gather without a start")
	}
	threshold, err := schedulingThreshold(params, m.threshold)
	if err != nil {
		return nil, err
	}
	// enableViolations: false reports the rates without judging them, as
	// in clusterloader2.
	enforce, err := params.Bool("enableViolations", true)
	if err != nil {
		return nil, err
	}
	if m.tracker.stopped() {
		klog.InfoS("SchedulingThroughput: the run ended before gather; summarising the pods seen until then", "selector", m.sel.String())
	}
	m.tracker.stop()
	pods, ignored := m.tracker.snapshot()
	m.tracker = nil
	var times []time.Time
	for _, p := range pods {
		if !p.Scheduled.IsZero() {
			times = append(times, p.Scheduled)
		}
	}
	klog.V(2).InfoS("Gathering SchedulingThroughput", "selector", m.sel.String(), "pods", len(pods), "scheduled", len(times), "ignoredBeforeStart", ignored)
	if len(times) == 0 {
		return nil, notMeasuredf("no scheduled pods matched %s (%d pods created after the start, none scheduled; %d earlier ones ignored)", m.sel, len(pods), ignored)
	}
	rates := schedulingRates(times, m.interval)
	pc := metrics.NearestRankPercentiles(rates)
	maxRate := rates[0]
	for _, r := range rates {
		maxRate = max(maxRate, r)
	}
	data := pc.Data()
	data["Max"] = maxRate
	s := Summary{
		// clusterloader2 names this summary without the identifier.
		Name:     schedulingThroughputMethod,
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: []metrics.DataItem{{Data: data, Unit: "1/s"}}},
		Headline: map[string]float64{
			"p50 pods/s": pc.Perc50, "p90 pods/s": pc.Perc90, "p99 pods/s": pc.Perc99, "max pods/s": maxRate,
			"scheduled pods": float64(len(times)), "windows": float64(len(rates)),
		},
		Output: schedulingThroughputFile{Perc50: pc.Perc50, Perc90: pc.Perc90, Perc99: pc.Perc99, Max: maxRate},
		Series: map[string][]metrics.Point{schedulingSeries: make([]metrics.Point, len(rates))},
	}
	for i, r := range rates {
		s.Series[schedulingSeries][i] = metrics.Point{X: float64(i) * m.interval.Seconds(), Y: r}
	}
	var items []string
	if threshold > 0 {
		s.Thresholds = map[string]float64{"max pods/s": threshold}
		if enforce && maxRate < threshold {
			items = append(items, fmt.Sprintf("scheduling throughput max %s pods/s < %s pods/s (%d pods in %d windows of %s)",
				trackerRateText(maxRate), trackerRateText(threshold), len(times), len(rates), m.interval))
		}
	}
	return []Summary{s}, violations(items)
}

// schedulingRates buckets schedule times into consecutive windows of
// interval from the earliest one, through the window of the latest one,
// and returns each window's pods per second. A window with no pod between
// two busy ones is a zero; there is none before the first or after the
// last. times must not be empty.
func schedulingRates(times []time.Time, interval time.Duration) []float64 {
	sorted := append([]time.Time(nil), times...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	first := sorted[0]
	counts := make([]int, int(sorted[len(sorted)-1].Sub(first)/interval)+1)
	for _, t := range sorted {
		counts[int(t.Sub(first)/interval)]++
	}
	rates := make([]float64, len(counts))
	for i, c := range counts {
		rates[i] = float64(c) / interval.Seconds()
	}
	return rates
}
