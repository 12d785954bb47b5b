package metrics

import (
	"math"
	"testing"
	"time"
)

// cumulative builds a series of scrapes every step from calls per
// interval: calls[k] are the calls made between scrape k and k+1, as counts
// per bucket (non-cumulative) of the bounds 0.1, 1, 5, +Inf.
func cumulative(t0 time.Time, step time.Duration, calls [][4]float64) []Snapshot {
	bounds := []float64{0.1, 1, 5, math.Inf(+1)}
	var total [4]float64
	snap := func(k int) Snapshot {
		h := Histogram{}
		run := 0.0
		for i, b := range bounds {
			run += total[i]
			h.Buckets = append(h.Buckets, Bucket{UpperBound: b, Count: run})
		}
		h.Count = run
		return Snapshot{Time: t0.Add(time.Duration(k) * step), Histogram: h}
	}
	series := []Snapshot{snap(0)}
	for k, c := range calls {
		for i := range total {
			total[i] += c[i]
		}
		series = append(series, snap(k+1))
	}
	return series
}

func TestWorstWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fast := [4]float64{100, 0, 0, 0}
	slowish := [4]float64{97, 0, 3, 0}

	// 30 minutes of scrapes every 30 s: 60 intervals of 100 calls. The
	// 10 intervals of minutes 10-15 have 3 calls each in (1, 5].
	var run [][4]float64
	for k := 0; k < 60; k++ {
		if k >= 20 && k < 30 {
			run = append(run, slowish)
		} else {
			run = append(run, fast)
		}
	}

	tests := []struct {
		name      string
		series    []Snapshot
		wantQ     float64
		wantStart time.Time
		wantEnd   time.Time
	}{
		{
			// Window [10m, 15m]: 1000 calls, 970 ≤ 0.1 s, 30 in (1, 5].
			// Rank 990 falls in (1, 5]: 1 + 4*(990-970)/30 = 3.6667 s.
			// A window overlapping 9 slow intervals has 27 slow calls:
			// 1 + 4*(990-973)/27 = 3.5185 s, less.
			name:      "one bad window in a good run",
			series:    cumulative(t0, 30*time.Second, run),
			wantQ:     1 + 4*20.0/30,
			wantStart: t0.Add(10 * time.Minute),
			wantEnd:   t0.Add(15 * time.Minute),
		},
		{
			// 2 minutes: shorter than a window, so the run is the window.
			// 400 calls, 6 slow: rank 396 in (1, 5]: 1 + 4*(396-394)/6.
			name:      "run shorter than a window",
			series:    cumulative(t0, 30*time.Second, [][4]float64{fast, slowish, slowish, fast}),
			wantQ:     1 + 4*2.0/6,
			wantStart: t0,
			wantEnd:   t0.Add(2 * time.Minute),
		},
		{
			name:   "no calls",
			series: cumulative(t0, time.Minute, [][4]float64{{}, {}, {}, {}, {}, {}, {}}),
			wantQ:  math.NaN(),
		},
		{name: "no snapshots", wantQ: math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := WorstWindow(tc.series, 0.99, 0)
			if !same(got.Quantile, tc.wantQ) {
				t.Fatalf("worst p99 %v, want %v", got.Quantile, tc.wantQ)
			}
			if !math.IsNaN(tc.wantQ) && (!got.Start.Equal(tc.wantStart) || !got.End.Equal(tc.wantEnd)) {
				t.Fatalf("window %v - %v, want %v - %v", got.Start, got.End, tc.wantStart, tc.wantEnd)
			}
		})
	}

	// The point of windows: the run-long p99 of the same series passes a
	// 1 s threshold. 6000 calls, 5970 ≤ 0.1 s: rank 5940 falls in the first
	// bucket: 0.1*5940/5970 = 0.0995 s.
	series := cumulative(t0, 30*time.Second, run)
	whole := series[len(series)-1].Histogram.Sub(series[0].Histogram).Quantile(0.99)
	if !same(whole, 0.1*5940/5970) || whole > 1 {
		t.Fatalf("run-long p99 %v, want 0.0995 (within 1 s)", whole)
	}
	if worst := WorstWindow(series, 0.99, DefaultWindow).Quantile; worst <= 1 {
		t.Fatalf("worst window p99 %v, want it over 1 s", worst)
	}
}

func TestWindowTrackerKeepsOnlyOneWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var calls [][4]float64
	for k := 0; k < 600; k++ { // 5 hours of 30 s scrapes
		calls = append(calls, [4]float64{10, 0, 0, 0})
	}
	w := NewWindowTracker(0.99, 5*time.Minute)
	for _, s := range cumulative(t0, 30*time.Second, calls) {
		w.Add(s.Time, s.Histogram)
	}
	// A window of 5 min at 30 s spans 11 scrapes.
	if n := len(w.kept); n > 11 {
		t.Fatalf("kept %d snapshots, want at most 11", n)
	}
	// 591 full windows end at 5m, 5m30s, ..., 300m.
	if r := w.Result(); r.Windows != 591 || !same(r.Quantile, 0.099) {
		t.Fatalf("result %+v", r)
	}
}
