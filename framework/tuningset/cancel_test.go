package tuningset

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/config"
)

// allTypes has one set of each type, slow enough that a 100-action Execute
// is still starting actions when the test cancels it.
var allTypes = []struct {
	spec     config.TuningSet
	startsBy int // actions the test lets start before cancelling
}{
	{config.TuningSet{Name: "qps", QPSLoad: &config.QPSLoad{QPS: 10}}, 3},
	{config.TuningSet{Name: "randomized", RandomizedLoad: &config.RandomizedLoad{AverageQPS: 10}}, 3},
	{config.TuningSet{Name: "stepped", SteppedLoad: &config.SteppedLoad{BurstSize: 2, StepDelay: config.Duration(time.Second)}}, 4},
	{config.TuningSet{Name: "timeLimited", TimeLimitedLoad: &config.TimeLimitedLoad{TimeLimit: config.Duration(10 * time.Second)}}, 3},
	{config.TuningSet{Name: "randomizedTimeLimited", RandomizedTimeLimitedLoad: &config.RandomizedTimeLimitedLoad{TimeLimit: config.Duration(10 * time.Second)}}, 3},
	{config.TuningSet{Name: "parallelismLimited", ParallelismLimitedLoad: &config.ParallelismLimitedLoad{ParallelismLimit: 2}}, 2},
	{config.TuningSet{Name: "globalQPS", GlobalQPSLoad: &config.GlobalQPSLoad{QPS: 10, Burst: 2}}, 3},
	{config.TuningSet{Name: "poisson", PoissonLoad: &config.PoissonLoad{ExpectedActionsPerSecond: 10}}, 3},
}

// Cancelling stops new starts at once, yet Execute still waits for the
// actions in flight and then reports the cancellation.
func TestCancelStopsStartsAndWaitsForInFlight(t *testing.T) {
	for _, tc := range allTypes {
		t.Run(tc.spec.Name, func(t *testing.T) {
			s := newSim(t)
			ts, err := New(tc.spec, s.opts(WithRandSource(rand.NewPCG(7, 7)))...)
			if err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			var finished atomic.Int64
			action := func(ctx context.Context, i int) {
				s.record(ctx, i)
				<-release
				finished.Add(1)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- ts.Execute(ctx, 100, action) }()

			// Let startsBy actions start, then wait until Execute is blocked
			// (on its timer, or on a full parallelism limit).
			parallel := tc.spec.ParallelismLimitedLoad != nil
			eventually(t, "the first starts", func() bool {
				if len(s.startsCopy()) >= tc.startsBy && (parallel || s.settled(1)) {
					return true
				}
				if s.settled(1) {
					s.clock.advance()
				}
				return false
			})
			before := len(s.startsCopy())
			cancel()
			for range 20 { // time goes on; nothing may start any more
				s.clock.Step(time.Second)
				time.Sleep(100 * time.Microsecond)
			}
			select {
			case err := <-done:
				t.Fatalf("Execute returned (%v) before its in-flight actions finished", err)
			case <-time.After(20 * time.Millisecond):
			}
			if got := len(s.startsCopy()); got != before {
				t.Fatalf("%d actions started after cancel", got-before)
			}
			close(release)
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Execute returned %v, want context.Canceled", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("Execute did not return after its actions finished")
			}
			if f := finished.Load(); f != int64(before) {
				t.Errorf("Execute returned with %d of %d started actions finished", f, before)
			}
		})
	}
}

func TestCancelledBeforeExecuteStartsNothing(t *testing.T) {
	for _, tc := range allTypes {
		t.Run(tc.spec.Name, func(t *testing.T) {
			ts, err := New(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var started atomic.Int64
			err = ts.Execute(ctx, 10, func(context.Context, int) { started.Add(1) })
			if !errors.Is(err, context.Canceled) || started.Load() != 0 {
				t.Errorf("Execute = %v with %d started, want context.Canceled and none", err, started.Load())
			}
		})
	}
}

// Without cancellation, Execute returns nil only after the last action has
// returned, even when every start happened long before.
func TestExecuteWaitsForActions(t *testing.T) {
	for _, tc := range allTypes {
		t.Run(tc.spec.Name, func(t *testing.T) {
			s := newSim(t)
			ts, err := New(tc.spec, s.opts()...)
			if err != nil {
				t.Fatal(err)
			}
			const n = 2
			release := make(chan struct{})
			var finished atomic.Int64
			var once sync.Once
			done := make(chan error, 1)
			go func() {
				done <- ts.Execute(context.Background(), n, func(ctx context.Context, i int) {
					s.record(ctx, i)
					<-release
					finished.Add(1)
				})
			}()
			eventually(t, "every start", func() bool {
				if len(s.startsCopy()) == n {
					return true
				}
				if s.settled(1) {
					s.clock.advance()
				}
				return false
			})
			select {
			case err := <-done:
				t.Fatalf("Execute returned (%v) before its actions finished", err)
			case <-time.After(10 * time.Millisecond):
			}
			once.Do(func() { close(release) })
			if err := <-done; err != nil || finished.Load() != n {
				t.Errorf("Execute = %v with %d of %d finished, want nil and all", err, finished.Load(), n)
			}
		})
	}
}
