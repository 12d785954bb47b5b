package metrics

import (
	"fmt"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Bucket is one cumulative bucket of a histogram: Count observations were at
// or below UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram is a Prometheus classic histogram: cumulative buckets sorted by
// upper bound, the last one +Inf, and the total count and sum of the
// observations. Counts are floats because deltas and sums of scrapes are
// what the measurements work with, and the exposition format allows floats.
type Histogram struct {
	Buckets []Bucket
	Count   float64
	Sum     float64
}

// HistogramFromProto converts a parsed histogram sample. A missing +Inf
// bucket is added with the sample count, as the exposition format implies it.
func HistogramFromProto(p *dto.Histogram) Histogram {
	h := Histogram{Sum: p.GetSampleSum(), Count: float64(p.GetSampleCount())}
	if p.GetSampleCountFloat() != 0 {
		h.Count = p.GetSampleCountFloat()
	}
	for _, b := range p.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.GetCumulativeCountFloat() != 0 {
			c = b.GetCumulativeCountFloat()
		}
		h.Buckets = append(h.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: c})
	}
	h.normalize()
	return h
}

// normalize sorts the buckets, merges equal bounds and makes sure a +Inf
// bucket ends the list.
func (h *Histogram) normalize() {
	sort.SliceStable(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
	merged := h.Buckets[:0]
	for _, b := range h.Buckets {
		if n := len(merged); n > 0 && merged[n-1].UpperBound == b.UpperBound {
			merged[n-1].Count += b.Count
			continue
		}
		merged = append(merged, b)
	}
	h.Buckets = merged
	if n := len(h.Buckets); n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, +1) {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: math.Inf(+1), Count: h.Count})
	}
}

// Clone returns a deep copy, so a caller may keep a histogram while the
// original's buckets are reused.
func (h Histogram) Clone() Histogram {
	h.Buckets = append([]Bucket(nil), h.Buckets...)
	return h
}

// countAt is the cumulative count of the bucket with exactly this upper
// bound, 0 when there is none.
func (h Histogram) countAt(bound float64) float64 {
	i := sort.Search(len(h.Buckets), func(i int) bool { return h.Buckets[i].UpperBound >= bound })
	if i < len(h.Buckets) && h.Buckets[i].UpperBound == bound {
		return h.Buckets[i].Count
	}
	return 0
}

// Add returns the sum of two histograms, bucket by bucket: the histogram of
// two series observed together (the same call on two API groups). Bounds
// only one of them has are kept with that one's count, which is what the
// other contributes nothing to.
func (h Histogram) Add(o Histogram) Histogram {
	if len(h.Buckets) == 0 {
		return o.Clone()
	}
	if len(o.Buckets) == 0 {
		return h.Clone()
	}
	out := Histogram{Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	out.Buckets = make([]Bucket, 0, max(len(h.Buckets), len(o.Buckets)))
	i, j := 0, 0
	for i < len(h.Buckets) || j < len(o.Buckets) {
		switch {
		case j == len(o.Buckets) || (i < len(h.Buckets) && h.Buckets[i].UpperBound < o.Buckets[j].UpperBound):
			out.Buckets = append(out.Buckets, h.Buckets[i])
			i++
		case i == len(h.Buckets) || o.Buckets[j].UpperBound < h.Buckets[i].UpperBound:
			out.Buckets = append(out.Buckets, o.Buckets[j])
			j++
		default:
			out.Buckets = append(out.Buckets, Bucket{UpperBound: h.Buckets[i].UpperBound, Count: h.Buckets[i].Count + o.Buckets[j].Count})
			i++
			j++
		}
	}
	return out
}

// Sub returns the observations made between an earlier scrape and this one
// of the same histogram: the difference of every count and of the sum.
//
// A counter reset (the process restarted between the scrapes, so the later
// count is lower) makes the difference meaningless; the later histogram
// is then itself the delta, as it counts everything since the restart. That
// is the same assumption Prometheus' increase() makes.
func (h Histogram) Sub(earlier Histogram) Histogram {
	if h.Count < earlier.Count || len(earlier.Buckets) == 0 {
		return h.Clone()
	}
	out := Histogram{Count: h.Count - earlier.Count, Sum: h.Sum - earlier.Sum}
	out.Buckets = make([]Bucket, len(h.Buckets))
	for i, b := range h.Buckets {
		d := b.Count - earlier.countAt(b.UpperBound)
		if d < 0 {
			// One bucket went down while the total went up: a reset
			// that happened to end with more calls than before. Take
			// the later histogram whole rather than report negative
			// counts.
			return h.Clone()
		}
		out.Buckets[i] = Bucket{UpperBound: b.UpperBound, Count: d}
	}
	return out
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) with the rule of Prometheus'
// histogram_quantile, so that a number computed here and one a Prometheus
// server computes from the same buckets agree:
//
//   - the rank is q times the count of the +Inf bucket; the quantile falls in
//     the first bucket whose cumulative count reaches the rank;
//   - inside that bucket the observations are assumed spread evenly, so the
//     value is interpolated linearly between the bucket's lower and upper
//     bound; the first bucket's lower bound is 0 when its upper bound is
//     positive (else its upper bound is returned);
//   - a quantile in the +Inf bucket returns the highest finite upper bound,
//     since nothing better is known;
//   - NaN when there are no observations or fewer than two buckets, -Inf for
//     q < 0 and +Inf for q > 1.
//
// Bucket counts that decrease with the bound (float noise in sums of
// scrapes) are raised to the previous count first, as Prometheus does.
func (h Histogram) Quantile(q float64) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(+1)
	}
	n := len(h.Buckets)
	if n < 2 || !math.IsInf(h.Buckets[n-1].UpperBound, +1) {
		return math.NaN()
	}
	counts := make([]float64, n)
	for i, b := range h.Buckets {
		counts[i] = b.Count
		if i > 0 && counts[i] < counts[i-1] {
			counts[i] = counts[i-1]
		}
	}
	total := counts[n-1]
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	b := sort.Search(n-1, func(i int) bool { return counts[i] >= rank })
	if b == n-1 {
		return h.Buckets[n-2].UpperBound
	}
	if b == 0 && h.Buckets[0].UpperBound <= 0 {
		return h.Buckets[0].UpperBound
	}
	start, end, count := 0.0, h.Buckets[b].UpperBound, counts[b]
	if b > 0 {
		start = h.Buckets[b-1].UpperBound
		count -= counts[b-1]
		rank -= counts[b-1]
	}
	return start + (end-start)*(rank/count)
}

// CountAbove estimates how many observations exceeded x: the count minus
// the cumulative count of the first bucket whose upper bound is at or above
// x. It is exact when x is a bucket bound (1 s, 5 s and 30 s are bounds of
// the apiserver's latency histograms); otherwise the observations between x
// and that bound are counted as not above x, so it is a lower bound.
func (h Histogram) CountAbove(x float64) float64 {
	i := sort.Search(len(h.Buckets), func(i int) bool { return h.Buckets[i].UpperBound >= x })
	if i == len(h.Buckets) {
		return 0
	}
	above := h.total() - h.Buckets[i].Count
	return math.Max(above, 0)
}

// total is the count of the +Inf bucket, which Prometheus treats as the
// histogram's count; it equals Count in any well-formed exposition.
func (h Histogram) total() float64 {
	if n := len(h.Buckets); n > 0 {
		return h.Buckets[n-1].Count
	}
	return h.Count
}

// HistogramKey identifies the histograms of one group: the values of the
// grouping labels, in the order they were asked for.
type HistogramKey string

// keySep cannot occur in a label value of a Kubernetes metric, so joined
// values split back unambiguously.
const keySep = "\x1f"

// MakeHistogramKey joins label values into a key.
func MakeHistogramKey(values ...string) HistogramKey {
	return HistogramKey(strings.Join(values, keySep))
}

// Values returns the label values of the key.
func (k HistogramKey) Values() []string { return strings.Split(string(k), keySep) }

// HistogramsBy extracts the histograms of a family grouped by the named
// labels: series whose values of those labels are equal are summed into one
// histogram, whatever their other labels (component, version, group, ...).
// keep, when not nil, sees every series' labels first and drops those it
// returns false for, so exclusions can use labels the grouping drops.
// A missing label counts as the empty value, as in PromQL.
func HistogramsBy(family *dto.MetricFamily, by []string, keep func(labels map[string]string) bool) (map[HistogramKey]Histogram, error) {
	if family == nil {
		return nil, nil
	}
	if t := family.GetType(); t != dto.MetricType_HISTOGRAM && t != dto.MetricType_GAUGE_HISTOGRAM {
		return nil, fmt.Errorf("metric %s is a %s, not a histogram", family.GetName(), t)
	}
	out := map[HistogramKey]Histogram{}
	values := make([]string, len(by))
	for _, m := range family.GetMetric() {
		if m.GetHistogram() == nil {
			continue
		}
		labels := LabelMap(m)
		if keep != nil && !keep(labels) {
			continue
		}
		for i, name := range by {
			values[i] = labels[name]
		}
		key := MakeHistogramKey(values...)
		out[key] = out[key].Add(HistogramFromProto(m.GetHistogram()))
	}
	return out, nil
}
