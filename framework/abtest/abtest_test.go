package abtest

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

func TestMannWhitney(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  []float64
		wantU float64
		wantP float64
	}{
		// Exact: 2 of the C(10,5) = 252 orders are this extreme.
		{"5 below 5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252},
		{"5 above 5", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252},
		// U = 2 of 3×4: 4 of the 35 orders have U <= 2, doubled.
		{"3 and 4 interleaved", []float64{1, 2, 5}, []float64{3, 4, 6, 7}, 2, 2 * 4.0 / 35},
		{"same values", []float64{5, 5, 5}, []float64{5, 5, 5}, 4.5, 1},
	} {
		u, p := MannWhitney(tc.a, tc.b)
		if u != tc.wantU || math.Abs(p-tc.wantP) > 1e-9 {
			t.Errorf("%s: U = %v, p = %v; want %v, %v", tc.name, u, p, tc.wantU, tc.wantP)
		}
	}
	// The exact distribution against enumerating every order of 4 + 4.
	a, b := []float64{1, 2, 4, 7}, []float64{3, 5, 6, 8}
	u, p := MannWhitney(a, b)
	var below, above, total float64
	var rec func(i, j int, s float64)
	rec = func(i, j int, s float64) {
		if i == 4 && j == 4 {
			total++
			if s <= u {
				below++
			}
			if s >= u {
				above++
			}
			return
		}
		if i < 4 {
			rec(i+1, j, s+float64(j))
		}
		if j < 4 {
			rec(i, j+1, s)
		}
	}
	rec(0, 0, 0)
	if want := math.Min(1, 2*math.Min(below, above)/total); u != 4 || total != 70 || math.Abs(p-want) > 1e-12 {
		t.Errorf("U = %v, p = %v, enumerated %v of %v orders", u, p, want, total)
	}
	// Large samples use the normal approximation.
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float64, 40), make([]float64, 40)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()+1.5
	}
	if _, p := MannWhitney(x, y); p > 1e-6 {
		t.Errorf("1.5 sd apart, 40 a side: p = %v", p)
	}
}

func TestBootstrapIsDeterministicAndCoversTheShift(t *testing.T) {
	a := []float64{350, 362, 341, 355, 349}
	b := []float64{1340, 1372, 1351, 1329, 1388}
	lo, hi := BootstrapMedianDiff(a, b, 0.95, 10000)
	lo2, hi2 := BootstrapMedianDiff(a, b, 0.95, 10000)
	if lo != lo2 || hi != hi2 {
		t.Fatal("the same runs gave two intervals")
	}
	if !(lo > 900 && hi < 1100 && lo < 1000 && hi > 990) {
		t.Errorf("interval [%v, %v] of a shift of ~1000", lo, hi)
	}
}

func runs(key string, threshold bool, values ...float64) []*report.Run {
	var out []*report.Run
	for i, v := range values {
		m := report.Measurement{Name: "PodStartupLatency_PodStartupLatency", Verdict: measurements.Pass,
			Headline: map[string]float64{key: v, "api p99 ms": 80 + float64(i%3)}}
		if threshold {
			m.Thresholds = map[string]float64{key: 5000}
		}
		out = append(out, &report.Run{Started: time.Unix(int64(i), 0), Measurements: []report.Measurement{m}})
	}
	return out
}

func TestCompareVerdicts(t *testing.T) {
	o := DefaultOptions()
	for _, tc := range []struct {
		name                string
		baseline, candidate []*report.Run
		wantP99, wantAPI    Verdict
	}{
		{"a start delay", runs("p99 ms", true, 350, 362, 341, 355, 349), runs("p99 ms", true, 1340, 1372, 1351, 1329, 1388), Regressed, NotDistinguishable},
		{"faster", runs("p99 ms", true, 1340, 1372, 1351, 1329, 1388), runs("p99 ms", true, 350, 362, 341, 355, 349), Improved, NotDistinguishable},
		{"unchanged", runs("p99 ms", true, 350, 362, 341, 355, 349), runs("p99 ms", true, 358, 346, 353, 340, 361), NotDistinguishable, NotDistinguishable},
		{"one run a side", runs("p99 ms", true, 350), runs("p99 ms", true, 1340), SingleRun, SingleRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			figs, err := Compare(tc.baseline, tc.candidate, o)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]Figure{}
			for _, f := range figs {
				got[f.Key] = f
			}
			if got["p99 ms"].Verdict != tc.wantP99 || got["api p99 ms"].Verdict != tc.wantAPI || !got["p99 ms"].Gated || got["api p99 ms"].Gated {
				t.Errorf("p99: %+v\napi: %+v", got["p99 ms"], got["api p99 ms"])
			}
			if tc.wantP99 != SingleRun && !(got["p99 ms"].MinDetectable > 0 && got["p99 ms"].MinDetectable < 0.2) {
				t.Errorf("smallest detectable change %v of runs ±10 ms around 350 ms", got["p99 ms"].MinDetectable)
			}
		})
	}
	if _, err := Compare(nil, runs("x", false, 1), o); err == nil {
		t.Error("no baseline run compared")
	}
}
