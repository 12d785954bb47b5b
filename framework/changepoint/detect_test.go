package changepoint

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// exhaustiveStatistic computes q(τ) from its definition, pair by pair.
func exhaustiveStatistic(xs []float64, tau int) float64 {
	x, y := xs[:tau], xs[tau:]
	m, n := float64(len(x)), float64(len(y))
	var across, within1, within2 float64
	for _, a := range x {
		for _, b := range y {
			across += math.Abs(a - b)
		}
	}
	for i := range x {
		for k := i + 1; k < len(x); k++ {
			within1 += math.Abs(x[i] - x[k])
		}
	}
	for j := range y {
		for l := j + 1; l < len(y); l++ {
			within2 += math.Abs(y[j] - y[l])
		}
	}
	e := 2 * across / (m * n)
	if len(x) > 1 {
		e -= within1 / (m * (m - 1) / 2)
	}
	if len(y) > 1 {
		e -= within2 / (n * (n - 1) / 2)
	}
	return m * n / (m + n) * e
}

// TestSplitStatisticsMatchExhaustive: the running sums give the statistic
// of every split of small random series as computing it pair by pair does,
// and the best split is the exhaustive argmax.
func TestSplitStatisticsMatchExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 2 + rng.IntN(14)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.NormFloat64()*10+100*float64(rng.IntN(2))) / 4
		}
		q := splitStatistics(xs)
		for tau := 1; tau < n; tau++ {
			if want := exhaustiveStatistic(xs, tau); math.Abs(q[tau]-want) > 1e-9*max(1, math.Abs(want)) {
				t.Fatalf("trial %d, %v, τ=%d: q = %v, exhaustive %v", trial, xs, tau, q[tau], want)
			}
		}
		minSeg := 1 + rng.IntN(3)
		got, ok := bestSplit(xs, minSeg)
		if !ok {
			if n >= 2*minSeg {
				t.Fatalf("trial %d: no split of %d points at minimum segment %d", trial, n, minSeg)
			}
			continue
		}
		want, wantQ := -1, math.Inf(-1)
		for tau := minSeg; tau <= n-minSeg; tau++ {
			if v := exhaustiveStatistic(xs, tau); v > wantQ+1e-9 {
				want, wantQ = tau, v
			}
		}
		if got != want {
			t.Fatalf("trial %d, %v: best split %d, exhaustive %d", trial, xs, got, want)
		}
	}
}

func TestTTest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		t, df float64
		want  float64
	}{
		// Two-sided critical values of Student's t.
		{"df 10 at 5 %", 2.228138852, 10, 0.05},
		{"df 1 at 5 %", 12.70620474, 1, 0.05},
		{"df 30 at 1 %", 2.749995652, 30, 0.01},
		{"df 8, t 5", 5, 8, 0.001052},
		{"t 0", 0, 12, 1},
	} {
		if got := studentTwoSided(tc.t, tc.df); math.Abs(got-tc.want) > 1e-4*max(1, tc.want*10) {
			t.Errorf("%s: p = %.6f, want %.6f", tc.name, got, tc.want)
		}
	}
	a, b := stats([]float64{1, 2, 3, 4, 5}), stats([]float64{6, 7, 8, 9, 10})
	if p := tTest(a, b); math.Abs(p-0.001052) > 1e-5 {
		t.Errorf("1..5 against 6..10: p = %v, want 0.001052", p)
	}
	if p := tTest(stats([]float64{3, 3, 3}), stats([]float64{3, 3, 3})); p != 1 {
		t.Errorf("equal constants: p = %v, want 1", p)
	}
	if p := tTest(stats([]float64{3, 3, 3}), stats([]float64{4, 4, 4})); p != 0 {
		t.Errorf("different constants: p = %v, want 0", p)
	}
}

// noisy is n points of mean and standard deviation sd, from a fixed seed.
func noisy(rng *rand.Rand, n int, mean, sd float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = mean + rng.NormFloat64()*sd
	}
	return xs
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestDetectPlanted: change points planted in noisy series are found where
// they are, and nothing is found where nothing changed — noise, outliers,
// or a shift too small to count.
func TestDetectPlanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	withOutliers := noisy(rng, 60, 100, 5)
	withOutliers[20], withOutliers[41] = 400, 5
	stepWithOutlier := concat(noisy(rng, 30, 100, 5), noisy(rng, 30, 130, 5))
	stepWithOutlier[45] = 20
	for _, tc := range []struct {
		name string
		xs   []float64
		want []int
	}{
		{"one step", concat(noisy(rng, 30, 100, 5), noisy(rng, 30, 130, 5)), []int{30}},
		{"a step down", concat(noisy(rng, 25, 500, 20), noisy(rng, 25, 300, 20)), []int{25}},
		{"two steps", concat(noisy(rng, 20, 100, 3), noisy(rng, 25, 150, 3), noisy(rng, 20, 120, 3)), []int{20, 45}},
		{"there and back", concat(noisy(rng, 20, 100, 3), noisy(rng, 20, 140, 3), noisy(rng, 20, 100, 3)), []int{20, 40}},
		{"noise only", noisy(rng, 60, 100, 10), nil},
		{"outliers", withOutliers, nil},
		{"a step and an outlier", stepWithOutlier, []int{30}},
		{"a significant but small shift", concat(noisy(rng, 30, 100, 1), noisy(rng, 30, 102, 1)), nil},
		{"exact steps", []float64{5, 5, 5, 5, 5, 9, 9, 9, 9, 9}, []int{5}},
		{"too short", []float64{1, 1, 9, 9, 9}, nil},
		{"a step at the third run", concat([]float64{100, 101, 99}, noisy(rng, 9, 200, 2)), []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cps, err := Detect(tc.xs, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, cp := range cps {
				got = append(got, cp.Index)
				if cp.PValue > DefaultOptions().PValue || math.Abs(cp.Change) < DefaultOptions().MinMagnitude {
					t.Errorf("change point %+v does not pass its own test", cp)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("change points at %v, want %v", got, tc.want)
			}
			again, _ := Detect(tc.xs, DefaultOptions())
			if !reflect.DeepEqual(cps, again) {
				t.Error("a second run of the same series gave other change points")
			}
		})
	}
}

func TestDetectReportsTheSegments(t *testing.T) {
	cps, err := Detect([]float64{10, 10, 10, 10, 20, 20, 20, 20, 20}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 1 {
		t.Fatalf("change points %+v, want one", cps)
	}
	cp := cps[0]
	if cp.Index != 4 || cp.Before.N != 4 || cp.Before.Mean != 10 || cp.After.N != 5 || cp.After.Mean != 20 || cp.Change != 1 {
		t.Errorf("change point %+v, want at 4 from 4 runs of 10 to 5 of 20 (+100 %%)", cp)
	}
}

func TestDetectRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		o    Options
	}{
		{"p-value 0", []float64{1, 2, 3}, Options{PValue: 0, MinSegment: 3}},
		{"segment of 1", []float64{1, 2, 3}, Options{PValue: 0.01, MinSegment: 1}},
		{"negative magnitude", []float64{1, 2, 3}, Options{PValue: 0.01, MinSegment: 3, MinMagnitude: -1}},
		{"NaN", []float64{1, math.NaN(), 3}, DefaultOptions()},
		{"Inf", []float64{1, math.Inf(1), 3}, DefaultOptions()},
	} {
		if _, err := Detect(tc.xs, tc.o); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
