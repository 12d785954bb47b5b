package tuningset

import (
	"iter"
	"math/rand/v2"
	"time"
)

// poissonLoad starts the first action at once and then waits exponentially
// distributed gaps with mean 1/rate, so starts form a Poisson process — the
// usual model of independent clients.
type poissonLoad struct {
	rate float64
	rng  *rand.Rand
}

func (p poissonLoad) plan(actions int) iter.Seq2[int, time.Duration] {
	return func(yield func(int, time.Duration) bool) {
		elapsed := 0.0 // seconds; summed unrounded so rounding does not drift
		for i := range actions {
			if i > 0 {
				elapsed += p.rng.ExpFloat64() / p.rate
			}
			if !yield(i, seconds(elapsed)) {
				return
			}
		}
	}
}
