package metrics

import (
	"math"
	"testing"
)

func TestNearestRank(t *testing.T) {
	ten := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	for _, tc := range []struct {
		name    string
		samples []float64
		p, want float64
	}{
		{"p50 of 1..10 is the 5th", ten, 50, 5},
		{"p90 of 1..10 is the 9th", ten, 90, 9},
		{"p99 of 1..10 is the largest", ten, 99, 10},
		{"p100 is the largest", ten, 100, 10},
		{"a tiny p is the smallest", ten, 0.1, 1},
		{"one sample is every percentile", []float64{42}, 99, 42},
		{"p99 of 200 is the 198th", seq(200), 99, 198},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NearestRank(tc.samples, tc.p); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if !math.IsNaN(NearestRank(nil, 50)) {
		t.Fatal("no samples must give NaN")
	}
	if ten[0] != 10 {
		t.Fatal("NearestRank sorted its caller's slice")
	}
	p := NearestRankPercentiles(ten)
	if p != (Percentiles{5, 9, 10}) || p.Data()["Perc90"] != 9 {
		t.Fatalf("percentiles %+v", p)
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
