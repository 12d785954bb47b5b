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

func TestCDF(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []float64
		n       int
		want    []Point
	}{
		{"every sample when they are few", []float64{3, 1, 2}, 10, []Point{{1, 1.0 / 3}, {2, 2.0 / 3}, {3, 1}}},
		{"every second of ten for five points", seq(10), 5, []Point{{2, 0.2}, {4, 0.4}, {6, 0.6}, {8, 0.8}, {10, 1}}},
		{"the largest sample always ends it", seq(7), 3, []Point{{2, 2.0 / 7}, {4, 4.0 / 7}, {6, 6.0 / 7}, {7, 1}}},
		{"nothing for no samples", nil, 5, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CDF(tc.samples, tc.n)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i].X != tc.want[i].X || math.Abs(got[i].Y-tc.want[i].Y) > 1e-12 {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
