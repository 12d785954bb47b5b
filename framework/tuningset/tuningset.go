package tuningset

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"k8s.io/utils/clock"

	"github.com/kscale/kscale/framework/config"
)

// TuningSet is the one thing a phase executor needs from a tuning set: when
// to start each of its actions.
type TuningSet interface {
	// Execute starts actions actions, each in its own goroutine, paced by
	// the set, with indices 0..actions-1 in order of start (a
	// randomizedTimeLimitedLoad starts indices in random order). It returns
	// when every started action has returned. When ctx ends before every
	// action was started, no further action starts, the started ones are
	// waited for, and ctx.Err() is returned; actions get ctx so they can
	// stop early too.
	Execute(ctx context.Context, actions int, action func(ctx context.Context, index int)) error
}

// Option changes where a tuning set gets time and randomness from, so tests
// can make pacing deterministic.
type Option func(*options)

type options struct {
	clock   clock.Clock
	rand    rand.Source
	onSpawn func(index int)
}

// WithClock replaces the real clock, so tests can step time with
// k8s.io/utils/clock/testing.FakeClock instead of sleeping.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithRandSource replaces the randomly seeded source of the randomized
// types, so a seeded source gives the same start times on every run. The
// source is used under a lock, so it need not be safe for concurrent use.
func WithRandSource(src rand.Source) Option { return func(o *options) { o.rand = src } }

// withSpawnHook lets tests see each launch synchronously, before the action's
// goroutine runs, so they know when every launched action has run.
func withSpawnHook(f func(index int)) Option { return func(o *options) { o.onSpawn = f } }

// env is what every type shares: time, randomness and the test hook.
type env struct {
	clock   clock.Clock
	rng     *rand.Rand
	onSpawn func(index int)
}

func newEnv(opts []Option) env {
	o := options{clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.rand == nil {
		o.rand = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	return env{clock: o.clock, rng: rand.New(&lockedSource{src: o.rand}), onSpawn: o.onSpawn}
}

// New validates spec and builds its tuning set. A globalQPSLoad set built by
// New has a bucket of its own; use a Registry to share it by name.
func New(spec config.TuningSet, opts ...Option) (TuningSet, error) {
	if err := Validate(spec); err != nil {
		return nil, err
	}
	return build(spec, newEnv(opts)), nil
}

// build assumes spec is valid.
func build(spec config.TuningSet, e env) TuningSet {
	t := buildType(spec, e)
	if d := spec.InitialDelay.Std(); d > 0 {
		return &delayed{env: e, delay: d, set: t}
	}
	return t
}

// buildType builds the set's one pacing type.
func buildType(spec config.TuningSet, e env) TuningSet {
	switch {
	case spec.QPSLoad != nil:
		return &scheduled{env: e, planner: qpsLoad{qps: spec.QPSLoad.QPS}}
	case spec.RandomizedLoad != nil:
		return &scheduled{env: e, planner: randomizedLoad{averageQPS: spec.RandomizedLoad.AverageQPS, rng: e.rng}}
	case spec.SteppedLoad != nil:
		return &scheduled{env: e, planner: steppedLoad{burstSize: spec.SteppedLoad.BurstSize, stepDelay: spec.SteppedLoad.StepDelay.Std()}}
	case spec.TimeLimitedLoad != nil:
		return &scheduled{env: e, planner: timeLimitedLoad{timeLimit: spec.TimeLimitedLoad.TimeLimit.Std()}}
	case spec.RandomizedTimeLimitedLoad != nil:
		return &scheduled{env: e, planner: randomizedTimeLimitedLoad{timeLimit: spec.RandomizedTimeLimitedLoad.TimeLimit.Std(), rng: e.rng}}
	case spec.ParallelismLimitedLoad != nil:
		return &parallelismLimitedLoad{env: e, limit: spec.ParallelismLimitedLoad.ParallelismLimit}
	case spec.GlobalQPSLoad != nil:
		return newGlobalQPSLoad(e, spec.GlobalQPSLoad.QPS, spec.GlobalQPSLoad.Burst)
	case spec.PoissonLoad != nil:
		return &scheduled{env: e, planner: poissonLoad{rate: spec.PoissonLoad.ExpectedActionsPerSecond, rng: e.rng}}
	}
	panic(fmt.Sprintf("tuningset: build called with an unvalidated spec %q", spec.Name))
}

// checkExecute rejects arguments that would otherwise panic deep inside a
// goroutine.
func checkExecute(actions int, action func(context.Context, int)) error {
	if actions < 0 {
		return fmt.Errorf("tuningset: actions must be >= 0, got %d", actions)
	}
	if action == nil {
		return errors.New("tuningset: action must not be nil")
	}
	return nil
}
