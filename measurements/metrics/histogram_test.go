package metrics

import (
	"math"
	"reflect"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// fixture is an apiserver-like exposition with hand-countable buckets.
//
// GET pods scope=resource is split over two series (core group v1 and a
// second version) that differ only in labels the grouping drops; summed:
//
//	le:    0.1  0.5   1    5   +Inf
//	v1:     40   70  78   80    80
//	v2:     10   20  20   20    20
//	sum:    50   90  98  100   100   count 100, sum 12 + 3 = 15
//
// LIST pods scope=cluster has all 10 calls in the +Inf bucket.
// WATCH pods is there to be filtered out.
const fixture = `# HELP apiserver_request_sli_duration_seconds Response latency.
# TYPE apiserver_request_sli_duration_seconds histogram
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1",le="0.1"} 40
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1",le="0.5"} 70
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1",le="1"} 78
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1",le="5"} 80
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1",le="+Inf"} 80
apiserver_request_sli_duration_seconds_sum{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"} 12
apiserver_request_sli_duration_seconds_count{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"} 80
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v2",le="0.1"} 10
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v2",le="0.5"} 20
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v2",le="1"} 20
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v2",le="5"} 20
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v2",le="+Inf"} 20
apiserver_request_sli_duration_seconds_sum{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v2"} 3
apiserver_request_sli_duration_seconds_count{group="",resource="pods",scope="resource",subresource="",verb="GET",version="v2"} 20
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="0.1"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="0.5"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="1"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="5"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="+Inf"} 10
apiserver_request_sli_duration_seconds_sum{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 100
apiserver_request_sli_duration_seconds_count{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 10
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="0.1"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="0.5"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="1"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="5"} 0
apiserver_request_sli_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="+Inf"} 7
apiserver_request_sli_duration_seconds_sum{group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 7000
apiserver_request_sli_duration_seconds_count{group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 7
`

var (
	getPods  = MakeHistogramKey("GET", "pods", "", "resource")
	listPods = MakeHistogramKey("LIST", "pods", "", "cluster")
	by       = []string{"verb", "resource", "subresource", "scope"}
)

// fixtureHistograms parses the fixture, dropping WATCH.
func fixtureHistograms(t *testing.T) map[HistogramKey]Histogram {
	t.Helper()
	fams, err := ParseText([]byte(fixture))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := HistogramsBy(fams["apiserver_request_sli_duration_seconds"], by,
		func(l map[string]string) bool { return l["verb"] != "WATCH" })
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

func TestHistogramsBy(t *testing.T) {
	hs := fixtureHistograms(t)
	if len(hs) != 2 {
		t.Fatalf("keys %v, want GET pods and LIST pods only", hs)
	}
	inf := math.Inf(+1)
	want := Histogram{
		Buckets: []Bucket{{0.1, 50}, {0.5, 90}, {1, 98}, {5, 100}, {inf, 100}},
		Count:   100, Sum: 15,
	}
	if got := hs[getPods]; !reflect.DeepEqual(got, want) {
		t.Errorf("GET pods: %+v, want the two versions summed %+v", got, want)
	}
	if got := hs[listPods]; got.Count != 10 || got.Buckets[4].Count != 10 {
		t.Errorf("LIST pods: %+v", got)
	}
	if v := getPods.Values(); !reflect.DeepEqual(v, []string{"GET", "pods", "", "resource"}) {
		t.Errorf("key values %q", v)
	}
	if _, err := HistogramsBy(mustParse(t, "# TYPE c counter\nc 1\n")["c"], by, nil); err == nil {
		t.Error("a counter family must not extract as histograms")
	}
}

func mustParse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := ParseText([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestQuantile(t *testing.T) {
	hs := fixtureHistograms(t)
	inf := math.Inf(+1)
	tests := []struct {
		name string
		h    Histogram
		q    float64
		want float64
	}{
		// GET pods, cumulative 50 90 98 100 100 at 0.1 0.5 1 5 +Inf.
		// p10: rank 10, first bucket (0, 0.1] holds 50: 0 + 0.1*10/50.
		{"p10 first bucket from 0", hs[getPods], 0.10, 0.02},
		// p50: rank 50 reaches 50 in (0, 0.1]: 0 + 0.1*50/50.
		{"p50", hs[getPods], 0.50, 0.1},
		// p90: rank 90 in (0.1, 0.5] holding 40: 0.1 + 0.4*(90-50)/40.
		{"p90", hs[getPods], 0.90, 0.5},
		// p95: rank 95 in (0.5, 1] holding 8: 0.5 + 0.5*(95-90)/8.
		{"p95", hs[getPods], 0.95, 0.8125},
		// p99: rank 99 in (1, 5] holding 2: 1 + 4*(99-98)/2.
		{"p99", hs[getPods], 0.99, 3},
		// LIST pods: every call in +Inf: the highest finite bound.
		{"p99 in +Inf bucket", hs[listPods], 0.99, 5},
		{"empty", Histogram{Buckets: []Bucket{{1, 0}, {inf, 0}}}, 0.99, math.NaN()},
		{"no buckets", Histogram{}, 0.5, math.NaN()},
		// first bound ≤ 0: its bound, no interpolation from 0.
		{"non-positive first bound", Histogram{Buckets: []Bucket{{-1, 5}, {1, 10}, {inf, 10}}}, 0.25, -1},
		{"q above 1", hs[getPods], 1.5, inf},
		{"q below 0", hs[getPods], -0.5, math.Inf(-1)},
		// decreasing counts are raised: 10 5 10 → 10 10 10, p50 rank 5
		// in the first bucket: 0 + 1*5/10.
		{"non-monotonic", Histogram{Buckets: []Bucket{{1, 10}, {2, 5}, {inf, 10}}}, 0.5, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.h.Quantile(tc.q)
			if !same(got, tc.want) {
				t.Fatalf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) < 1e-9
}

func TestSub(t *testing.T) {
	inf := math.Inf(+1)
	later := Histogram{Buckets: []Bucket{{1, 30}, {5, 38}, {inf, 40}}, Count: 40, Sum: 50}
	tests := []struct {
		name    string
		earlier Histogram
		want    Histogram
	}{
		// 30-10, 38-12, 40-12; count 40-12, sum 50-8.
		{"delta", Histogram{Buckets: []Bucket{{1, 10}, {5, 12}, {inf, 12}}, Count: 12, Sum: 8},
			Histogram{Buckets: []Bucket{{1, 20}, {5, 26}, {inf, 28}}, Count: 28, Sum: 42}},
		// the earlier count 100 > 40: a restart, the later is the delta.
		{"counter reset", Histogram{Buckets: []Bucket{{1, 90}, {5, 99}, {inf, 100}}, Count: 100, Sum: 200}, later},
		{"nothing before", Histogram{}, later},
		// a bucket going down while the count went up: also a reset.
		{"bucket went down", Histogram{Buckets: []Bucket{{1, 35}, {5, 35}, {inf, 35}}, Count: 35, Sum: 1}, later},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := later.Sub(tc.earlier); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSubOfScrapes(t *testing.T) {
	// The same GET pods series scraped again after 100 more calls: 20
	// under 0.1 s and 80 in (1, 5]. Delta: 20 20 20 100 100, so p50 has
	// rank 50 in (1, 5] holding 80: 1 + 4*(50-20)/80 = 2.5.
	start := fixtureHistograms(t)[getPods]
	end := start.Clone()
	for i, add := range []float64{20, 20, 20, 100, 100} {
		end.Buckets[i].Count += add
	}
	end.Count += 100
	d := end.Sub(start)
	if d.Count != 100 || !same(d.Quantile(0.5), 2.5) {
		t.Fatalf("delta %+v p50 %v", d, d.Quantile(0.5))
	}
}

func TestCountAbove(t *testing.T) {
	h := fixtureHistograms(t)[getPods] // 50 90 98 100 100 at 0.1 0.5 1 5 +Inf
	tests := []struct {
		x, want float64
	}{
		{1, 2},     // 100 - 98 at le=1
		{0.5, 10},  // 100 - 90
		{0.7, 2},   // not a bound: the bucket above, le=1
		{5, 0},     // 100 - 100
		{100, 0},   // only +Inf is above: 100 - 100
		{0.01, 50}, // le=0.1 is the first bound ≥ 0.01
	}
	for _, tc := range tests {
		if got := h.CountAbove(tc.x); got != tc.want {
			t.Errorf("CountAbove(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

func TestHistogramFromProtoAddsInf(t *testing.T) {
	// No +Inf bucket line: the count stands in for it.
	fams := mustParse(t, "# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_sum 4\nh_count 5\n")
	hs, err := HistogramsBy(fams["h"], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := hs[MakeHistogramKey()]
	if n := len(h.Buckets); n != 2 || !math.IsInf(h.Buckets[1].UpperBound, +1) || h.Buckets[1].Count != 5 {
		t.Fatalf("buckets %+v", h.Buckets)
	}
}
