package measurements

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/klog/v2"
)

// noPrometheus is why a PromQL method is not measured in a run without a
// Prometheus server.
const noPrometheus = "no Prometheus: the run has none (kscale cluster up --prometheus, the suites' --prometheus, or --prometheus-url for a server that scrapes the cluster)"

// promQuerier asks the run's Prometheus server instant queries.
type promQuerier struct {
	url    string
	method string
	api    promv1.API
}

// newPromQuerier returns a querier of env's Prometheus server, or a
// *NotMeasuredError when the run has none.
func newPromQuerier(env *Env, method string) (*promQuerier, error) {
	if env.PrometheusURL == "" {
		return nil, &NotMeasuredError{Reason: noPrometheus}
	}
	client, err := api.NewClient(api.Config{Address: env.PrometheusURL})
	if err != nil {
		return nil, fmt.Errorf("making a client of Prometheus at %q: %w", env.PrometheusURL, err)
	}
	return &promQuerier{url: env.PrometheusURL, method: method, api: promv1.NewAPI(client)}, nil
}

// vector evaluates q at t. A query Prometheus refuses as malformed is an
// error of the config; a server that cannot answer leaves the measurement
// not measured.
func (p *promQuerier) vector(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	v, warnings, err := p.api.Query(ctx, q, t)
	if len(warnings) > 0 {
		klog.Warningf("%s: Prometheus warns of %s: %v", p.method, q, warnings)
	}
	var perr *promv1.Error
	switch {
	case errors.As(err, &perr) && perr.Type == promv1.ErrBadData:
		return nil, fmt.Errorf("Prometheus at %s refuses the query %s: %v", p.url, q, err)
	case err != nil:
		return nil, &NotMeasuredError{Reason: fmt.Sprintf("querying Prometheus at %s for %s: %v", p.url, q, err)}
	}
	switch v := v.(type) {
	case model.Vector:
		return v, nil
	case *model.Scalar:
		return model.Vector{{Value: v.Value, Timestamp: v.Timestamp}}, nil
	}
	return nil, fmt.Errorf("querying Prometheus for %s: want a vector, got a %s", q, v.Type())
}

// promRange formats a duration as a PromQL range in whole seconds, at
// least one. clusterloader2 truncates to whole seconds; rounding up instead
// keeps a run's last partial second, and a sub-second run a valid range.
func promRange(d time.Duration) string {
	return fmt.Sprintf("%ds", max(1, int(math.Ceil(d.Seconds()))))
}

// promGatherer is a method clusterloader2 computes from PromQL alone: it
// needs no preparation at start, only the span to ask about at gather.
type promGatherer interface {
	// configure reads the start call's params; an error is a bad config.
	configure(params Params) error
	// gather computes the summaries of [start, end] and returns a
	// *ViolationError for the items over their thresholds.
	gather(ctx context.Context, q *promQuerier, start, end time.Time, params Params) ([]Summary, error)
	// judges reports whether the gather params ask for a verdict against
	// a threshold, which makes the summaries SLO ones.
	judges(params Params) bool
	// name is the summary's name, which gather may leave empty.
	name(identifier string) string
}

// promMeasurement runs a promGatherer with clusterloader2's params of every
// Prometheus measurement: action start|gather; prometheusClient inCluster
// (the run's Prometheus) or managed (none here); enableViolations (default
// false): whether items over their thresholds fail the measurement or are
// only listed.
type promMeasurement struct {
	method     string
	identifier string
	g          promGatherer
	start      time.Time
	started    bool
}

// newPromMeasurement is the factory of a method whose identifiers each
// get their own gatherer.
func newPromMeasurement(method string, gatherer func() promGatherer) Factory {
	return func(identifier string) Measurement {
		return &promMeasurement{method: method, identifier: identifier, g: gatherer()}
	}
}

func (m *promMeasurement) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	client, err := params.String("prometheusClient", "inCluster")
	if err != nil {
		return nil, err
	}
	if client != "inCluster" && client != "managed" {
		return nil, fmt.Errorf("param prometheusClient: %q is not inCluster or managed", client)
	}
	if action == "start" {
		if err := m.g.configure(params); err != nil {
			return nil, fmt.Errorf("%s: %w", m.method, err)
		}
		m.start, m.started = env.now(), true
		return nil, nil
	}
	if !m.started {
		return nil, fmt.Errorf("%s: gather without a start", m.method)
	}
	enforce, err := params.Bool("enableViolations", false)
	if err != nil {
		return nil, err
	}
	slo := enforce && m.g.judges(params)
	notMeasured := func(err error) ([]Summary, error) {
		return []Summary{{Name: m.g.name(m.identifier), SLO: slo}}, err
	}
	if client == "managed" {
		return notMeasured(notMeasuredf("prometheusClient managed: kscale's providers have no managed Prometheus; run with --prometheus-url and prometheusClient inCluster"))
	}
	q, err := newPromQuerier(env, m.method)
	if err != nil {
		return notMeasured(err)
	}
	summaries, err := m.g.gather(ctx, q, m.start, env.now(), params)
	var nm *NotMeasuredError
	if errors.As(err, &nm) && len(summaries) == 0 {
		return notMeasured(err)
	}
	for i := range summaries {
		summaries[i].SLO = slo
		if summaries[i].Name == "" {
			summaries[i].Name = m.g.name(m.identifier)
		}
	}
	var v *ViolationError
	if errors.As(err, &v) && !enforce {
		// Listed for the reader; the verdict stays pass, as in
		// clusterloader2.
		for i := range summaries {
			if len(summaries[i].Violations) == 0 {
				summaries[i].Violations = v.Items
			}
		}
		return summaries, nil
	}
	return summaries, err
}
