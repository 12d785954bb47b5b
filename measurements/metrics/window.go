package metrics

import (
	"math"
	"time"
)

// DefaultWindow is the window of the API call latency SLI: the 99th
// percentile over the last 5 minutes.
const DefaultWindow = 5 * time.Minute

// Snapshot is one scrape of a cumulative histogram and when it was taken.
type Snapshot struct {
	Time      time.Time
	Histogram Histogram
}

// WindowResult is the worst window of a series.
type WindowResult struct {
	// Quantile is the largest q-quantile of any window; NaN when no window
	// had an observation.
	Quantile float64
	// Start and End are the times of the two snapshots that bound the worst
	// window.
	Start, End time.Time
	// Windows is how many windows had observations.
	Windows int
}

// WorstWindow returns the worst (largest) q-quantile of the series over
// sliding windows of the given length (DefaultWindow when 0). The series
// must be in time order. The rule, the one WindowTracker applies:
//
//   - every snapshot j that is at least one window after the first snapshot
//     ends a window; it starts at the latest snapshot i with
//     t_j - t_i >= window, so each window is the shortest one the scrapes
//     allow that is still a full window long. Its quantile is that of the
//     delta h_j - h_i (Histogram.Sub, so a counter reset inside a window
//     takes h_j whole);
//   - windows without observations (NaN quantile) are skipped; the largest
//     of the rest wins, the earliest on ties;
//   - when the whole series spans less than one window there is a single
//     window, from the first snapshot to the last.
//
// With scrapes at a regular interval that divides the window this is
// Prometheus' rate(...[window]) evaluated at every scrape, which is what the
// SLI means. With irregular scrapes (a missed one), the observations right
// after the first snapshot may fall in no full window; the run-long delta
// still counts them.
func WorstWindow(series []Snapshot, q float64, window time.Duration) WindowResult {
	w := NewWindowTracker(q, window)
	for _, s := range series {
		w.Add(s.Time, s.Histogram)
	}
	return w.Result()
}

// WindowTracker computes WorstWindow as the snapshots arrive, keeping only
// the snapshots a later window can still start at (about window/interval
// of them) rather than the whole run's.
type WindowTracker struct {
	q      float64
	window time.Duration

	n           int
	first, last Snapshot
	// kept are the snapshots from the start of the last full window on:
	// a later window starts at the same snapshot or a later one, because
	// its end is later.
	kept []Snapshot
	// full is set once a full window has ended, after which the
	// short-run rule no longer applies.
	full bool
	best WindowResult
}

// NewWindowTracker returns a tracker of the worst q-quantile over windows of
// the given length (DefaultWindow when 0).
func NewWindowTracker(q float64, window time.Duration) *WindowTracker {
	if window <= 0 {
		window = DefaultWindow
	}
	return &WindowTracker{q: q, window: window, best: WindowResult{Quantile: math.NaN()}}
}

// Add records the next snapshot; t must not be before the previous one's.
// The tracker keeps h, so the caller must not change its buckets afterwards.
func (w *WindowTracker) Add(t time.Time, h Histogram) {
	s := Snapshot{Time: t, Histogram: h}
	if w.n == 0 {
		w.first = s
	}
	w.n++
	w.last = s
	w.kept = append(w.kept, s)
	start := -1
	for i := len(w.kept) - 1; i >= 0; i-- {
		if t.Sub(w.kept[i].Time) >= w.window {
			start = i
			break
		}
	}
	if start < 0 {
		return
	}
	w.full = true
	w.kept = w.kept[start:]
	w.consider(w.kept[0], s)
}

// consider makes the window from a to b the worst one if it is.
func (w *WindowTracker) consider(a, b Snapshot) {
	v := b.Histogram.Sub(a.Histogram).Quantile(w.q)
	if math.IsNaN(v) {
		return
	}
	w.best.Windows++
	if w.best.Windows == 1 || v > w.best.Quantile {
		w.best.Quantile, w.best.Start, w.best.End = v, a.Time, b.Time
	}
}

// Result is the worst window of the snapshots added so far.
func (w *WindowTracker) Result() WindowResult {
	if w.full || w.n == 0 {
		return w.best
	}
	// The run is shorter than one window: the run is the window.
	short := &WindowTracker{q: w.q, best: WindowResult{Quantile: math.NaN()}}
	short.consider(w.first, w.last)
	return short.best
}
