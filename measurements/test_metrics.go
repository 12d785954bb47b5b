package measurements

import (
	"context"
	"errors"

	"k8s.io/klog/v2"
)

// TestMetrics itself is informational: each part's summaries are marked
// SLO by the part's own method's kind.
func init() {
	Register("TestMetrics", Informational, func(string) Measurement { return newTestMetrics() })
}

// testMetrics is clusterloader2's bundle of the control plane's own
// measurements, so that configs naming it run: here EtcdMetrics,
// SchedulingMetrics and ResourceUsageSummary, started and gathered
// together. Each part keeps its own verdict; a part that cannot measure
// is "not measured" in its summary without failing the others.
//
// Params: action start|gather, and the parts' params (resourceConstraints).
type testMetrics struct {
	parts []testMetricsPart
}

type testMetricsPart struct {
	method string
	m      Measurement
}

func newTestMetrics() *testMetrics {
	return &testMetrics{parts: []testMetricsPart{
		{"EtcdMetrics", &etcdMetrics{}},
		{"SchedulingMetrics", &schedulingMetrics{}},
		{"ResourceUsageSummary", &resourceUsageSummary{}},
	}}
}

func (t *testMetrics) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather", "pauseSystemPodMetrics", "unpauseSystemPodMetrics")
	if err != nil {
		return nil, err
	}
	if action == "pauseSystemPodMetrics" || action == "unpauseSystemPodMetrics" {
		// clusterloader2's bundle stops counting system pods' restarts
		// over a planned restart; this bundle has no SystemPodMetrics part,
		// so there is nothing to pause.
		klog.V(2).InfoS("TestMetrics: no SystemPodMetrics part to pause or unpause", "action", action)
		return nil, nil
	}
	var all []Summary
	var violated []string
	var failures []error
	measured := 0
	for _, p := range t.parts {
		summaries, err := p.m.Execute(ctx, env, params)
		var v *ViolationError
		var nm *NotMeasuredError
		switch {
		case err == nil:
			measured++
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
