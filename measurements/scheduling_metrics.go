package measurements

import (
	"context"
	"fmt"
	"sort"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register("SchedulingMetrics", Informational, func(string) Measurement { return &schedulingMetrics{} })
}

// schedulingMetrics reports the scheduler's own latencies between start and
// gather, from its metrics: the scheduling attempts that placed a pod, the
// pod scheduling SLI (queue to bind, excluding time waiting for other
// pods), and each framework extension point. Where scheduling is slow,
// these say which part.
//
// Params: action start|gather. On providers other than local the
// scheduler's endpoint is unknown and it is "not measured".
type schedulingMetrics struct {
	delta metricsDelta
}

func (s *schedulingMetrics) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, s.delta.begin(ctx, env, "kube-scheduler")
	}
	end, err := s.delta.end(ctx, env)
	if err != nil {
		return nil, err
	}
	sum := Summary{
		Name:     "SchedulingMetrics",
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion},
		Headline: map[string]float64{},
	}
	add := func(metric string, h metrics.Histogram) { addSchedulingLatency(&sum, metric, h) }
	attempts, err := s.delta.histograms(end, "scheduler_scheduling_attempt_duration_seconds", []string{"result"}, nil)
	if err != nil {
		return nil, err
	}
	add("scheduling_attempt_scheduled", attempts[metrics.MakeHistogramKey("scheduled")])
	sli, err := s.delta.histograms(end, "scheduler_pod_scheduling_sli_duration_seconds", nil, nil)
	if err != nil {
		return nil, err
	}
	add("pod_scheduling_sli", sli[metrics.MakeHistogramKey()])
	points, err := s.delta.histograms(end, "scheduler_framework_extension_point_duration_seconds", []string{"extension_point"}, func(l map[string]string) bool {
		return l["status"] == "" || l["status"] == "Success"
	})
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(points))
	for k := range points {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	file := schedulingMetricsFile{
		FrameworkExtensionPointDuration: map[string]*latencyFile{},
		E2eSchedulingLatency:            latencyFileOf(sli[metrics.MakeHistogramKey()]),
	}
	for _, k := range keys {
		point := metrics.HistogramKey(k).Values()[0]
		h := points[metrics.HistogramKey(k)]
		add(fmt.Sprintf("extension_point_%s", point), h)
		if h.Count > 0 {
			l := latencyFileOf(h)
			file.FrameworkExtensionPointDuration[point] = &l
		}
	}
	if len(sum.PerfData.DataItems) == 0 {
		return nil, notMeasuredf("the scheduler scheduled no pod between start and gather")
	}
	// The scheduling algorithm's and preemption's own latencies appear in
	// clusterloader2's file only.
	for _, f := range []struct {
		to    *latencyFile
		names []string
	}{
		{&file.SchedulingLatency, []string{"scheduler_scheduling_algorithm_duration_seconds"}},
		{&file.PreemptionEvaluationLatency, []string{
			"scheduler_scheduling_algorithm_preemption_evaluation_seconds", "scheduler_preemption_evaluation_duration_seconds"}},
	} {
		for _, name := range f.names {
			hs, err := s.delta.histograms(end, name, nil, nil)
			if err != nil {
				return nil, err
			}
			if h := hs[metrics.MakeHistogramKey()]; h.Count > 0 {
				*f.to = latencyFileOf(h)
				break
			}
		}
	}
	sum.Output = file
	return []Summary{sum}, nil
}

// addSchedulingLatency adds a scheduler latency histogram to sum, when it
// observed anything: its PerfData item and its p99 in the headline.
func addSchedulingLatency(sum *Summary, metric string, h metrics.Histogram) {
	if h.Count == 0 {
		return
	}
	item := latencyItem(h, map[string]string{"Metric": metric})
	item.Data["Count"] = h.Count
	sum.PerfData.DataItems = append(sum.PerfData.DataItems, item)
	sum.Headline[metric+" p99 ms"] = item.Data["Perc99"]
}
