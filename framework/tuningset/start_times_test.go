package tuningset

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/config"
)

func TestStartTimes(t *testing.T) {
	const ms = time.Millisecond
	d := func(x time.Duration) config.Duration { return config.Duration(x) }
	tests := []struct {
		name    string
		spec    config.TuningSet
		actions int
		want    []time.Duration // start of index i
	}{
		{"qps 10", config.TuningSet{QPSLoad: &config.QPSLoad{QPS: 10}}, 5,
			[]time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms}},
		{"qps below 1", config.TuningSet{QPSLoad: &config.QPSLoad{QPS: 0.5}}, 3,
			[]time.Duration{0, 2 * time.Second, 4 * time.Second}},
		{"qps 3 is anchored, not accumulated", config.TuningSet{QPSLoad: &config.QPSLoad{QPS: 3}}, 4,
			[]time.Duration{0, 333333333, 666666667, time.Second}},
		{"stepped burst 3 delay 1s", config.TuningSet{SteppedLoad: &config.SteppedLoad{BurstSize: 3, StepDelay: d(time.Second)}}, 7,
			[]time.Duration{0, 0, 0, time.Second, time.Second, time.Second, 2 * time.Second}},
		{"stepped burst 1", config.TuningSet{SteppedLoad: &config.SteppedLoad{BurstSize: 1, StepDelay: d(50 * ms)}}, 3,
			[]time.Duration{0, 50 * ms, 100 * ms}},
		{"stepped no delay", config.TuningSet{SteppedLoad: &config.SteppedLoad{BurstSize: 2, StepDelay: 0}}, 4,
			[]time.Duration{0, 0, 0, 0}},
		{"time limited 4 over 1s", config.TuningSet{TimeLimitedLoad: &config.TimeLimitedLoad{TimeLimit: d(time.Second)}}, 4,
			[]time.Duration{0, 250 * ms, 500 * ms, 750 * ms}},
		{"time limited 3 over 1s", config.TuningSet{TimeLimitedLoad: &config.TimeLimitedLoad{TimeLimit: d(time.Second)}}, 3,
			[]time.Duration{0, 333333333, 666666666}},
		{"time limited 0", config.TuningSet{TimeLimitedLoad: &config.TimeLimitedLoad{TimeLimit: 0}}, 3,
			[]time.Duration{0, 0, 0}},
		{"time limited one action", config.TuningSet{TimeLimitedLoad: &config.TimeLimitedLoad{TimeLimit: d(time.Hour)}}, 1,
			[]time.Duration{0}},
		{"parallelism limited, quick actions", config.TuningSet{ParallelismLimitedLoad: &config.ParallelismLimitedLoad{ParallelismLimit: 2}}, 5,
			[]time.Duration{0, 0, 0, 0, 0}},
		{"global qps 4 burst 1", config.TuningSet{GlobalQPSLoad: &config.GlobalQPSLoad{QPS: 4, Burst: 1}}, 3,
			[]time.Duration{0, 250 * ms, 500 * ms}},
		{"global qps 4 burst 3", config.TuningSet{GlobalQPSLoad: &config.GlobalQPSLoad{QPS: 4, Burst: 3}}, 6,
			[]time.Duration{0, 0, 0, 250 * ms, 500 * ms, 750 * ms}},
		{"no actions", config.TuningSet{QPSLoad: &config.QPSLoad{QPS: 1}}, 0, nil},
		{"initial delay, then qps 10", config.TuningSet{InitialDelay: d(2 * time.Second), QPSLoad: &config.QPSLoad{QPS: 10}}, 3,
			[]time.Duration{2 * time.Second, 2*time.Second + 100*ms, 2*time.Second + 200*ms}},
		{"initial delay, then a burst", config.TuningSet{InitialDelay: d(500 * ms), SteppedLoad: &config.SteppedLoad{BurstSize: 2, StepDelay: d(time.Second)}}, 3,
			[]time.Duration{500 * ms, 500 * ms, 1500 * ms}},
		{"initial delay, no actions", config.TuningSet{InitialDelay: d(time.Hour), QPSLoad: &config.QPSLoad{QPS: 1}}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Name = "ts"
			s := newSim(t)
			ts, err := New(tc.spec, s.opts()...)
			if err != nil {
				t.Fatal(err)
			}
			errs := s.run(func() error { return ts.Execute(context.Background(), tc.actions, s.record) })
			if errs[0] != nil {
				t.Fatalf("Execute: %v", errs[0])
			}
			if got := s.launchedCopy(); !slices.Equal(got, upTo(tc.actions)) {
				t.Errorf("launch order %v, want %v", got, upTo(tc.actions))
			}
			at := s.startAt("")
			if len(at) != tc.actions {
				t.Fatalf("%d actions started, want %d", len(at), tc.actions)
			}
			for i, want := range tc.want {
				if at[i] != want {
					t.Errorf("action %d started at %v, want %v", i, at[i], want)
				}
			}
		})
	}
}

// A late wake-up must make the next starts catch up at once, keeping the
// schedule anchored to the start of Execute instead of shifting it.
func TestQPSLoadCatchesUpWhenLate(t *testing.T) {
	s := newSim(t)
	ts, err := New(config.TuningSet{Name: "q", QPSLoad: &config.QPSLoad{QPS: 10}}, s.opts()...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ts.Execute(context.Background(), 6, s.record) }()
	// Action 0 starts at 0; then time jumps 350ms in one go, as after a stall.
	eventually(t, "first start and next timer", func() bool { return s.settled(1) && len(s.startsCopy()) == 1 })
	s.clock.Step(350 * time.Millisecond)
	if errs := s.run(func() error { return <-done }); errs[0] != nil {
		t.Fatalf("Execute: %v", errs[0])
	}
	at := s.startAt("")
	want := []time.Duration{0, 350, 350, 350, 400, 500} // ms
	for i, w := range want {
		if at[i] != w*time.Millisecond {
			t.Errorf("action %d started at %v, want %v", i, at[i], w*time.Millisecond)
		}
	}
}

func TestExecuteRejectsBadArguments(t *testing.T) {
	ts, err := New(config.TuningSet{Name: "q", QPSLoad: &config.QPSLoad{QPS: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Execute(context.Background(), -1, func(context.Context, int) {}); err == nil {
		t.Error("Execute(-1 actions) returned nil, want an error")
	}
	if err := ts.Execute(context.Background(), 1, nil); err == nil {
		t.Error("Execute(nil action) returned nil, want an error")
	}
}
