package metrics

import (
	"math"
	"sort"
)

// MannWhitneyP is the exact two-sided p-value of the Mann–Whitney U test
// that x and y come from one distribution: the chance that, with the pooled
// samples dealt at random into groups of len(x) and len(y), x's rank sum lies
// at least as far from its expected value as it does. Tied samples share
// their mean rank, and the deals are counted over those ranks, so the value
// stays exact with ties. It is what benchstat uses to tell whether two
// benchmarks differ: with a handful of runs on a noisy machine, a difference
// of means alone says nothing. The count is exhaustive (a table of rank sums,
// O(n³·len(x))), meant for the few runs a benchmark repeats. NaN if either
// sample is empty.
func MannWhitneyP(x, y []float64) float64 {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN()
	}
	type sample struct {
		v       float64
		inFirst bool
	}
	pooled := make([]sample, 0, len(x)+len(y))
	for _, v := range x {
		pooled = append(pooled, sample{v, true})
	}
	for _, v := range y {
		pooled = append(pooled, sample{v, false})
	}
	sort.Slice(pooled, func(i, j int) bool { return pooled[i].v < pooled[j].v })

	// Ranks doubled, so that mean ranks of ties stay integers.
	n := len(pooled)
	ranks := make([]int, n)
	for i := 0; i < n; {
		j := i
		for j < n && pooled[j].v == pooled[i].v {
			j++
		}
		for k := i; k < j; k++ {
			ranks[k] = i + j + 1 // 2 × mean of the ranks i+1 … j
		}
		i = j
	}
	observed, total := 0, 0
	for i, s := range pooled {
		total += ranks[i]
		if s.inFirst {
			observed += ranks[i]
		}
	}

	// deals[k][s]: ways to pick k of the samples seen so far with doubled
	// rank sum s.
	k := len(x)
	deals := make([][]float64, k+1)
	for i := range deals {
		deals[i] = make([]float64, total+1)
	}
	deals[0][0] = 1
	for _, r := range ranks {
		for picked := k; picked >= 1; picked-- {
			for s := total; s >= r; s-- {
				deals[picked][s] += deals[picked-1][s-r]
			}
		}
	}
	// x's expected rank sum is k(n+1)/2: doubled, k(n+1).
	expected := k * (n + 1)
	distance := abs(observed - expected)
	var extreme, all float64
	for s, ways := range deals[k] {
		all += ways
		if abs(s-expected) >= distance {
			extreme += ways
		}
	}
	return extreme / all
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
