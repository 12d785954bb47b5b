package tuningset

import (
	"iter"
	"math/bits"
	"time"
)

// timeLimitedLoad spreads the starts evenly over timeLimit: action i of n
// starts at i*timeLimit/n, so the last one starts one gap before timeLimit
// and a phase takes about timeLimit whatever its size.
type timeLimitedLoad struct{ timeLimit time.Duration }

func (t timeLimitedLoad) plan(actions int) iter.Seq2[int, time.Duration] {
	return inIndexOrder(actions, func(i int) time.Duration {
		// 128-bit product: exact, and no overflow for long limits.
		hi, lo := bits.Mul64(uint64(t.timeLimit), uint64(i))
		q, _ := bits.Div64(hi, lo, uint64(actions)) // i < actions, so q < timeLimit
		return time.Duration(q)
	})
}
