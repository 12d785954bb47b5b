package tuningset

import (
	"iter"
	"math/rand/v2"
	"time"
)

// randomizedLoad starts the first action at once and then waits a gap drawn
// uniformly from [0, 2/averageQPS) before each next one, so the mean rate is
// averageQPS but the cluster does not see a perfectly regular beat.
type randomizedLoad struct {
	averageQPS float64
	rng        *rand.Rand
}

func (r randomizedLoad) plan(actions int) iter.Seq2[int, time.Duration] {
	return afterRandomGaps(actions, func() float64 { return r.rng.Float64() * 2 / r.averageQPS })
}
