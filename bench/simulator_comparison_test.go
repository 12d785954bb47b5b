package bench

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kscale/kscale/measurements/metrics"
)

// significance is the p-value under which two simulators' runs are told
// apart on a figure, as benchstat does.
const significance = 0.05

// Verdicts of a figureComparison.
const (
	atOrBelow         = "at or below"
	notToldApart      = "above by the mean, not told apart"
	aboveAndToldApart = "above"
)

// compareSimulators compares every figure the runs of both simulators have,
// in name order.
func compareSimulators(fleet, kwok []simulatorRun) []figureComparison {
	fleetFigures, kwokFigures := runFigures(fleet), runFigures(kwok)
	var out []figureComparison
	for _, name := range slices.Sorted(maps.Keys(fleetFigures)) {
		f, k := fleetFigures[name], kwokFigures[name]
		if len(f) != len(fleet) || len(k) != len(kwok) {
			continue // not taken in every run of both
		}
		c := figureComparison{Figure: name, Fleet: mean(f), KWOK: mean(k), P: metrics.MannWhitneyP(f, k)}
		if c.KWOK != 0 {
			c.DeltaPercent = (c.Fleet - c.KWOK) / c.KWOK * 100
		}
		switch {
		case c.Fleet <= c.KWOK:
			c.Verdict = atOrBelow
		case c.P >= significance:
			c.Verdict = notToldApart
		default:
			c.Verdict = aboveAndToldApart
		}
		out = append(out, c)
	}
	return out
}

// runFigures flattens runs into each figure's values, one per run that took
// it.
func runFigures(runs []simulatorRun) map[string][]float64 {
	out := map[string][]float64{}
	for _, r := range runs {
		for name, v := range r.figures() {
			out[name] = append(out[name], v)
		}
	}
	return out
}

// figures returns the figures of the run that compareSimulators compares, by
// name: "ready seconds", "oldest lease seconds", "<process> <figure>" for
// each process's figures (named as in the JSON) and "<component> CPU ms per
// lease renewal". A figure the run did not take is left out.
func (r simulatorRun) figures() map[string]float64 {
	out := map[string]float64{
		"ready seconds":        r.ReadySeconds,
		"oldest lease seconds": r.LeaseAgeMaxSeconds,
	}
	for proc, u := range r.Processes {
		for name, v := range u.figures() {
			out[proc+" "+name] = v
		}
	}
	for comp, ms := range r.CPUMsPerLeaseUpdate {
		out[fmt.Sprintf("%s CPU ms per lease renewal", comp)] = ms
	}
	return out
}

// figures returns the usage's figures by their JSON names, leaving out the
// heap figures not taken.
func (u processUsage) figures() map[string]float64 {
	out := map[string]float64{
		"cores":      u.Cores,
		"rssMiB":     u.RSSMiB,
		"rssAnonMiB": u.RSSAnonMiB,
		"rssFileMiB": u.RSSFileMiB,
	}
	if u.HeapInUseMiB != nil {
		out["heapInUseMiB"] = *u.HeapInUseMiB
	}
	if u.HeapLiveMiB != nil {
		out["heapLiveMiB"] = *u.HeapLiveMiB
	}
	return out
}

func mean(values []float64) float64 {
	var sum float64
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

func TestCompareSimulators(t *testing.T) {
	run := func(ready, apiserverCores, simulatorRSS float64) simulatorRun {
		return simulatorRun{
			ReadySeconds:        ready,
			LeaseAgeMaxSeconds:  10.5,
			Processes:           map[string]processUsage{"kube-apiserver": {Cores: apiserverCores, HeapInUseMiB: ptr.To(500.0)}, "simulator": {RSSMiB: simulatorRSS}},
			CPUMsPerLeaseUpdate: map[string]float64{"kube-apiserver": apiserverCores * 2},
		}
	}
	fleet := []simulatorRun{run(20, 0.70, 90), run(21, 0.75, 91), run(19, 0.72, 92), run(22, 0.80, 93)}
	kwok := []simulatorRun{run(60, 0.71, 80), run(65, 0.74, 81), run(70, 0.73, 82), run(68, 0.76, 83)}
	sim := kwok[0].Processes["simulator"]
	sim.HeapLiveMiB = ptr.To(0.3) // in one run only: not compared
	kwok[0].Processes["simulator"] = sim

	got := map[string]figureComparison{}
	for _, c := range compareSimulators(fleet, kwok) {
		got[c.Figure] = c
	}
	for _, tc := range []struct {
		figure, verdict string
		p               float64
	}{
		{"ready seconds", atOrBelow, 2.0 / 70},
		{"oldest lease seconds", atOrBelow, 1},
		// Fleet 0.7425 against 0.735: above by the mean, runs interleaved.
		{"kube-apiserver cores", notToldApart, metrics.MannWhitneyP([]float64{0.70, 0.75, 0.72, 0.80}, []float64{0.71, 0.74, 0.73, 0.76})},
		{"kube-apiserver CPU ms per lease renewal", notToldApart, metrics.MannWhitneyP([]float64{1.40, 1.50, 1.44, 1.60}, []float64{1.42, 1.48, 1.46, 1.52})},
		{"simulator rssMiB", aboveAndToldApart, 2.0 / 70},
	} {
		c, ok := got[tc.figure]
		if !ok {
			t.Errorf("%s not compared; compared: %v", tc.figure, slices.Sorted(maps.Keys(got)))
			continue
		}
		if c.Verdict != tc.verdict || c.P-tc.p > 1e-9 || tc.p-c.P > 1e-9 {
			t.Errorf("%s: %q with p=%v, want %q with p=%v", tc.figure, c.Verdict, c.P, tc.verdict, tc.p)
		}
	}
	if c := got["simulator rssMiB"]; c.Fleet != 91.5 || c.KWOK != 81.5 || c.DeltaPercent < 12.26 || c.DeltaPercent > 12.27 {
		t.Errorf("simulator rssMiB: fleet %v, KWOK %v, %+.2f %%; want 91.5, 81.5, +12.27 %%", c.Fleet, c.KWOK, c.DeltaPercent)
	}
	if _, ok := got["simulator heapLiveMiB"]; ok {
		t.Error("simulator heapLiveMiB compared though only one KWOK run has it")
	}
	want := []string{
		"kube-apiserver CPU ms per lease renewal",
		"kube-apiserver cores", "kube-apiserver heapInUseMiB", "kube-apiserver rssAnonMiB", "kube-apiserver rssFileMiB", "kube-apiserver rssMiB",
		"oldest lease seconds", "ready seconds",
		"simulator cores", "simulator rssAnonMiB", "simulator rssFileMiB", "simulator rssMiB",
	}
	if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, want) {
		t.Errorf("compared %v, want %v", names, want)
	}
}
