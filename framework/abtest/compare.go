package abtest

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

// Options tune Compare.
type Options struct {
	// Alpha is the significance level of each figure's Mann–Whitney U
	// test. A density run has dozens of figures; at 5 % a comparison of
	// runs of the same code would call one or two of them changed, so the
	// default is 1 %: with five runs a side, only sides that do not
	// overlap at all (p = 0.008) reach it.
	Alpha float64
	// MinChange is the smallest relative change of the median that is
	// judged at all, as in kscale history: a shift below it is not one a
	// release would be held for.
	MinChange float64
	// Confidence is the bootstrap interval's, from Resamples resamples.
	Confidence float64
	Resamples  int
}

// DefaultOptions: 1 % significance, changes of 5 % or more, a 95 %
// interval from 10 000 resamples.
func DefaultOptions() Options {
	return Options{Alpha: 0.01, MinChange: 0.05, Confidence: 0.95, Resamples: 10000}
}

// Verdict is what a comparison says of a figure.
type Verdict string

const (
	Regressed          Verdict = "regressed"
	Improved           Verdict = "improved"
	NotDistinguishable Verdict = "not distinguishable"
	// SingleRun: one run on a side; the change is shown, not judged.
	SingleRun Verdict = "single run"
)

// Figure is one headline number of a measurement over both sides' runs.
type Figure struct {
	Measurement string    `json:"measurement"`
	Key         string    `json:"key"`
	Baseline    []float64 `json:"baseline"`
	Candidate   []float64 `json:"candidate"`
	// BaselineMedian and CandidateMedian, and Change, the relative
	// difference of the candidate's from the baseline's.
	BaselineMedian  float64 `json:"baselineMedian"`
	CandidateMedian float64 `json:"candidateMedian"`
	Change          float64 `json:"change"`
	// PValue is the Mann–Whitney U test's; CILow and CIHigh bound
	// candidate − baseline median at the options' confidence.
	PValue float64 `json:"pValue"`
	CILow  float64 `json:"ciLow"`
	CIHigh float64 `json:"ciHigh"`
	// MinDetectable is the smallest relative change the runs' spread lets
	// a comparison of this size detect (5 % two-sided, 80 % power).
	MinDetectable  float64 `json:"minDetectable"`
	HigherIsBetter bool    `json:"higherIsBetter,omitempty"`
	// Gated: the figure has an SLO threshold; its regression fails the
	// comparison.
	Gated   bool    `json:"gated"`
	Verdict Verdict `json:"verdict"`
}

// Compare judges every headline number that every run of both sides has.
func Compare(baseline, candidate []*report.Run, o Options) ([]Figure, error) {
	if len(baseline) == 0 || len(candidate) == 0 {
		return nil, errors.New("compare: want at least one run a side")
	}
	if o.Alpha <= 0 || o.Alpha >= 1 || o.Confidence <= 0 || o.Confidence >= 1 || o.Resamples < 100 || o.MinChange < 0 {
		return nil, fmt.Errorf("compare options %+v: want 0 < alpha, confidence < 1, a min change of 0 or more and 100 resamples or more", o)
	}
	type key struct{ m, k string }
	values := map[key][2][]float64{}
	gated := map[key]bool{}
	runs := append(slices.Clone(baseline), candidate...)
	for ri, r := range runs {
		side := 0
		if ri >= len(baseline) {
			side = 1
		}
		seen := map[key]bool{}
		for _, m := range r.Measurements {
			if m.Verdict == measurements.NotMeasured {
				continue
			}
			for k, v := range m.Headline {
				id := key{m.Name, k}
				if seen[id] {
					continue
				}
				seen[id] = true
				vs := values[id]
				vs[side] = append(vs[side], v)
				values[id] = vs
				if _, ok := m.Thresholds[k]; ok {
					gated[id] = true
				}
			}
		}
	}
	var out []Figure
	for _, id := range slices.SortedFunc(maps.Keys(values), func(a, b key) int {
		if a.m != b.m {
			return cmpString(a.m, b.m)
		}
		return cmpString(a.k, b.k)
	}) {
		vs := values[id]
		if len(vs[0]) != len(baseline) || len(vs[1]) != len(candidate) {
			continue // not in every run
		}
		out = append(out, judge(id.m, id.k, vs[0], vs[1], gated[id], o))
	}
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// zPower is z(1 − 0.05/2) + z(0.80): the distance, in standard errors, a
// difference must have to be found four times in five at 5 %.
const zPower = 1.959964 + 0.841621

func judge(measurement, k string, a, b []float64, gated bool, o Options) Figure {
	f := Figure{Measurement: measurement, Key: k, Baseline: a, Candidate: b, Gated: gated, HigherIsBetter: report.HigherIsBetter(k),
		BaselineMedian: median(a), CandidateMedian: median(b)}
	f.Change = relative(f.BaselineMedian, f.CandidateMedian)
	if len(a) < 2 || len(b) < 2 {
		f.PValue, f.Verdict = math.NaN(), SingleRun
		f.CILow, f.CIHigh, f.MinDetectable = math.NaN(), math.NaN(), math.NaN()
		return f
	}
	f.PValue = metrics.MannWhitneyP(a, b)
	f.CILow, f.CIHigh = BootstrapMedianDiff(a, b, o.Confidence, o.Resamples)
	se := math.Sqrt(stdDev(a)*stdDev(a)/float64(len(a)) + stdDev(b)*stdDev(b)/float64(len(b)))
	f.MinDetectable = math.Abs(relative(f.BaselineMedian, f.BaselineMedian+zPower*se))
	f.Verdict = NotDistinguishable
	// Changed: significant, an interval that excludes no change, and a
	// shift of the median of MinChange or more.
	if f.PValue <= o.Alpha && (f.CILow > 0 || f.CIHigh < 0) && math.Abs(f.Change) >= o.MinChange {
		worse := f.CandidateMedian > f.BaselineMedian
		if f.HigherIsBetter {
			worse = !worse
		}
		f.Verdict = Improved
		if worse {
			f.Verdict = Regressed
		}
	}
	return f
}

func relative(before, after float64) float64 {
	if before == 0 {
		if after == 0 {
			return 0
		}
		return math.Inf(int(math.Copysign(1, after)))
	}
	return (after - before) / math.Abs(before)
}
