package measurements

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register(promSchedulingMetricsMethod, Informational,
		newPromMeasurement(promSchedulingMetricsMethod, func() promGatherer { return &promSchedulingMetrics{} }))
}

const promSchedulingMetricsMethod = "PrometheusSchedulingMetrics"

// schedulerExtensionPoints are the framework extension points whose
// latencies the scheduling metrics file holds, as clusterloader2 lists them.
var schedulerExtensionPoints = []string{
	"PreFilter", "Filter", "PostFilter", "PreScore", "Score", "PreBind", "Bind", "PostBind", "Reserve", "Unreserve", "Permit",
}

// promSchedulingMetrics is PrometheusSchedulingMetrics: SchedulingMetrics'
// file, from the increase of the scheduler's histograms over the span as
// Prometheus scraped them, rather than from scrapes of kscale's own. It
// needs no params; it judges nothing.
type promSchedulingMetrics struct{}

func (*promSchedulingMetrics) configure(Params) error { return nil }
func (*promSchedulingMetrics) judges(Params) bool     { return false }

// name is the summary's name: clusterloader2 puts the identifier first.
func (*promSchedulingMetrics) name(identifier string) string {
	return identifier + "_" + promSchedulingMetricsMethod
}

func (*promSchedulingMetrics) gather(ctx context.Context, p *promQuerier, start, end time.Time, _ Params) ([]Summary, error) {
	span := promRange(end.Sub(start))
	hist := func(metric, selector string) (metrics.Histogram, error) {
		v, err := p.vector(ctx, fmt.Sprintf(`sum by (le) (increase(%s_bucket{%s}[%s]))`, metric, selector, span), end)
		if err != nil {
			return metrics.Histogram{}, err
		}
		return histogramOfBuckets(v), nil
	}
	file := schedulingMetricsFile{FrameworkExtensionPointDuration: map[string]*latencyFile{}}
	sum := Summary{
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion},
		Headline: map[string]float64{},
	}
	add := func(name string, h metrics.Histogram) { addSchedulingLatency(&sum, name, h) }
	for _, f := range []struct {
		metric, name string
		to           *latencyFile
	}{
		{"scheduler_pod_scheduling_sli_duration_seconds", "pod_scheduling_sli", &file.E2eSchedulingLatency},
		{"scheduler_scheduling_algorithm_duration_seconds", "scheduling_algorithm", &file.SchedulingLatency},
		{"scheduler_scheduling_algorithm_preemption_evaluation_seconds", "preemption_evaluation", &file.PreemptionEvaluationLatency},
	} {
		h, err := hist(f.metric, "")
		if err != nil {
			return nil, err
		}
		*f.to = latencyFileOf(h)
		add(f.name, h)
	}
	for _, point := range schedulerExtensionPoints {
		h, err := hist("scheduler_framework_extension_point_duration_seconds", fmt.Sprintf("extension_point=%q", point))
		if err != nil {
			return nil, err
		}
		l := latencyFileOf(h)
		file.FrameworkExtensionPointDuration[point] = &l
		add("extension_point_"+point, h)
	}
	if len(sum.PerfData.DataItems) == 0 {
		return nil, notMeasuredf("Prometheus at %s has no scheduling latencies over the last %s: the scheduler scheduled nothing, or Prometheus does not scrape it", p.url, span)
	}
	sum.Output = file
	return []Summary{sum}, nil
}

// histogramOfBuckets makes a histogram of a query's answer by le: the
// buckets' counts over the span.
func histogramOfBuckets(v model.Vector) metrics.Histogram {
	var h metrics.Histogram
	for _, s := range v {
		le, err := strconv.ParseFloat(string(s.Metric[model.BucketLabel]), 64)
		if err != nil {
			continue
		}
		h.Buckets = append(h.Buckets, metrics.Bucket{UpperBound: le, Count: float64(s.Value)})
	}
	if len(h.Buckets) == 0 {
		return h
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
	h.Count = h.Buckets[len(h.Buckets)-1].Count
	return h
}
