package abtest

import (
	"math"
	"math/rand/v2"
	"slices"
)

// MannWhitney is the two-sided p-value of the Mann–Whitney U test that a
// and b come from the same distribution, and U of a. Exact (every split of
// the ranks counted) when neither side has more than 12 values and there
// are no ties; the normal approximation with the tie and continuity
// corrections otherwise.
func MannWhitney(a, b []float64) (u, p float64) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	type v struct {
		x     float64
		first bool
	}
	all := make([]v, 0, n1+n2)
	for _, x := range a {
		all = append(all, v{x, true})
	}
	for _, x := range b {
		all = append(all, v{x, false})
	}
	slices.SortFunc(all, func(p, q v) int {
		switch {
		case p.x < q.x:
			return -1
		case p.x > q.x:
			return 1
		}
		return 0
	})
	var rankSum, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].x == all[i].x {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1..j, averaged
		for k := i; k < j; k++ {
			if all[k].first {
				rankSum += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u = rankSum - float64(n1*(n1+1))/2
	if !ties && n1 <= 12 && n2 <= 12 {
		return u, exactP(u, n1, n2)
	}
	mean := float64(n1*n2) / 2
	n := float64(n1 + n2)
	variance := float64(n1*n2) / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		return u, 1
	}
	z := (math.Abs(u-mean) - 0.5) / math.Sqrt(variance)
	return u, math.Min(1, math.Erfc(math.Max(z, 0)/math.Sqrt2))
}

// exactP is the two-sided p-value of U for samples of n1 and n2 without
// ties: twice the smaller tail of U's distribution. ways[i][j][s] counts
// the orders of i a's and j b's in which the a's are preceded by s b's in
// all — U = s; the last value is an a (preceded by all j b's) or a b.
func exactP(u float64, n1, n2 int) float64 {
	ways := make([][][]float64, n1+1)
	for i := range ways {
		ways[i] = make([][]float64, n2+1)
		for j := range ways[i] {
			ways[i][j] = make([]float64, i*j+1)
			if i == 0 || j == 0 {
				ways[i][j][0] = 1
				continue
			}
			for s := range ways[i][j] {
				if s >= j && s-j <= (i-1)*j {
					ways[i][j][s] += ways[i-1][j][s-j]
				}
				if s <= i*(j-1) {
					ways[i][j][s] += ways[i][j-1][s]
				}
			}
		}
	}
	var total, below, above float64
	for s, w := range ways[n1][n2] {
		total += w
		if float64(s) <= u {
			below += w
		}
		if float64(s) >= u {
			above += w
		}
	}
	return math.Min(1, 2*math.Min(below, above)/total)
}

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
