package measurements

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kscale/kscale/measurements/metrics"
)

// promAnswer is a vector sample of the Prometheus HTTP API.
type promAnswer struct {
	labels map[string]string
	value  string
}

// fakePrometheus answers instant queries of the Prometheus HTTP API with
// what answer returns for each, and keeps the queries it was asked.
type fakePrometheus struct {
	*httptest.Server
	mu    sync.Mutex
	asked []string
}

// newFakePrometheus starts a fake server; a query answer refuses (nil,
// false) gets Prometheus' bad_data error.
func newFakePrometheus(t *testing.T, answer func(q string) []promAnswer) *fakePrometheus {
	t.Helper()
	f := &fakePrometheus{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" || r.ParseForm() != nil {
			http.NotFound(w, r)
			return
		}
		q := r.Form.Get("query")
		f.mu.Lock()
		f.asked = append(f.asked, q)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(q, "(((") {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": "parse error: unexpected left parenthesis"})
			return
		}
		result := []map[string]any{}
		for _, a := range answer(q) {
			result = append(result, map[string]any{"metric": a.labels, "value": []any{1772366400, a.value}})
		}
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": result}})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakePrometheus) queries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// runProm starts and gathers a Prometheus method's instance on env.
func runProm(t *testing.T, env *Env, method string, start, gather Params) ([]Summary, error) {
	t.Helper()
	m := NewManager(env)
	ctx := context.Background()
	start["action"], gather["action"] = "start", "gather"
	if err := m.Execute(ctx, method, "id", start); err != nil {
		t.Fatalf("start: %v", err)
	}
	err := m.Execute(ctx, method, "id", gather)
	return m.Summaries(), err
}

func TestPrometheusMethodsWithoutPrometheus(t *testing.T) {
	for _, c := range []struct {
		method string
		start  Params
		slo    bool
	}{
		{"GenericPrometheusQuery", Params{"metricName": "m", "metricVersion": "v1", "unit": "s", "queries": []any{map[string]any{"name": "q", "query": "up", "threshold": 1}}}, true},
		{"SchedulingThroughputPrometheus", Params{"threshold": 10}, true},
		{"PrometheusSchedulingMetrics", Params{}, false},
	} {
		t.Run(c.method, func(t *testing.T) {
			sums, err := runProm(t, &Env{}, c.method, c.start, Params{"enableViolations": true})
			var nm *NotMeasuredError
			if !errors.As(err, &nm) || nm.Reason != noPrometheus {
				t.Fatalf("err %v, want not measured: no Prometheus", err)
			}
			if len(sums) != 1 || sums[0].Verdict != NotMeasured || sums[0].SLO != c.slo || sums[0].UnmeasuredSLO() != c.slo {
				t.Fatalf("summaries %+v, want one not measured, SLO %v", sums, c.slo)
			}
		})
	}
}

func TestPrometheusMethodsRefuseBadParams(t *testing.T) {
	for name, c := range map[string]struct {
		method string
		start  Params
		want   string
	}{
		"no metricName":      {"GenericPrometheusQuery", Params{"metricVersion": "v1", "unit": "s"}, "param metricName is required"},
		"no unit":            {"GenericPrometheusQuery", Params{"metricName": "m", "metricVersion": "v1"}, "param unit is required"},
		"query without name": {"GenericPrometheusQuery", Params{"metricName": "m", "metricVersion": "v1", "unit": "s", "queries": []any{map[string]any{"query": "up"}}}, "queries[0]: name and query are required"},
		"bad threshold":      {"GenericPrometheusQuery", Params{"metricName": "m", "metricVersion": "v1", "unit": "s", "queries": []any{map[string]any{"name": "q", "query": "up", "threshold": "x"}}}, "queries[0]: param threshold"},
		"negative rate":      {"SchedulingThroughputPrometheus", Params{"threshold": -1}, "negative"},
		"unknown client":     {"PrometheusSchedulingMetrics", Params{"prometheusClient": "elsewhere"}, `"elsewhere" is not inCluster or managed`},
	} {
		t.Run(name, func(t *testing.T) {
			c.start["action"] = "start"
			err := NewManager(&Env{}).Execute(context.Background(), c.method, "id", c.start)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

func TestGenericPrometheusQuery(t *testing.T) {
	answer := func(q string) []promAnswer {
		switch {
		case strings.HasPrefix(q, "p99 "):
			return []promAnswer{{map[string]string{"resource": "pods", "verb": "LIST"}, "0.8"}, {map[string]string{"resource": "nodes"}, "2.5"}}
		case strings.HasPrefix(q, "count "):
			return []promAnswer{{map[string]string{"resource": "pods"}, "40"}, {map[string]string{"resource": "nodes"}, "3"}}
		case strings.HasPrefix(q, "twice"):
			return []promAnswer{{map[string]string{"resource": "pods", "verb": "GET"}, "1"}, {map[string]string{"resource": "pods", "verb": "LIST"}, "2"}}
		}
		return nil
	}
	prom := newFakePrometheus(t, answer)
	clock := newAPIClock()
	env := &Env{PrometheusURL: prom.URL, Clock: clock}
	start := func() Params {
		return Params{"metricName": "Request latency", "metricVersion": "v1", "unit": "s", "dimensions": []any{"resource"},
			"queries": []any{
				map[string]any{"name": "Perc99", "query": "p99 over [%v] and again %v", "threshold": 2},
				map[string]any{"name": "Count", "query": "count over %v", "threshold": 5, "lowerBound": true},
				map[string]any{"name": "Absent", "query": "absent", "requireSamples": true},
			}}
	}
	m := NewManager(env)
	ctx := context.Background()
	p := start()
	p["action"] = "start"
	if err := m.Execute(ctx, "GenericPrometheusQuery", "latency", p); err != nil {
		t.Fatal(err)
	}
	clock.Step(10*time.Minute + 300*time.Millisecond)
	err := m.Execute(ctx, "GenericPrometheusQuery", "latency", Params{"action": "gather", "enableViolations": true})
	var v *ViolationError
	want := []string{
		"Perc99 {resource=nodes}: 2.5 is above the threshold 2",
		"Count {resource=nodes}: 3 is below the threshold 5",
		"Absent: query returned no samples",
	}
	if !errors.As(err, &v) || !reflect.DeepEqual(v.Items, want) {
		t.Fatalf("gather: %v, want violations %q", err, want)
	}
	sums := m.Summaries()
	if len(sums) != 1 || !sums[0].SLO || sums[0].Verdict != Violated || sums[0].FileName() != "GenericPrometheusQuery Request latency" {
		t.Fatalf("summaries %+v", sums)
	}
	pd := sums[0].PerfData
	wantItems := []metrics.DataItem{
		{Data: map[string]float64{"Perc99": 2.5, "Count": 3}, Unit: "s", Labels: map[string]string{"resource": "nodes"}},
		{Data: map[string]float64{"Perc99": 0.8, "Count": 40}, Unit: "s", Labels: map[string]string{"resource": "pods"}},
	}
	if pd.Version != "v1" || !reflect.DeepEqual(pd.DataItems, wantItems) {
		t.Fatalf("PerfData %+v, want version v1 and %+v", pd, wantItems)
	}
	// The span replaces every %v, in whole seconds rounded up.
	if q := prom.queries()[0]; q != "p99 over [601s] and again 601s" {
		t.Fatalf("first query %q", q)
	}

	t.Run("violations only listed without enableViolations", func(t *testing.T) {
		sums, err := runProm(t, env, "GenericPrometheusQuery", start(), Params{})
		if err != nil || len(sums) != 1 || sums[0].Verdict != Pass || sums[0].SLO || !reflect.DeepEqual(sums[0].Violations, want) {
			t.Fatalf("err %v summaries %+v", err, sums)
		}
	})
	t.Run("a sample that is not a number counts as absent", func(t *testing.T) {
		nan := newFakePrometheus(t, func(q string) []promAnswer {
			return []promAnswer{{map[string]string{"resource": "pods"}, "NaN"}, {map[string]string{"resource": "nodes"}, "+Inf"}}
		})
		p := Params{"metricName": "m", "metricVersion": "v1", "unit": "s", "dimensions": []any{"resource"},
			"queries": []any{map[string]any{"name": "Lag", "query": "histogram_quantile(0.99, x)", "threshold": 1, "requireSamples": true}}}
		sums, err := runProm(t, &Env{PrometheusURL: nan.URL, Clock: newAPIClock()}, "GenericPrometheusQuery", p, Params{"enableViolations": true})
		if !errors.As(err, &v) || !reflect.DeepEqual(v.Items, []string{"Lag: query returned no samples"}) {
			t.Fatalf("err %v, want the query without samples", err)
		}
		if len(sums) != 1 || len(sums[0].PerfData.DataItems) != 0 {
			t.Fatalf("summaries %+v, want no data item", sums)
		}
		if _, err := json.Marshal(sums[0].PerfData); err != nil {
			t.Fatalf("the PerfData does not encode: %v", err)
		}
	})
	t.Run("two samples for one item", func(t *testing.T) {
		p := Params{"metricName": "m", "metricVersion": "v1", "unit": "1", "dimensions": []any{"resource"},
			"queries": []any{map[string]any{"name": "N", "query": "twice"}}}
		_, err := runProm(t, env, "GenericPrometheusQuery", p, Params{"enableViolations": true})
		if !errors.As(err, &v) || len(v.Items) != 1 || !strings.Contains(v.Items[0], "want a single value") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a query Prometheus refuses fails the measurement", func(t *testing.T) {
		p := Params{"metricName": "m", "metricVersion": "v1", "unit": "1", "queries": []any{map[string]any{"name": "N", "query": "sum((("}}}
		sums, err := runProm(t, env, "GenericPrometheusQuery", p, Params{})
		if err == nil || errors.As(err, new(*NotMeasuredError)) || sums[0].Verdict != Failed || !strings.Contains(sums[0].Reason, "refuses the query") {
			t.Fatalf("err %v summaries %+v", err, sums)
		}
	})
	t.Run("managed client", func(t *testing.T) {
		p := start()
		p["prometheusClient"] = "managed"
		_, err := runProm(t, env, "GenericPrometheusQuery", p, Params{"prometheusClient": "managed"})
		if !errors.As(err, new(*NotMeasuredError)) {
			t.Fatalf("err %v, want not measured", err)
		}
	})
}

func TestSchedulingThroughputPrometheus(t *testing.T) {
	prom := newFakePrometheus(t, func(q string) []promAnswer {
		switch {
		case strings.HasPrefix(q, "max_over_time(sum(irate("):
			return []promAnswer{{nil, "42.5"}}
		case strings.HasPrefix(q, "sum(apiserver_request_total{") && strings.HasSuffix(q, " offset 1s)"):
			return []promAnswer{{nil, "999.6"}}
		}
		return nil
	})
	clock := newAPIClock()
	env := &Env{PrometheusURL: prom.URL, Clock: clock}
	sums, err := runProm(t, env, "SchedulingThroughputPrometheus", Params{"threshold": 50}, Params{"enableViolations": true})
	var v *ViolationError
	if !errors.As(err, &v) || v.Items[0] != "scheduling throughput max 42.5 pods/s < 50 pods/s (Prometheus)" {
		t.Fatalf("err %v", err)
	}
	s := sums[0]
	if !s.SLO || s.Headline["max pods/s"] != 42.5 || s.Headline["bindings"] != 1000 || s.Thresholds["max pods/s"] != 50 {
		t.Fatalf("summary %+v", s)
	}
	body, _, _ := s.ReportFile()
	if strings.TrimSpace(string(body)) != "{\n  \"max\": 42.5\n}" {
		t.Fatalf("report file %s, want clusterloader2's {max}", body)
	}
	perfdashReads(t, s)
	q := prom.queries()[0]
	for _, frag := range []string{`apiserver_request_total{verb="POST",resource="pods",subresource="binding",code="201"}[1m]`, ":5s])"} {
		if !strings.Contains(q, frag) {
			t.Errorf("query %s lacks %s", q, frag)
		}
	}
	// No threshold: nothing judged, not an SLO.
	sums, err = runProm(t, env, "SchedulingThroughputPrometheus", Params{}, Params{"enableViolations": true})
	if err != nil || sums[0].SLO || sums[0].Verdict != Pass {
		t.Fatalf("err %v summary %+v", err, sums[0])
	}
}

func TestPrometheusSchedulingMetrics(t *testing.T) {
	buckets := func(counts ...string) []promAnswer {
		les := []string{"0.001", "0.01", "0.1", "+Inf"}
		var out []promAnswer
		for i, c := range counts {
			out = append(out, promAnswer{map[string]string{"le": les[i]}, c})
		}
		return out
	}
	prom := newFakePrometheus(t, func(q string) []promAnswer {
		switch {
		case strings.Contains(q, "scheduler_pod_scheduling_sli_duration_seconds_bucket{}"):
			return buckets("0", "50", "100", "100")
		case strings.Contains(q, `extension_point="Filter"`):
			return buckets("100", "100", "100", "100")
		}
		return nil
	})
	sums, err := runProm(t, &Env{PrometheusURL: prom.URL, Clock: newAPIClock()}, "PrometheusSchedulingMetrics", Params{}, Params{})
	if err != nil || len(sums) != 1 || sums[0].Name != "id_PrometheusSchedulingMetrics" {
		t.Fatalf("err %v summaries %+v", err, sums)
	}
	f := sums[0].Output.(schedulingMetricsFile)
	// p50 of 100 observations, 50 up to 10 ms and 50 more up to 100 ms.
	if f.E2eSchedulingLatency.Perc50 != 10*time.Millisecond || f.FrameworkExtensionPointDuration["Filter"].Perc99 != 990*time.Microsecond ||
		f.FrameworkExtensionPointDuration["Score"].Perc99 != 0 || f.SchedulingLatency.Perc99 != 0 {
		t.Fatalf("file %+v", f)
	}
	if h := sums[0].Headline; len(h) != 2 || h["pod_scheduling_sli p99 ms"] < 90 {
		t.Fatalf("headline %v", h)
	}
	if n := len(prom.queries()); n != 3+len(schedulerExtensionPoints) {
		t.Fatalf("%d queries, want one per histogram", n)
	}
}

func TestSLOMeasurement(t *testing.T) {
	prom := newFakePrometheus(t, func(q string) []promAnswer {
		if strings.HasPrefix(q, "max_over_time(") {
			return []promAnswer{{nil, "80"}}
		}
		return nil
	})
	env := &Env{PrometheusURL: prom.URL, Clock: newAPIClock()}
	start := Params{"threshold": 100, "overrides": map[string]any{"SchedulingThroughputPrometheus": map[string]any{"threshold": 50}}}
	sums, err := runProm(t, env, "SLOMeasurement", start, Params{"enableViolations": true})
	if err != nil {
		t.Fatalf("gather: %v (the override's 50 pods/s holds)", err)
	}
	byName := map[string]Summary{}
	for _, s := range sums {
		byName[s.Name] = s
	}
	dns, sched := byName["DnsLookupLatency"], byName["SchedulingThroughputPrometheus"]
	if len(sums) != 2 || dns.Verdict != NotMeasured || !dns.UnmeasuredSLO() || sched.Verdict != Pass || !sched.SLO || sched.Thresholds["max pods/s"] != 50 {
		t.Fatalf("summaries %+v", sums)
	}
	// Without the override, the entry's own threshold judges.
	_, err = runProm(t, env, "SLOMeasurement", Params{"threshold": 100}, Params{"enableViolations": true})
	if !errors.As(err, new(*ViolationError)) {
		t.Fatalf("err %v, want a violation of 100 pods/s", err)
	}
}

// TestAPIResponsivenessCrossCheck: with a Prometheus and a readable
// /metrics, the verdict is Prometheus' and kscale's own scrapes stand
// beside it, item by item.
func TestAPIResponsivenessCrossCheck(t *testing.T) {
	start := apiExposition(sli, apiSeries{verb: "GET", resource: "pods", scope: "resource"})
	// GET pods: 90 calls ≤ 0.1 s, 10 ≤ 1 s: p50 55.6 ms, p90 100 ms, p99
	// 910 ms. LIST nodes: 10 calls in (5, 30]. POST namespaces: one call,
	// whose series Prometheus has not seen grow.
	gather := apiExposition(sli,
		apiSeries{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{90, 10}},
		apiSeries{verb: "LIST", resource: "nodes", scope: "cluster", calls: [6]float64{0, 0, 0, 10}},
		apiSeries{verb: "POST", resource: "namespaces", scope: "cluster", calls: [6]float64{1}},
	)
	srv := httptest.NewServer(&metricsServer{texts: []string{start, gather}})
	defer srv.Close()
	getPods := map[string]string{"verb": "GET", "resource": "pods", "subresource": "", "scope": "resource"}
	listNodes := map[string]string{"verb": "LIST", "resource": "nodes", "subresource": "", "scope": "cluster"}
	prom := newFakePrometheus(t, func(q string) []promAnswer {
		if !strings.Contains(q, sli) {
			return nil
		}
		switch {
		case strings.HasPrefix(q, "sum by (verb, resource, subresource, scope) ("):
			return []promAnswer{{getPods, "100"}, {listNodes, "10"}}
		case strings.HasPrefix(q, "histogram_quantile(0.5,"):
			// 57 ms: within 5 % of 55.6 ms. LIST nodes 20 s, far
			// from 18.75 s but in the same (5, 30] bucket.
			return []promAnswer{{getPods, "0.057"}, {listNodes, "20"}}
		case strings.HasPrefix(q, "histogram_quantile(0.9,"):
			return []promAnswer{{getPods, "0.1"}, {listNodes, "27.5"}}
		case strings.HasPrefix(q, "histogram_quantile(0.99,"), strings.HasPrefix(q, "max_over_time("):
			// GET pods 40 s: further from 910 ms than the width of
			// the (30, 60] bucket.
			return []promAnswer{{getPods, "40"}, {listNodes, "29.75"}}
		}
		return nil
	})
	clock := newAPIClock()
	env := clientEnv(t, srv.URL, clock)
	env.PrometheusURL = prom.URL
	a := quiet(false)
	ctx := context.Background()
	if _, err := a.Execute(ctx, env, Params{"action": "start"}); err != nil {
		t.Fatal(err)
	}
	clock.Step(time.Minute)
	sums, err := a.Execute(ctx, env, Params{"action": "gather"})
	if !errors.As(err, new(*ViolationError)) {
		t.Fatalf("gather: %v, want Prometheus' 40 s GET pods to violate", err)
	}
	c := sums[0].CrossCheck
	if c == nil || !strings.HasPrefix(c.Source, "Prometheus at "+prom.URL) || !strings.HasPrefix(c.Other, "kscale's scrapes of the apiserver") {
		t.Fatalf("cross-check %+v", c)
	}
	var bad []string
	for _, r := range c.Disagreements() {
		bad = append(bad, r.Item+" "+r.What)
	}
	want := []string{"GET pods scope=resource p99", "GET pods scope=resource worst-window p99"}
	if !reflect.DeepEqual(bad, want) || len(c.Rows) != 8 {
		t.Fatalf("disagreements %q of %d rows, want %q of 8", bad, len(c.Rows), want)
	}
	if len(c.Missing) != 1 || !strings.HasPrefix(c.Missing[0], "POST namespaces scope=cluster: 1 calls in kscale's scrapes") {
		t.Fatalf("missing %q", c.Missing)
	}

	t.Run("simple: no windows to compare", func(t *testing.T) {
		srv := httptest.NewServer(&metricsServer{texts: []string{start, gather}})
		defer srv.Close()
		env := clientEnv(t, srv.URL, clock)
		env.PrometheusURL = prom.URL
		a := quiet(true)
		if _, err := a.Execute(ctx, env, Params{"action": "start"}); err != nil {
			t.Fatal(err)
		}
		clock.Step(time.Minute)
		sums, _ := a.Execute(ctx, env, Params{"action": "gather"})
		c := sums[0].CrossCheck
		if c == nil || len(c.Rows) != 6 {
			t.Fatalf("cross-check %+v, want p50, p90 and p99 of two items", c)
		}
		for _, r := range c.Rows {
			if r.What == "worst-window p99" {
				t.Fatalf("a simple run compares windows: %+v", r)
			}
		}
	})
	t.Run("Prometheus unreachable: kscale's own numbers judge", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		srv := httptest.NewServer(&metricsServer{texts: []string{start, gather}})
		defer srv.Close()
		env := clientEnv(t, srv.URL, clock)
		env.PrometheusURL = closed.URL
		a := quiet(false)
		if _, err := a.Execute(ctx, env, Params{"action": "start"}); err != nil {
			t.Fatal(err)
		}
		clock.Step(time.Minute)
		sums, err := a.Execute(ctx, env, Params{"action": "gather"})
		if err != nil || sums[0].CrossCheck == nil || !strings.Contains(sums[0].CrossCheck.Note, "querying Prometheus") ||
			!strings.HasPrefix(sums[0].CrossCheck.Source, "kscale's scrapes") {
			t.Fatalf("err %v summaries %+v", err, sums)
		}
	})
}
