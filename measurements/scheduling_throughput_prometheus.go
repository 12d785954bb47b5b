package measurements

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register(schedulingThroughputPromMethod, Informational, newSchedulingThroughputProm)
}

// newSchedulingThroughputProm makes the method's instances, on its own and
// in SLOMeasurement.
var newSchedulingThroughputProm = newPromMeasurement(schedulingThroughputPromMethod, func() promGatherer { return &schedulingThroughputProm{} })

const (
	schedulingThroughputPromMethod = "SchedulingThroughputPrometheus"
	// bindingsSelector selects the pod bindings the apiserver accepted:
	// each is a pod scheduled.
	bindingsSelector = `apiserver_request_total{verb="POST",resource="pods",subresource="binding",code="201"}`
	// promMaxSchedulingRate is clusterloader2's query: the largest rate of
	// accepted bindings between two successive scrapes (irate), looked at
	// every 5 s over (1) the span of the measurement.
	promMaxSchedulingRate = `max_over_time(sum(irate(` + bindingsSelector + `[1m]))[%s:5s])`
	// promBindings counts the bindings over (1) the span, which the
	// summary reports beside the rate: the counter at the last scrape less
	// the counter at the last scrape before the span. increase() would
	// extrapolate a burst to the span's ends and count pods never bound.
	promBindings = `sum(` + bindingsSelector + ` - ` + bindingsSelector + ` offset %s)`
)

// schedulingThroughputProm is SchedulingThroughputPrometheus: the scheduler's
// largest throughput over the span, from the apiserver's count of accepted
// bindings, as clusterloader2 computes it. Params: threshold (pods/s, at
// start or gather; 0 is none), judged with enableViolations: a max below it
// violates.
//
// It differs from SchedulingThroughput by construction: that one buckets
// each pod's own schedule time into windows from the first scheduled pod;
// this one takes rates between Prometheus' scrapes, so its windows fall
// where the scrapes do.
type schedulingThroughputProm struct {
	threshold float64
}

// schedulingThroughputPromFile is the method's report file, as
// clusterloader2 writes it.
type schedulingThroughputPromFile struct {
	Max float64 `json:"max"`
}

func (s *schedulingThroughputProm) configure(params Params) error {
	t, err := schedulingThreshold(params, 0)
	s.threshold = t
	return err
}

func (s *schedulingThroughputProm) judges(params Params) bool {
	t, err := schedulingThreshold(params, s.threshold)
	return err == nil && t > 0
}

func (s *schedulingThroughputProm) name(string) string { return schedulingThroughputPromMethod }

func (s *schedulingThroughputProm) gather(ctx context.Context, p *promQuerier, start, end time.Time, params Params) ([]Summary, error) {
	threshold, err := schedulingThreshold(params, s.threshold)
	if err != nil {
		return nil, err
	}
	span := promRange(end.Sub(start))
	rate, err := p.vector(ctx, fmt.Sprintf(promMaxSchedulingRate, span), end)
	if err != nil {
		return nil, err
	}
	if len(rate) != 1 {
		return nil, notMeasuredf("Prometheus at %s has no rate of pod bindings over the last %s (%d samples)", p.url, span, len(rate))
	}
	bound, err := p.vector(ctx, fmt.Sprintf(promBindings, span), end)
	if err != nil {
		return nil, err
	}
	maxRate := float64(rate[0].Value)
	sum := Summary{
		Name:     schedulingThroughputPromMethod,
		Output:   schedulingThroughputPromFile{Max: maxRate},
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: []metrics.DataItem{{Data: map[string]float64{"Max": maxRate}, Unit: "1/s"}}},
		Headline: map[string]float64{"max pods/s": maxRate},
	}
	if len(bound) == 1 && bound[0].Value >= 0 {
		// A negative difference is a counter reset (a restarted
		// apiserver): the count is unknown.
		sum.Headline["bindings"] = math.Round(float64(bound[0].Value))
	}
	if threshold <= 0 {
		return []Summary{sum}, nil
	}
	sum.Thresholds = map[string]float64{"max pods/s": threshold}
	if maxRate < threshold {
		return []Summary{sum}, violations([]string{fmt.Sprintf("scheduling throughput max %s pods/s < %s pods/s (Prometheus)",
			trackerRateText(maxRate), trackerRateText(threshold))})
	}
	return []Summary{sum}, nil
}
