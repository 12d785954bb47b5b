package tuningset

import (
	"iter"
	"time"
)

// qpsLoad starts action i at i/qps seconds. A late start happens at once and
// the next one keeps its own deadline, so the average rate stays qps.
type qpsLoad struct{ qps float64 }

func (q qpsLoad) plan(actions int) iter.Seq2[int, time.Duration] {
	return inIndexOrder(actions, func(i int) time.Duration { return seconds(float64(i) / q.qps) })
}
