package measurements

import (
	"context"
	"fmt"

	dto "github.com/prometheus/client_model/go"

	"github.com/kscale/kscale/measurements/metrics"
)

// metricsDelta keeps a component's metrics at start, so that gather can
// tell what happened in between: the measurements built on a component's
// own histograms (etcd, scheduler) are all start/gather deltas.
type metricsDelta struct {
	component string
	start     map[string]*dto.MetricFamily
	// startErr is why start could not scrape: gather says the same.
	startErr error
}

// scrapeComponent fetches and parses the named component's metrics; a
// component the run cannot see is "not measured", with why.
func scrapeComponent(ctx context.Context, env *Env, name string) (map[string]*dto.MetricFamily, error) {
	c := env.Component(name)
	if c == nil || c.MetricsURL == "" {
		return nil, notMeasuredf("%s's metrics endpoint is not known to this run (kscale reads it on the local provider)", name)
	}
	text, err := c.Metrics(ctx)
	if err != nil {
		return nil, notMeasuredf("scraping %s: %v", name, err)
	}
	families, err := metrics.ParseText(text)
	if err != nil {
		return nil, notMeasuredf("%s: %v", name, err)
	}
	return families, nil
}

// begin records the component's metrics at start.
func (d *metricsDelta) begin(ctx context.Context, env *Env, component string) error {
	d.component = component
	d.start, d.startErr = scrapeComponent(ctx, env, component)
	return d.startErr
}

// end scrapes the component again and returns the metrics at gather.
func (d *metricsDelta) end(ctx context.Context, env *Env) (map[string]*dto.MetricFamily, error) {
	if d.startErr != nil {
		return nil, d.startErr
	}
	if d.start == nil {
		return nil, fmt.Errorf("gather without start")
	}
	return scrapeComponent(ctx, env, d.component)
}

// histograms returns per key the histogram of the observations made
// between start and gather.
func (d *metricsDelta) histograms(end map[string]*dto.MetricFamily, name string, by []string, keep func(map[string]string) bool) (map[metrics.HistogramKey]metrics.Histogram, error) {
	after, err := metrics.HistogramsBy(end[name], by, keep)
	if err != nil {
		return nil, err
	}
	before, err := metrics.HistogramsBy(d.start[name], by, keep)
	if err != nil {
		return nil, err
	}
	out := make(map[metrics.HistogramKey]metrics.Histogram, len(after))
	for k, h := range after {
		out[k] = h.Sub(before[k])
	}
	return out, nil
}

// latencyItem is a DataItem of a latency histogram's p50/p90/p99 in ms.
func latencyItem(h metrics.Histogram, labels map[string]string) metrics.DataItem {
	return metrics.DataItem{
		Data: map[string]float64{
			"Perc50": 1000 * h.Quantile(0.5),
			"Perc90": 1000 * h.Quantile(0.9),
			"Perc99": 1000 * h.Quantile(0.99),
		},
		Unit:   "ms",
		Labels: labels,
	}
}

// gaugeValue is the value of a gauge (or counter) family's first series.
func gaugeValue(families map[string]*dto.MetricFamily, name string) (float64, bool) {
	f := families[name]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, false
	}
	m := f.GetMetric()[0]
	if m.GetGauge() != nil {
		return m.GetGauge().GetValue(), true
	}
	return m.GetCounter().GetValue(), m.GetCounter() != nil
}
