package tuningset

import (
	"math"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/config"
)

func TestValidate(t *testing.T) {
	d := func(x time.Duration) config.Duration { return config.Duration(x) }
	const all = "qpsLoad, randomizedLoad, steppedLoad, timeLimitedLoad, randomizedTimeLimitedLoad, parallelismLimitedLoad, globalQPSLoad, poissonLoad"
	tests := []struct {
		name string
		spec config.TuningSet
		want string // "" for valid
	}{
		{"qps ok", config.TuningSet{Name: "a", QPSLoad: &config.QPSLoad{QPS: 0.1}}, ""},
		{"randomized ok", config.TuningSet{Name: "a", RandomizedLoad: &config.RandomizedLoad{AverageQPS: 5}}, ""},
		{"stepped ok", config.TuningSet{Name: "a", SteppedLoad: &config.SteppedLoad{BurstSize: 1}}, ""},
		{"time limited 0 ok", config.TuningSet{Name: "a", TimeLimitedLoad: &config.TimeLimitedLoad{}}, ""},
		{"randomized time limited ok", config.TuningSet{Name: "a", RandomizedTimeLimitedLoad: &config.RandomizedTimeLimitedLoad{TimeLimit: d(time.Minute)}}, ""},
		{"parallelism ok", config.TuningSet{Name: "a", ParallelismLimitedLoad: &config.ParallelismLimitedLoad{ParallelismLimit: 1}}, ""},
		{"global ok", config.TuningSet{Name: "a", GlobalQPSLoad: &config.GlobalQPSLoad{QPS: 1, Burst: 1}}, ""},
		{"poisson ok", config.TuningSet{Name: "a", PoissonLoad: &config.PoissonLoad{ExpectedActionsPerSecond: 1}}, ""},

		{"qps zero", config.TuningSet{Name: "Uniform5qps", QPSLoad: &config.QPSLoad{}},
			"tuningSets[name=Uniform5qps].qpsLoad.qps: must be > 0, got 0"},
		{"qps negative", config.TuningSet{Name: "a", QPSLoad: &config.QPSLoad{QPS: -2}},
			"tuningSets[name=a].qpsLoad.qps: must be > 0, got -2"},
		{"qps NaN", config.TuningSet{Name: "a", QPSLoad: &config.QPSLoad{QPS: math.NaN()}},
			"tuningSets[name=a].qpsLoad.qps: must be > 0, got NaN"},
		{"qps infinite", config.TuningSet{Name: "a", QPSLoad: &config.QPSLoad{QPS: math.Inf(1)}},
			"tuningSets[name=a].qpsLoad.qps: must be finite, got +Inf"},
		{"averageQps zero", config.TuningSet{Name: "a", RandomizedLoad: &config.RandomizedLoad{}},
			"tuningSets[name=a].randomizedLoad.averageQps: must be > 0, got 0"},
		{"burstSize zero", config.TuningSet{Name: "a", SteppedLoad: &config.SteppedLoad{StepDelay: d(time.Second)}},
			"tuningSets[name=a].steppedLoad.burstSize: must be >= 1, got 0"},
		{"stepDelay negative", config.TuningSet{Name: "a", SteppedLoad: &config.SteppedLoad{BurstSize: 1, StepDelay: d(-time.Second)}},
			"tuningSets[name=a].steppedLoad.stepDelay: must be >= 0, got -1s"},
		{"initialDelay negative", config.TuningSet{Name: "a", InitialDelay: d(-time.Second), QPSLoad: &config.QPSLoad{QPS: 1}},
			"tuningSets[name=a].initialDelay: must be >= 0, got -1s"},
		{"timeLimit negative", config.TuningSet{Name: "a", TimeLimitedLoad: &config.TimeLimitedLoad{TimeLimit: d(-time.Millisecond)}},
			"tuningSets[name=a].timeLimitedLoad.timeLimit: must be >= 0, got -1ms"},
		{"randomized timeLimit negative", config.TuningSet{Name: "a", RandomizedTimeLimitedLoad: &config.RandomizedTimeLimitedLoad{TimeLimit: d(-time.Second)}},
			"tuningSets[name=a].randomizedTimeLimitedLoad.timeLimit: must be >= 0, got -1s"},
		{"parallelismLimit zero", config.TuningSet{Name: "a", ParallelismLimitedLoad: &config.ParallelismLimitedLoad{}},
			"tuningSets[name=a].parallelismLimitedLoad.parallelismLimit: must be >= 1, got 0"},
		{"global qps and burst", config.TuningSet{Name: "a", GlobalQPSLoad: &config.GlobalQPSLoad{QPS: 0, Burst: 0}},
			"tuningSets[name=a].globalQPSLoad.qps: must be > 0, got 0\ntuningSets[name=a].globalQPSLoad.burst: must be >= 1, got 0"},
		{"poisson zero", config.TuningSet{Name: "a", PoissonLoad: &config.PoissonLoad{}},
			"tuningSets[name=a].poissonLoad.expectedActionsPerSecond: must be > 0, got 0"},
		{"no type", config.TuningSet{Name: "a"},
			"tuningSets[name=a]: exactly one of " + all + " must be set, got none"},
		{"two types, one bad", config.TuningSet{Name: "a", QPSLoad: &config.QPSLoad{QPS: 1}, SteppedLoad: &config.SteppedLoad{}},
			"tuningSets[name=a]: exactly one of " + all + " must be set, got 2: qpsLoad, steppedLoad\ntuningSets[name=a].steppedLoad.burstSize: must be >= 1, got 0"},
		{"no name", config.TuningSet{QPSLoad: &config.QPSLoad{QPS: 1}},
			`tuningSets[name=""].name: must not be empty`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.spec)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate error\n got: %q\nwant: %q", got, tc.want)
			}
			if _, nerr := New(tc.spec); (nerr == nil) != (tc.want == "") {
				t.Errorf("New error %v, want failure iff Validate fails", nerr)
			}
		})
	}
}
