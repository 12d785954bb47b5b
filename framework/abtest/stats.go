package abtest

import (
	"math"
	"math/rand/v2"
	"slices"
)

// median of xs (xs is left as it was).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// BootstrapMedianDiff is a percentile interval, at the given confidence,
// of median(b) - median(a), from resamples drawn with a fixed seed: the
// same runs give the same interval.
func BootstrapMedianDiff(a, b []float64, confidence float64, resamples int) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(0x6b7363616c65, uint64(len(a)*1000+len(b))))
	diffs := make([]float64, resamples)
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	for k := range diffs {
		for i := range ra {
			ra[i] = a[rng.IntN(len(a))]
		}
		for i := range rb {
			rb[i] = b[rng.IntN(len(b))]
		}
		diffs[k] = median(rb) - median(ra)
	}
	slices.Sort(diffs)
	tail := (1 - confidence) / 2
	return quantile(diffs, tail), quantile(diffs, 1-tail)
}

// quantile of sorted xs, interpolated.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// stdDev is the sample standard deviation.
func stdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
