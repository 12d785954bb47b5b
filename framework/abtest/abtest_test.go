package abtest

import (
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
