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
	return afterRandomGaps(actions, func() float64 { return p.rng.ExpFloat64() / p.rate })
}
