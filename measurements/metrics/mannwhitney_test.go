package metrics

import (
	"math"
	"testing"
)

func TestMannWhitneyP(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		// Of the C(8,4) = 70 deals, only "all lowest" and "all highest" are
		// as far from the middle as complete separation.
		{"four below four", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 2.0 / 70},
		{"four above four", []float64{15, 16, 17, 18}, []float64{5, 6, 7, 8}, 2.0 / 70},
		// x's rank sum 10 is half a rank from the expected 10.5, and no
		// sum of three whole ranks is nearer: every deal is as far out.
		{"interleaved", []float64{1, 4, 5}, []float64{2, 3, 6}, 1},
		// x holds ranks 1, 2, 4: sum 7, 3.5 from the expected 10.5. Of the
		// C(6,3) = 20 deals (sums 6:1 7:1 8:2 9:3 10:3 11:3 12:3 13:2 14:1
		// 15:1), those summing to 6, 7, 14 or 15 are as far out.
		{"mostly below", []float64{1, 2, 4}, []float64{3, 5, 6}, 4.0 / 20},
		// All tied: every deal has the same rank sum.
		{"all tied", []float64{3, 3}, []float64{3, 3, 3}, 1},
		// Ties across the groups: pooled 1 2 2 3 → ranks 1, 2.5, 2.5, 4;
		// x = {1, 2} has 3.5 against 5 expected; deals of two: 3.5, 3.5, 5,
		// 5, 6.5, 6.5 — four of six as far out.
		{"tie across groups", []float64{1, 2}, []float64{2, 3}, 4.0 / 6},
		{"one against one", []float64{1}, []float64{2}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MannWhitneyP(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("MannWhitneyP(%v, %v) = %v, want %v", tc.x, tc.y, got, tc.want)
			}
		})
	}
	if p := MannWhitneyP(nil, []float64{1}); !math.IsNaN(p) {
		t.Errorf("MannWhitneyP of an empty sample = %v, want NaN", p)
	}
}
