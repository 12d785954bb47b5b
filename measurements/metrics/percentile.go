package metrics

import (
	"math"
	"sort"
)

// NearestRank returns the p-th percentile (0 < p ≤ 100) of samples by the
// nearest-rank method: the smallest sample such that at least p % of the
// samples are at or below it. It is an observed value, never interpolated,
// which is what a "p99 of pod startups" means to a reader. samples need not
// be sorted; NaN for none.
func NearestRank(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	sorted := samples
	if !sort.Float64sAreSorted(sorted) {
		sorted = append([]float64(nil), samples...)
		sort.Float64s(sorted)
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Percentiles are the three percentiles every latency summary reports.
type Percentiles struct {
	Perc50, Perc90, Perc99 float64
}

// NearestRankPercentiles returns p50, p90 and p99 of samples by NearestRank.
func NearestRankPercentiles(samples []float64) Percentiles {
	sorted := append([]float64(nil), samples...)
	sort.Float64s(sorted)
	return Percentiles{
		Perc50: NearestRank(sorted, 50),
		Perc90: NearestRank(sorted, 90),
		Perc99: NearestRank(sorted, 99),
	}
}

// Data returns the percentiles as a DataItem's data map.
func (p Percentiles) Data() map[string]float64 {
	return map[string]float64{"Perc50": p.Perc50, "Perc90": p.Perc90, "Perc99": p.Perc99}
}

// CDF returns the empirical distribution of samples as at most n points
// (x = a sample, y = the fraction of samples at or below it), evenly
// spaced in rank and always ending at the largest sample, for plotting.
func CDF(samples []float64, n int) []Point {
	if len(samples) == 0 || n <= 0 {
		return nil
	}
	sorted := append([]float64(nil), samples...)
	sort.Float64s(sorted)
	step := max(1, len(sorted)/n)
	var out []Point
	for i := step - 1; i < len(sorted); i += step {
		out = append(out, Point{X: sorted[i], Y: float64(i+1) / float64(len(sorted))})
	}
	if last := len(sorted) - 1; out[len(out)-1].Y != 1 {
		out = append(out, Point{X: sorted[last], Y: 1})
	}
	return out
}
