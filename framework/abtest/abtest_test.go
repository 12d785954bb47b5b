package abtest

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

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

// TestCompareManyFigures: with 36 figures a side, as a density run has, a
// 5 % test per figure raises false alarms on runs of the same code; the
// defaults hold those back and keep a real step. The figures are those of
// results/bench/nightly-series.json.
func TestCompareManyFigures(t *testing.T) {
	flat := func(n int, base float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = base + float64((i*7)%5)
		}
		return out
	}
	build := func(figures map[string][]float64) []*report.Run {
		n := 0
		for _, vs := range figures {
			n = len(vs)
		}
		out := make([]*report.Run, n)
		for i := range out {
			m := report.Measurement{Name: "m", Verdict: measurements.Pass, Headline: map[string]float64{}}
			for k, vs := range figures {
				m.Headline[k] = vs[i]
			}
			out[i] = &report.Run{Measurements: []report.Measurement{m}}
		}
		return out
	}
	side := func(special map[string][]float64) []*report.Run {
		figs := map[string][]float64{}
		for i := range 34 {
			figs[fmt.Sprintf("other %02d", i)] = flat(5, 100+float64(i))
		}
		maps.Copy(figs, special)
		return build(figs)
	}
	o := DefaultOptions()
	// Unchanged code: pod_startup p90 moved +4.7 % at p = 0.03.
	figs, err := Compare(side(map[string][]float64{"pod_startup p90 ms": {334.3, 343.7, 344.1, 354.6, 348.7}, "x": flat(5, 1)}),
		side(map[string][]float64{"pod_startup p90 ms": {350.5, 358.0, 350.9, 365.8, 380.2}, "x": flat(5, 1)}), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Verdict != NotDistinguishable {
			t.Errorf("unchanged: %s %s p %.3g: %s", f.Measurement, f.Key, f.PValue, f.Verdict)
		}
	}
	// A start delay: pod startup p50 and p99 tripled.
	figs, err = Compare(side(map[string][]float64{"pod_startup p50 ms": {327, 325, 326, 337, 331}, "pod_startup p99 ms": {354, 370, 380, 356, 371}}),
		side(map[string][]float64{"pod_startup p50 ms": {1020, 1027, 1027, 1026, 1019}, "pod_startup p99 ms": {1051, 1048, 1040, 1073, 1037}}), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		want := NotDistinguishable
		if strings.HasPrefix(f.Key, "pod_startup") {
			want = Regressed
		}
		if f.Verdict != want {
			t.Errorf("delayed: %s p %.3g: %s, want %s", f.Key, f.PValue, f.Verdict, want)
		}
	}
}
