package measurements

import (
	"context"
	"errors"
)

// TestMetrics itself is informational: each part's summaries are marked
// SLO by the part's own method's kind.
func init() {
	Register("TestMetrics", Informational, func(string) Measurement { return newTestMetrics() })
}

// testMetrics is clusterloader2's bundle of the control plane's own
// measurements, so that configs naming it run: here EtcdMetrics,
// SchedulingMetrics, ResourceUsageSummary, MetricsForE2E (at gather),
// SystemPodMetrics and ClusterOOMsTracker, started and gathered together. Each part keeps its own
// verdict; a part that cannot measure is "not measured" in its summary
// without failing the others.
//
// Params: action start|gather|pauseSystemPodMetrics|unpauseSystemPodMetrics,
// and the parts' params (resourceConstraints, systemPodMetricsEnabled,
// clusterOOMsTrackerEnabled, ...).
type testMetrics struct {
	parts []testMetricsPart
}

type testMetricsPart struct {
	method string
	m      Measurement
	// gatherOnly parts have nothing to start.
	gatherOnly bool
}

func newTestMetrics() *testMetrics {
	return &testMetrics{parts: []testMetricsPart{
		{method: "EtcdMetrics", m: &etcdMetrics{}},
		{method: "SchedulingMetrics", m: &schedulingMetrics{}},
		{method: "MetricsForE2E", m: &metricsForE2E{}, gatherOnly: true},
		{method: "ResourceUsageSummary", m: &resourceUsageSummary{}},
		{method: "SystemPodMetrics", m: &systemPodMetrics{}},
		{method: "ClusterOOMsTracker", m: &clusterOOMsTracker{}},
	}}
}

func (t *testMetrics) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather", "pauseSystemPodMetrics", "unpauseSystemPodMetrics")
	if err != nil {
		return nil, err
	}
	if action == "pauseSystemPodMetrics" || action == "unpauseSystemPodMetrics" {
		// Restarts over a planned restart do not count.
		forwarded := Params{}
		for k, v := range params {
			forwarded[k] = v
		}
		forwarded["action"] = map[string]string{"pauseSystemPodMetrics": "pause", "unpauseSystemPodMetrics": "unpause"}[action]
		for _, p := range t.parts {
			if p.method == "SystemPodMetrics" {
				return p.m.Execute(ctx, env, forwarded)
			}
		}
		return nil, nil
	}
	var all []Summary
	var violated []string
	var failures []error
	measured := 0
	for _, p := range t.parts {
		if p.gatherOnly && action == "start" {
			continue
		}
		summaries, err := p.m.Execute(ctx, env, params)
		var v *ViolationError
		var nm *NotMeasuredError
		switch {
		case err == nil && len(summaries) > 0:
			measured++
		case err == nil:
			// A part that is off (SystemPodMetrics by default) says nothing.
		case errors.As(err, &v):
			measured++
			violated = append(violated, v.Items...)
		case errors.As(err, &nm):
		default:
			failures = append(failures, err)
		}
		if action == "start" {
			continue // a part that cannot start says so at gather
		}
		// Each part's summaries carry the part's own verdict; the Manager
		// leaves a verdict already set alone.
		for _, s := range judge(p.method, "", summaries, err) {
			if s.Name == "" {
				s.Name = p.method
			}
			s.SLO = IsSLO(p.method) && !s.Empty
			all = append(all, s)
		}
	}
	switch {
	case action == "start" && len(failures) > 0:
		return nil, errors.Join(failures...)
	case action == "start":
		return nil, nil
	case len(failures) > 0:
		return all, errors.Join(failures...)
	case len(violated) > 0:
		return all, violations(violated)
	case measured == 0 && len(all) > 0:
		return all, notMeasuredf("no part of TestMetrics could measure: %s", all[0].Reason)
	}
	return all, nil
}
