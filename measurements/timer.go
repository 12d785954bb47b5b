package measurements

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register("Timer", Informational, func(string) Measurement { return &timerMeasurement{} })
}

// timerMeasurement is Timer: `start` and `stop` with a label measure the
// time between them; `gather` reports every label's last duration. As in
// clusterloader2 the summary is named "Timer" and holds one data item,
// labelled test=phases, with one number of seconds per label, which is
// what perfdash plots.
type timerMeasurement struct {
	mu        sync.Mutex
	starts    map[string]time.Time
	durations map[string]time.Duration
}

func (m *timerMeasurement) Execute(_ context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "stop", "gather")
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = &Env{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.starts == nil {
		m.starts, m.durations = map[string]time.Time{}, map[string]time.Duration{}
	}
	if action == "gather" {
		data := map[string]float64{}
		headline := map[string]float64{}
		for label, d := range m.durations {
			data[label] = d.Seconds()
			headline[label+" s"] = d.Seconds()
		}
		return []Summary{{
			Name:     "Timer",
			Headline: headline,
			PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: []metrics.DataItem{{
				Data: data, Unit: "s", Labels: map[string]string{"test": "phases"},
			}}},
		}}, nil
	}
	label, err := params.String("label", "")
	if err != nil {
		return nil, err
	}
	if label == "" {
		return nil, fmt.Errorf("param label: missing")
	}
	if action == "start" {
		m.starts[label] = env.now()
		return nil, nil
	}
	started, ok := m.starts[label]
	if !ok {
		return nil, fmt.Errorf("timer %q was stopped without being started", label)
	}
	d := env.now().Sub(started)
	m.durations[label] = d
	delete(m.starts, label)
	klog.InfoS("Timer stopped", "label", label, "duration", d)
	return nil, nil
}
