package tuningset

import (
	"iter"
	"time"
)

// steppedLoad starts burstSize actions at once, then the next burstSize
// stepDelay later, and so on: burst k starts at k*stepDelay.
type steppedLoad struct {
	burstSize int
	stepDelay time.Duration
}

func (s steppedLoad) plan(actions int) iter.Seq2[int, time.Duration] {
	return inIndexOrder(actions, func(i int) time.Duration {
		return time.Duration(i/s.burstSize) * s.stepDelay
	})
}
