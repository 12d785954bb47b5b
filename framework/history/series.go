package history

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kscale/kscale/framework/changepoint"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

// History is a series of runs: their kinds (Groups), one series per figure
// of each kind, and where the series shift.
type History struct {
	Options changepoint.Options `json:"options"`
	Runs    []*Run              `json:"runs"`
	Skipped []Skipped           `json:"skipped,omitempty"`
	Groups  []*Group            `json:"groups"`
}

// Group is the runs of one Key, in order, and their series.
type Group struct {
	Key    Key       `json:"key"`
	Runs   []int     `json:"runs"` // indexes into History.Runs
	Series []*Series `json:"series"`
}

// Series is one figure over a group's runs.
type Series struct {
	// Figure is "<measurement>: <number>"; a PerfData figure's number
	// names its labels and the statistic ("Metric=pod_startup Perc99").
	Figure      string `json:"figure"`
	Measurement string `json:"measurement"`
	Number      string `json:"number"`
	Unit        string `json:"unit,omitempty"`
	// Threshold is the SLO's, when the figure has one; a figure with a
	// threshold is gated: a regression of it fails `kscale history`.
	Threshold      *float64 `json:"threshold,omitempty"`
	Gated          bool     `json:"gated"`
	HigherIsBetter bool     `json:"higherIsBetter,omitempty"`
	Points         []Point  `json:"points"`
	// Missing are the group's runs left out of the series, and why.
	Missing      []Missing `json:"missing,omitempty"`
	ChangePoints []Change  `json:"changePoints,omitempty"`
}

// Point is one run's value of a figure.
type Point struct {
	Run   int     `json:"run"` // index into History.Runs
	Value float64 `json:"value"`
}

// Missing is a run left out of a series.
type Missing struct {
	Run    int    `json:"run"`
	Reason string `json:"reason"`
}

// Change is a change point of a series: the runs on either side of it
// (back to the change points around it), their statistics, and whether
// the figure got worse.
type Change struct {
	// Point is the index in the series' points of the first run after the
	// change; Before and After name the runs (their Names) on each side.
	Point      int               `json:"point"`
	BeforeRuns []string          `json:"beforeRuns"`
	AfterRuns  []string          `json:"afterRuns"`
	Before     changepoint.Stats `json:"before"`
	After      changepoint.Stats `json:"after"`
	PValue     float64           `json:"pValue"`
	// Change is relative, (after - before) / |before|.
	Change float64 `json:"change"`
	Worse  bool    `json:"worse"`
	// Regression: worse, on a gated figure.
	Regression bool `json:"regression"`
}

// Analyze groups the runs by Key, makes a series of every figure of each
// group and finds its change points.
func Analyze(runs []*Run, skipped []Skipped, o changepoint.Options) (*History, error) {
	h := &History{Options: o, Runs: runs, Skipped: skipped}
	byKey := map[Key]*Group{}
	for i, r := range runs {
		g := byKey[r.Key]
		if g == nil {
			g = &Group{Key: r.Key}
			byKey[r.Key] = g
			h.Groups = append(h.Groups, g)
		}
		g.Runs = append(g.Runs, i)
	}
	for _, g := range h.Groups {
		if err := g.build(h, o); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// figure is one number of one run, before it joins a series.
type figure struct {
	measurement, number, unit string
	threshold                 *float64
	higherIsBetter            bool
	value                     float64
}

func (f figure) name() string { return f.measurement + ": " + f.number }

// figures are the numbers of a run: each measurement's headline numbers
// and its PerfData items' statistics, and the run's duration.
func figures(r *report.Run) []figure {
	out := []figure{{measurement: "run", number: "duration", unit: "s", value: r.DurationSeconds}}
	for _, m := range r.Measurements {
		if m.Verdict == measurements.NotMeasured {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(m.Headline)) {
			f := figure{measurement: m.Name, number: k, value: m.Headline[k], higherIsBetter: report.HigherIsBetter(k)}
			if t, ok := m.Thresholds[k]; ok {
				f.threshold = &t
			}
			out = append(out, f)
		}
		if m.PerfData == nil {
			continue
		}
		for _, item := range m.PerfData.DataItems {
			var labels []string
			for _, k := range slices.Sorted(maps.Keys(item.Labels)) {
				labels = append(labels, k+"="+item.Labels[k])
			}
			for _, stat := range slices.Sorted(maps.Keys(item.Data)) {
				out = append(out, figure{measurement: m.Name, number: strings.TrimSpace(strings.Join(labels, ",") + " " + stat),
					unit: item.Unit, value: item.Data[stat], higherIsBetter: report.HigherIsBetter(stat)})
			}
		}
	}
	return out
}

func (g *Group) build(h *History, o changepoint.Options) error {
	series := map[string]*Series{}
	var order []string
	present := map[string]map[int]bool{}
	for _, ri := range g.Runs {
		r := h.Runs[ri]
		if r.Failed != "" {
			continue
		}
		for _, f := range figures(r.summary) {
			s := series[f.name()]
			if s == nil {
				s = &Series{Figure: f.name(), Measurement: f.measurement, Number: f.number, Unit: f.unit,
					Threshold: f.threshold, Gated: f.threshold != nil, HigherIsBetter: f.higherIsBetter}
				series[f.name()] = s
				order = append(order, f.name())
				present[f.name()] = map[int]bool{}
			}
			if present[f.name()][ri] {
				continue // the same measurement name twice in a run: the first counts
			}
			present[f.name()][ri] = true
			s.Points = append(s.Points, Point{Run: ri, Value: f.value})
		}
	}
	slices.Sort(order)
	for _, name := range order {
		s := series[name]
		for _, ri := range g.Runs {
			switch r := h.Runs[ri]; {
			case r.Failed != "":
				s.Missing = append(s.Missing, Missing{Run: ri, Reason: "failed: " + r.Failed})
			case !present[name][ri]:
				s.Missing = append(s.Missing, Missing{Run: ri, Reason: "not measured in this run"})
			}
		}
		if err := s.detect(h, o); err != nil {
			return fmt.Errorf("series %s of %s: %w", name, g.Key, err)
		}
		g.Series = append(g.Series, s)
	}
	return nil
}

func (s *Series) detect(h *History, o changepoint.Options) error {
	values := make([]float64, len(s.Points))
	for i, p := range s.Points {
		values[i] = p.Value
	}
	cps, err := changepoint.Detect(values, o)
	if err != nil {
		return err
	}
	names := func(from, to int) []string {
		var out []string
		for _, p := range s.Points[from:to] {
			out = append(out, h.Runs[p.Run].Name)
		}
		return out
	}
	for i, cp := range cps {
		lo, hi := 0, len(s.Points)
		if i > 0 {
			lo = cps[i-1].Index
		}
		if i+1 < len(cps) {
			hi = cps[i+1].Index
		}
		worse := cp.After.Mean > cp.Before.Mean
		if s.HigherIsBetter {
			worse = cp.After.Mean < cp.Before.Mean
		}
		s.ChangePoints = append(s.ChangePoints, Change{
			Point: cp.Index, BeforeRuns: names(lo, cp.Index), AfterRuns: names(cp.Index, hi),
			Before: cp.Before, After: cp.After, PValue: cp.PValue, Change: cp.Change,
			Worse: worse, Regression: worse && s.Gated,
		})
	}
	return nil
}

// Regressions are the gated series whose newest run sits after a change
// for the worse: the last change point of the series is a regression.
func (h *History) Regressions() []Regression {
	var out []Regression
	for _, g := range h.Groups {
		for _, s := range g.Series {
			if n := len(s.ChangePoints); n > 0 && s.ChangePoints[n-1].Regression {
				out = append(out, Regression{Key: g.Key, Series: s, Change: s.ChangePoints[n-1]})
			}
		}
	}
	return out
}

// Regression is a gated figure whose newest runs got worse.
type Regression struct {
	Key    Key
	Series *Series
	Change Change
}
