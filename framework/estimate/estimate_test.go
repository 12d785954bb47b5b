package estimate

import (
	"testing"
	"time"

	"github.com/kscale/kscale/framework/config"
)

func TestOf(t *testing.T) {
	rng := &config.NamespaceRange{Min: 1, Max: 10}
	cfg := &config.Config{
		TuningSets: []config.TuningSet{
			{Name: "q5", QPSLoad: &config.QPSLoad{QPS: 5}},
			{Name: "limited", TimeLimitedLoad: &config.TimeLimitedLoad{TimeLimit: config.Duration(300 * time.Second)}},
			{Name: "stepped", SteppedLoad: &config.SteppedLoad{BurstSize: 10, StepDelay: config.Duration(time.Second)}},
		},
		Steps: []config.Step{
			// 10 Deployments of 1000 pods over 300 s: the controllers' 10 000
			// pods at QPS 100 take 100 s, so the tuning set's 300 s decides.
			{Name: "saturate", Phases: []config.Phase{{NamespaceRange: rng, ReplicasPerNamespace: 1, TuningSet: "limited",
				ObjectBundle: []config.Object{{Basename: "sat", TemplateFillMap: map[string]any{"Replicas": 1000}}}}}},
			// 500 single-pod Deployments at 5/s: 100 s.
			{Name: "latency", Phases: []config.Phase{{NamespaceRange: rng, ReplicasPerNamespace: 50, TuningSet: "q5",
				ObjectBundle: []config.Object{{Basename: "lat", TemplateFillMap: map[string]any{"Replicas": 1}}}}}},
			{Name: "sleep", Measurements: []config.Measurement{{Method: "Sleep", Params: map[string]any{"duration": "30s"}}}},
			// Deleting 10 000 pods: the garbage collector at half of QPS 100.
			{Name: "delete", Phases: []config.Phase{{NamespaceRange: rng, ReplicasPerNamespace: 0, TuningSet: "stepped",
				ObjectBundle: []config.Object{{Basename: "sat", TemplateFillMap: map[string]any{"Replicas": 1000}}}}}},
		},
	}
	e := Of(cfg, Inputs{Provisioned: 600, ControllerManagerQPS: 100, ScaleSteps: 1})
	want := []Part{
		{"provisioning", 20 * time.Second, 0},
		{"saturate", 300 * time.Second, 10000},
		{"latency", 100 * time.Second, 500},
		{"sleep", 30 * time.Second, 0},
		{"delete", 200 * time.Second, -10000},
		// 10 500 pods' events, and the 500 latency pods left at the end.
		{"namespace cleanup and teardown", 42*time.Second + 10*time.Second, 0},
	}
	if len(e.Parts) != len(want) {
		t.Fatalf("parts %+v", e.Parts)
	}
	for i, w := range want {
		if got := e.Parts[i]; got.Name != w.Name || got.Duration != w.Duration || got.Pods != w.Pods {
			t.Errorf("part %d = %+v, want %+v", i, got, w)
		}
	}
	if e.Pods != 10500 || e.PodsCreated != 10500 {
		t.Errorf("pods %d at once, %d created; want 10500, 10500", e.Pods, e.PodsCreated)
	}
	if got := e.Timeout(); got != time.Hour {
		t.Errorf("timeout %s for %s, want 1h", got, e.Total())
	}
}

func TestTimeoutFor(t *testing.T) {
	for _, tc := range []struct{ d, want time.Duration }{
		{4 * time.Minute, time.Hour},
		{40 * time.Minute, time.Hour},
		{41 * time.Minute, 2 * time.Hour},
		{106 * time.Minute, 3 * time.Hour},
	} {
		if got := TimeoutFor(tc.d); got != tc.want {
			t.Errorf("TimeoutFor(%s) = %s, want %s", tc.d, got, tc.want)
		}
	}
}
