package changepoint

import (
	"fmt"
	"math"
	"slices"
)

// Options tune Detect.
type Options struct {
	// PValue is the significance level: a change point's two sides must
	// differ in Student's t-test at p <= PValue, corrected for the splits
	// it was the best of.
	PValue float64
	// MinMagnitude is the smallest relative change of the mean, |after -
	// before| / |before|, that counts: a significant shift of 0.5 % in a
	// latency is not what a release team pages for.
	MinMagnitude float64
	// MinSegment is the fewest points on either side of a change point.
	MinSegment int
}

// DefaultOptions are Hunter's significance level, a 5 % step and three
// runs a side.
func DefaultOptions() Options {
	return Options{PValue: 0.001, MinMagnitude: 0.05, MinSegment: 3}
}

func (o Options) validate() error {
	if o.PValue <= 0 || o.PValue >= 1 || o.MinMagnitude < 0 || o.MinSegment < 2 {
		return fmt.Errorf("change point options %+v: want 0 < PValue < 1, MinMagnitude >= 0, MinSegment >= 2", o)
	}
	return nil
}

// ChangePoint is where a series shifts: Index is the first point after
// the shift; Before and After are the segments between it and its
// neighbouring change points (or the series' ends).
type ChangePoint struct {
	Index  int   `json:"index"`
	Before Stats `json:"before"`
	After  Stats `json:"after"`
	// PValue is the t-test's of Before and After, times the splits of the
	// two the change point was chosen among.
	PValue float64 `json:"pValue"`
	// Change is (After.Mean - Before.Mean) / |Before.Mean|; ±Inf when the
	// mean before is 0.
	Change float64 `json:"change"`
}

// Detect returns the series' change points in order. Candidates come from
// binary segmentation down to MinSegment: each segment split where the
// E-Divisive means statistic (α = 1) is largest. Each candidate is then
// tested against its neighbours — the segments up to the candidates on
// either side — and the weakest failing one dropped, until every one left
// passes the t-test and the minimum magnitude. A step that comes back
// (up, then down again) is found, which stopping at the first split that
// fails would miss.
func Detect(xs []float64, o Options) ([]ChangePoint, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("point %d of the series is %v", i, x)
		}
	}
	// Every split a recursive E-Divisive segmentation makes is a
	// candidate; the t-tests then keep those that hold.
	var cuts []int
	var split func(lo, hi int)
	split = func(lo, hi int) {
		tau, ok := bestSplit(xs[lo:hi], o.MinSegment)
		if !ok {
			return
		}
		cuts = append(cuts, lo+tau)
		split(lo, lo+tau)
		split(lo+tau, hi)
	}
	split(0, len(xs))
	slices.Sort(cuts)
	for {
		weakest, weakestP := -1, 0.0
		for i, c := range cuts {
			lo, hi := 0, len(xs)
			if i > 0 {
				lo = cuts[i-1]
			}
			if i+1 < len(cuts) {
				hi = cuts[i+1]
			}
			if p, pass := test(xs[lo:c], xs[c:hi], o); !pass && p >= weakestP {
				weakest, weakestP = i, p
			}
		}
		if weakest < 0 {
			break
		}
		cuts = slices.Delete(cuts, weakest, weakest+1)
	}
	out := make([]ChangePoint, len(cuts))
	for i, c := range cuts {
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = cuts[i-1]
		}
		if i+1 < len(cuts) {
			hi = cuts[i+1]
		}
		p, _ := test(xs[lo:c], xs[c:hi], o)
		before, after := stats(xs[lo:c]), stats(xs[c:hi])
		out[i] = ChangePoint{Index: c, Before: before, After: after, PValue: p, Change: relative(before.Mean, after.Mean)}
	}
	return out, nil
}

// test reports the p-value of the split of two adjacent segments and
// whether it makes a change point. The split was chosen as the best of
// every split of the two, so the t-test's p-value is multiplied by their
// count (Bonferroni): the best of fifty splits of pure noise passes a
// t-test at 0.001 far more often than one split in a thousand.
func test(before, after []float64, o Options) (float64, bool) {
	if len(before) < o.MinSegment || len(after) < o.MinSegment {
		return 1, false
	}
	b, a := stats(before), stats(after)
	splits := len(before) + len(after) - 2*o.MinSegment + 1
	p := min(1, tTest(b, a)*float64(splits))
	return p, p <= o.PValue && math.Abs(relative(b.Mean, a.Mean)) >= o.MinMagnitude
}

func relative(before, after float64) float64 {
	if before == 0 {
		switch {
		case after > 0:
			return math.Inf(1)
		case after < 0:
			return math.Inf(-1)
		}
		return 0
	}
	return (after - before) / math.Abs(before)
}

// bestSplit is the split τ (minSeg <= τ <= len-minSeg) with the largest
// E-Divisive means statistic; the first on ties.
func bestSplit(xs []float64, minSeg int) (int, bool) {
	n := len(xs)
	if n < 2*minSeg {
		return 0, false
	}
	q := splitStatistics(xs)
	best := minSeg
	for tau := minSeg + 1; tau <= n-minSeg; tau++ {
		if q[tau] > q[best] {
			best = tau
		}
	}
	return best, true
}

// splitStatistics is, for every split τ of xs (1 <= τ < len; index 0 is
// unused), the E-Divisive means statistic with α = 1:
//
//	q(τ) = mn/(m+n) · (2/(mn)·Σ|x−y| − Σ|x−x'|/C(m,2) − Σ|y−y'|/C(n,2)),
//
// x the m points before τ, y the n from τ. The sums of distances within
// each side and across are kept as τ moves right: O(len²) in all.
func splitStatistics(xs []float64) []float64 {
	n := len(xs)
	q := make([]float64, max(n, 1))
	var left, right, across float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			right += math.Abs(xs[i] - xs[j])
		}
	}
	for tau := 1; tau < n; tau++ {
		// Point tau-1 moves from the right to the left.
		k := tau - 1
		var toLeft, toRight float64
		for i := 0; i < k; i++ {
			toLeft += math.Abs(xs[i] - xs[k])
		}
		for j := k + 1; j < n; j++ {
			toRight += math.Abs(xs[k] - xs[j])
		}
		left += toLeft
		right -= toRight
		across += toRight - toLeft
		q[tau] = statistic(tau, n-tau, left, right, across)
	}
	return q
}

// statistic is q for m points before and n after, given the sums of
// distances within each side and across.
func statistic(m, n int, left, right, across float64) float64 {
	fm, fn := float64(m), float64(n)
	e := 2 * across / (fm * fn)
	if m > 1 {
		e -= left / (fm * (fm - 1) / 2)
	}
	if n > 1 {
		e -= right / (fn * (fn - 1) / 2)
	}
	return fm * fn / (fm + fn) * e
}
