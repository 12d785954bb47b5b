package measurements

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register(genericQueryMethod, Informational, newPromMeasurement(genericQueryMethod, func() promGatherer { return &genericQuery{} }))
}

const genericQueryMethod = "GenericPrometheusQuery"

// genericQuery is GenericPrometheusQuery: PromQL queries a config writes,
// each evaluated once at gather with every "%v" replaced by the span since
// start, their samples reported as one PerfData item per combination of the
// dimension labels, and each judged against its own threshold.
//
// Start params: metricName, metricVersion and unit (required), dimensions
// (the labels that key the items), queries: a list of {name, query,
// threshold, lowerBound, requireSamples}. A threshold is an upper bound
// unless lowerBound; requireSamples makes a query without samples a
// violation. Violations fail the measurement only with enableViolations
// at gather, as in clusterloader2; the summary is an SLO one then.
//
// The summary is named "GenericPrometheusQuery <metricName>", as
// clusterloader2 names the file (a space, as '_' separates the parts of a
// report file's name).
type genericQuery struct {
	metricName, metricVersion, unit string
	dimensions                      []string
	queries                         []genericQueryItem
}

type genericQueryItem struct {
	name, query    string
	threshold      *float64
	lowerBound     bool
	requireSamples bool
}

func (g *genericQuery) configure(params Params) error {
	var err error
	for _, f := range []struct {
		key string
		to  *string
	}{{"metricName", &g.metricName}, {"metricVersion", &g.metricVersion}, {"unit", &g.unit}} {
		if *f.to, err = params.String(f.key, ""); err != nil {
			return err
		}
		if *f.to == "" {
			return fmt.Errorf("param %s is required", f.key)
		}
	}
	dims, err := params.List("dimensions")
	if err != nil {
		return err
	}
	g.dimensions = nil
	for i, d := range dims {
		s, ok := d.(string)
		if !ok {
			return fmt.Errorf("param dimensions[%d]: want a label name, got %T %v", i, d, d)
		}
		g.dimensions = append(g.dimensions, s)
	}
	qs, err := params.List("queries")
	if err != nil {
		return err
	}
	g.queries = nil
	for i, raw := range qs {
		m, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("param queries[%d]: want a map of name, query, threshold, lowerBound, requireSamples; got %T", i, raw)
		}
		q, err := parseGenericQueryItem(Params(m))
		if err != nil {
			return fmt.Errorf("param queries[%d]: %w", i, err)
		}
		g.queries = append(g.queries, q)
	}
	return nil
}

func parseGenericQueryItem(p Params) (genericQueryItem, error) {
	var q genericQueryItem
	var err error
	if q.name, err = p.String("name", ""); err != nil {
		return q, err
	}
	if q.query, err = p.String("query", ""); err != nil {
		return q, err
	}
	if q.name == "" || q.query == "" {
		return q, fmt.Errorf("name and query are required")
	}
	if v, ok := p["threshold"]; ok && v != nil {
		t, err := p.Float("threshold", 0)
		if err != nil {
			return q, err
		}
		q.threshold = &t
	}
	if q.lowerBound, err = p.Bool("lowerBound", false); err != nil {
		return q, err
	}
	q.requireSamples, err = p.Bool("requireSamples", false)
	return q, err
}

func (g *genericQuery) judges(Params) bool {
	for _, q := range g.queries {
		if q.threshold != nil || q.requireSamples {
			return true
		}
	}
	return false
}

func (g *genericQuery) name(string) string { return genericQueryMethod + " " + g.metricName }

func (g *genericQuery) gather(ctx context.Context, p *promQuerier, start, end time.Time, _ Params) ([]Summary, error) {
	span := promRange(end.Sub(start))
	items := map[string]*metrics.DataItem{}
	var bad []string
	for _, q := range g.queries {
		samples, err := p.vector(ctx, strings.ReplaceAll(q.query, "%v", span), end)
		if err != nil {
			return nil, err
		}
		// A sample that is not a number (a quantile of no observations)
		// holds no value: it counts as absent, and no threshold judges it.
		samples = slices.DeleteFunc(samples, func(s *model.Sample) bool {
			v := float64(s.Value)
			return math.IsNaN(v) || math.IsInf(v, 0)
		})
		if len(samples) == 0 && q.requireSamples {
			bad = append(bad, fmt.Sprintf("%s: query returned no samples", q.name))
		}
		for _, s := range samples {
			key, labels := g.key(s.Metric)
			it := items[key]
			if it == nil {
				it = &metrics.DataItem{Data: map[string]float64{}, Unit: g.unit, Labels: labels}
				items[key] = it
			}
			v := float64(s.Value)
			if prev, dup := it.Data[q.name]; dup {
				bad = append(bad, fmt.Sprintf("%s%s: the query returned %v and %v, want a single value", q.name, key, prev, v))
				continue
			}
			it.Data[q.name] = v
			if msg := q.check(v); msg != "" {
				bad = append(bad, fmt.Sprintf("%s%s: %s", q.name, key, msg))
			}
		}
	}
	keys := make([]string, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := Summary{
		Name:     g.name(""),
		PerfData: &metrics.PerfData{Version: g.metricVersion, DataItems: []metrics.DataItem{}},
		Headline: map[string]float64{"items": float64(len(keys))},
	}
	for _, k := range keys {
		s.PerfData.DataItems = append(s.PerfData.DataItems, *items[k])
	}
	if len(keys) == 1 {
		// One item: its numbers are the headline, by query name.
		for name, v := range items[keys[0]].Data {
			s.Headline[name] = v
		}
	}
	for _, q := range g.queries {
		if q.threshold != nil {
			if s.Thresholds == nil {
				s.Thresholds = map[string]float64{}
			}
			s.Thresholds[q.name] = *q.threshold
		}
	}
	return []Summary{s}, violations(bad)
}

// key names a sample's item by its dimension labels ("" without
// dimensions) and returns those labels.
func (g *genericQuery) key(m model.Metric) (string, map[string]string) {
	if len(g.dimensions) == 0 {
		return "", nil
	}
	labels := make(map[string]string, len(g.dimensions))
	parts := make([]string, len(g.dimensions))
	for i, d := range g.dimensions {
		labels[d] = string(m[model.LabelName(d)])
		parts[i] = d + "=" + labels[d]
	}
	return " {" + strings.Join(parts, ",") + "}", labels
}

// check says how v breaks the query's threshold, or "".
func (q genericQueryItem) check(v float64) string {
	switch {
	case q.threshold == nil:
		return ""
	case q.lowerBound && v < *q.threshold:
		return fmt.Sprintf("%v is below the threshold %v", v, *q.threshold)
	case !q.lowerBound && v > *q.threshold:
		return fmt.Sprintf("%v is above the threshold %v", v, *q.threshold)
	}
	return ""
}
