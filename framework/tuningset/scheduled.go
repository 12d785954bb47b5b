package tuningset

import (
	"context"
	"iter"
	"math"
	"time"
)

// planner is a tuning set whose start times can be computed up front, as
// offsets from the start of Execute. Keeping the plan separate from the
// waiting lets tests check a plan exactly and lets every planned type share
// one drift-free executor.
type planner interface {
	// plan yields (index, offset) in order of start; offsets never decrease.
	plan(actions int) iter.Seq2[int, time.Duration]
}

// scheduled executes a planner's plan against the clock.
type scheduled struct {
	env     env
	planner planner
}

func (s *scheduled) Execute(ctx context.Context, actions int, action func(context.Context, int)) error {
	if err := checkExecute(actions, action); err != nil {
		return err
	}
	l := s.env.launcher(ctx, action)
	a := alarm{clock: s.env.clock}
	defer a.stop()
	start := s.env.clock.Now()
	var err error
	for index, offset := range s.planner.plan(actions) {
		if err = a.waitUntil(ctx, start.Add(offset)); err != nil {
			break
		}
		l.launch(index, nil)
	}
	l.wait()
	return err
}

// inIndexOrder is the plan of the types that start index i at a fixed
// offset.
func inIndexOrder(actions int, offset func(i int) time.Duration) iter.Seq2[int, time.Duration] {
	return func(yield func(int, time.Duration) bool) {
		for i := range actions {
			if !yield(i, offset(i)) {
				return
			}
		}
	}
}

// afterRandomGaps is the plan of the types that start the first action at
// once and each next one a random gap (in seconds, from gap) after the one
// before. The gaps are summed unrounded, so rounding does not drift.
func afterRandomGaps(actions int, gap func() float64) iter.Seq2[int, time.Duration] {
	return func(yield func(int, time.Duration) bool) {
		elapsed := 0.0
		for i := range actions {
			if i > 0 {
				elapsed += gap()
			}
			if !yield(i, seconds(elapsed)) {
				return
			}
		}
	}
}

// seconds converts to a Duration rounded to the nanosecond, so that for
// example 3/10 s is exactly 300ms, saturating instead of overflowing for
// absurdly low rates.
func seconds(s float64) time.Duration {
	ns := math.Round(s * float64(time.Second))
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
