package measurements

import (
	"context"
	"errors"
	"fmt"
)

func init() {
	Register(sloMeasurementMethod, Informational, func(identifier string) Measurement {
		return &sloMeasurement{parts: []sloPart{
			{method: "DnsLookupLatency", unsupported: "its probes resolve names through cluster DNS from pods that run, and hollow nodes run no containers"},
			{method: schedulingThroughputPromMethod, m: newSchedulingThroughputProm(identifier)},
		}}
	})
}

const sloMeasurementMethod = "SLOMeasurement"

// sloMeasurement is SLOMeasurement, clusterloader2's bundle of the SLOs it
// measures from Prometheus: DnsLookupLatency and
// SchedulingThroughputPrometheus. Every call goes to each part with the
// entry's params, overlaid by the part's own ones under
// overrides.<method>. Each part keeps its own verdict. DnsLookupLatency
// cannot be measured here; its SLO stays unjudged ("not measured"), as it
// would be if named on its own.
type sloMeasurement struct {
	parts []sloPart
}

type sloPart struct {
	method string
	m      Measurement
	// unsupported says why kscale cannot measure the part; m is nil then.
	unsupported string
}

func (s *sloMeasurement) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	overrides, err := params.Map("overrides")
	if err != nil {
		return nil, err
	}
	var all []Summary
	var violated []string
	var failures []error
	for _, p := range s.parts {
		if p.m == nil {
			if action == "gather" {
				all = append(all, Summary{Method: p.method, Name: p.method, Verdict: NotMeasured, SLO: true,
					Reason: fmt.Sprintf("%s is not supported by kscale: %s", p.method, p.unsupported)})
			}
			continue
		}
		own := Params{}
		for k, v := range params {
			if k != "overrides" {
				own[k] = v
			}
		}
		part, err := overrides.Map(p.method)
		if err != nil {
			return nil, fmt.Errorf("param overrides: %w", err)
		}
		for k, v := range part {
			own[k] = v
		}
		summaries, err := p.m.Execute(ctx, env, own)
		var v *ViolationError
		switch {
		case errors.As(err, &v):
			violated = append(violated, v.Items...)
		case err != nil && !errors.As(err, new(*NotMeasuredError)):
			failures = append(failures, fmt.Errorf("%s: %w", p.method, err))
		}
		if action == "gather" {
			all = append(all, judge(p.method, "", summaries, err)...)
		}
	}
	switch {
	case len(failures) > 0:
		return all, errors.Join(failures...)
	case len(violated) > 0:
		return all, violations(violated)
	}
	return all, nil
}
