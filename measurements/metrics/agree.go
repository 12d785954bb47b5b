package metrics

import (
	"math"
	"sort"
)

// BucketWidth is the width of the bucket of bounds that holds x: from the
// previous upper bound (0 for the first bucket) to the first bound at or
// above x. It is +Inf beyond the last finite bound. bounds must be sorted.
func BucketWidth(bounds []float64, x float64) float64 {
	i := sort.SearchFloat64s(bounds, x)
	if i == len(bounds) || math.IsInf(bounds[i], +1) {
		return math.Inf(+1)
	}
	lower := 0.0
	if i > 0 {
		lower = bounds[i-1]
	}
	return bounds[i] - lower
}

// Agree reports whether two estimates of one quantile agree: within rel of
// the larger one, or no further apart than the width of the bucket of
// bounds holding the larger one, the resolution a histogram quantile has.
// NaN agrees with nothing.
func Agree(a, b, rel float64, bounds []float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	diff, larger := math.Abs(a-b), math.Max(math.Abs(a), math.Abs(b))
	if diff <= rel*larger {
		return true
	}
	return len(bounds) > 0 && diff <= BucketWidth(bounds, math.Max(a, b))
}

// Bounds are the histogram's finite upper bounds, in order.
func (h Histogram) Bounds() []float64 {
	out := make([]float64, 0, len(h.Buckets))
	for _, b := range h.Buckets {
		if !math.IsInf(b.UpperBound, +1) {
			out = append(out, b.UpperBound)
		}
	}
	return out
}
