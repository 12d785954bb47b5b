package tuningset

import (
	"cmp"
	"iter"
	"math/rand/v2"
	"slices"
	"time"
)

// randomizedTimeLimitedLoad starts each action at its own uniform random
// time in [0, timeLimit), drawn independently, so starts cluster and thin
// out as in real traffic while the phase still ends within timeLimit.
// Indices therefore start in random order.
type randomizedTimeLimitedLoad struct {
	timeLimit time.Duration
	rng       *rand.Rand
}

func (r randomizedTimeLimitedLoad) plan(actions int) iter.Seq2[int, time.Duration] {
	return func(yield func(int, time.Duration) bool) {
		at := make([]time.Duration, actions)
		order := make([]int, actions)
		for i := range at {
			if r.timeLimit > 0 {
				at[i] = time.Duration(r.rng.Int64N(int64(r.timeLimit)))
			}
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
		for _, i := range order {
			if !yield(i, at[i]) {
				return
			}
		}
	}
}
