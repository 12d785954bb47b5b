package measurements

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

// The PromQL APIResponsivenessPrometheus asks a Prometheus server, all in
// one place. Each aggregates by the item labels, so one answer holds every
// item.
const (
	// promAPICallSeries selects the calls the SLI covers, applying fn
	// over rng to (2) metric: (4) the exclusions and (5) read-only verbs
	// of any group, or (4) the exclusions and (6) mutating verbs of
	// built-in groups. The two sides have disjoint verbs, so `or` is a
	// union.
	promAPICallSeries = `%[1]s(%[2]s{%[4]s,%[5]s}[%[3]s]) or %[1]s(%[2]s{%[4]s,%[6]s}[%[3]s])`
	// promAPICallRunCount: the calls of the run, from the _count series.
	promAPICallRunCount = `sum by (verb, resource, subresource, scope) (%s)`
	// promAPICallRunQuantile: (1) a quantile of (2) the run's bucket
	// increases.
	promAPICallRunQuantile = `histogram_quantile(%g, sum by (verb, resource, subresource, scope, le) (%s))`
	// promAPICallWorstWindow: the largest p99 of (1) the window's bucket
	// rates, evaluated over (2) the run every (3) step.
	promAPICallWorstWindow = `max_over_time(histogram_quantile(0.99, sum by (verb, resource, subresource, scope, le) (%s))[%s:%s])`
	// promAPICallRunBuckets: the run's bucket increases themselves, for
	// the slow-call counts, whose threshold differs per item.
	promAPICallRunBuckets = `sum by (verb, resource, subresource, scope, le) (%s)`
)

// promAPICallSelectors are the label matchers of promAPICallSeries, made
// from the same lists apiRespKeep uses so both modes measure the same calls.
func promAPICallSelectors() (exclusions, readOnly, mutatingBuiltin string) {
	exclusions = fmt.Sprintf(`verb!~%q,subresource!~%q,resource!~%q`,
		strings.Join(apiRespExcludedVerbs, "|"),
		strings.Join(apiRespExcludedSubresources, "|"),
		strings.Join(apiRespExcludedResources, "|"))
	readOnly = fmt.Sprintf(`verb=~%q`, strings.Join(apiRespReadOnlyVerbs, "|"))
	groups := strings.Join(apiRespBuiltinGroups, "|") + `|.*\.k8s\.io`
	mutatingBuiltin = fmt.Sprintf(`verb!~%q,group=~%q`, strings.Join(apiRespReadOnlyVerbs, "|"), groups)
	return exclusions, readOnly, mutatingBuiltin
}

// promAPICalls is promAPICallSeries for one function, series and range.
func promAPICalls(fn, series, rng string) string {
	ex, ro, mut := promAPICallSelectors()
	return fmt.Sprintf(promAPICallSeries, fn, series, rng, ex, ro, mut)
}

// queryItems computes the items of the run from start to end with PromQL.
func (a *apiResponsiveness) queryItems(ctx context.Context, env *Env, cfg apiRespConfig, start, end time.Time) ([]apiCallItem, string, error) {
	prom, err := newPromQuerier(env, "APIResponsivenessPrometheus")
	if err != nil {
		return nil, "", err
	}
	query := func(q string) (model.Vector, error) { return prom.vector(ctx, q, end) }

	runRange := promRange(end.Sub(start))
	// The metric is the newest one with calls in the run: a server's
	// Prometheus holds whichever its apiserver version exposes.
	var metric string
	var counts model.Vector
	for _, m := range apiRespMetrics {
		v, err := query(fmt.Sprintf(promAPICallRunCount, promAPICalls("increase", m+"_count", runRange)))
		if err != nil {
			return nil, "", err
		}
		if len(v) > 0 {
			metric, counts = m, v
			break
		}
	}
	if metric == "" {
		return nil, "", notMeasuredf("Prometheus at %s has no samples of %s in the run", env.PrometheusURL, strings.Join(apiRespMetrics, ", "))
	}

	byKey := map[metrics.HistogramKey]*apiCallItem{}
	for _, s := range counts {
		if n := int(math.Round(float64(s.Value))); n > 0 {
			v := promKeyValues(s.Metric)
			byKey[metrics.MakeHistogramKey(v...)] = &apiCallItem{
				Verb: v[0], Resource: v[1], Subresource: v[2], Scope: v[3], Count: n,
				Perc50: math.NaN(), Perc90: math.NaN(), Perc99: math.NaN(), Window99: math.NaN(),
			}
		}
	}
	// set stores a query's answer in each item it has a number for.
	set := func(v model.Vector, field func(*apiCallItem) *float64) {
		for _, s := range v {
			it := byKey[metrics.MakeHistogramKey(promKeyValues(s.Metric)...)]
			if it != nil && !math.IsNaN(float64(s.Value)) {
				*field(it) = float64(s.Value)
			}
		}
	}
	buckets := promAPICalls("increase", metric+"_bucket", runRange)
	for _, q := range []struct {
		q     float64
		field func(*apiCallItem) *float64
	}{
		{0.5, func(it *apiCallItem) *float64 { return &it.Perc50 }},
		{0.9, func(it *apiCallItem) *float64 { return &it.Perc90 }},
		{0.99, func(it *apiCallItem) *float64 { return &it.Perc99 }},
	} {
		v, err := query(fmt.Sprintf(promAPICallRunQuantile, q.q, buckets))
		if err != nil {
			return nil, "", err
		}
		set(v, q.field)
	}
	if !cfg.simple {
		// A run shorter than the window is its own only window.
		window := promRange(min(a.window, end.Sub(start)))
		rates := promAPICalls("rate", metric+"_bucket", window)
		v, err := query(fmt.Sprintf(promAPICallWorstWindow, rates, runRange, promRange(a.interval)))
		if err != nil {
			return nil, "", err
		}
		set(v, func(it *apiCallItem) *float64 { return &it.Window99 })
		// The subquery's steps fall on multiples of the step, so the
		// calls after its last one are in none of its windows: the
		// window that ends at gather is asked for on its own, as
		// kscale's own scrapes end with one.
		last, err := query(fmt.Sprintf(promAPICallRunQuantile, 0.99, rates))
		if err != nil {
			return nil, "", err
		}
		for _, s := range last {
			it := byKey[metrics.MakeHistogramKey(promKeyValues(s.Metric)...)]
			if v := float64(s.Value); it != nil && !math.IsNaN(v) && (math.IsNaN(it.Window99) || v > it.Window99) {
				it.Window99 = v
			}
		}
	}
	v, err := query(fmt.Sprintf(promAPICallRunBuckets, buckets))
	if err != nil {
		return nil, "", err
	}
	byItem := map[metrics.HistogramKey]model.Vector{}
	for _, s := range v {
		key := metrics.MakeHistogramKey(promKeyValues(s.Metric)...)
		if byKey[key] != nil {
			byItem[key] = append(byItem[key], s)
		}
	}
	for key, buckets := range byItem {
		byKey[key].run = histogramOfBuckets(buckets)
	}

	items := make([]apiCallItem, 0, len(byKey))
	for _, it := range byKey {
		if math.IsNaN(it.Perc99) {
			// Calls counted but no bucket answer: nothing to judge.
			klog.Warningf("APIResponsivenessPrometheus: %s: %d calls but no latency from Prometheus", it.name(), it.Count)
			continue
		}
		items = append(items, *it)
	}
	return items, fmt.Sprintf("Prometheus at %s (%s)", env.PrometheusURL, metric), nil
}

// promKeyValues are a sample's item labels in apiRespKeyLabels order.
func promKeyValues(m model.Metric) []string {
	out := make([]string, len(apiRespKeyLabels))
	for i, l := range apiRespKeyLabels {
		out[i] = string(m[model.LabelName(l)])
	}
	return out
}
