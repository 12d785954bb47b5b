package measurements

import (
	"context"
	"errors"
	"fmt"
	testingclock "k8s.io/utils/clock/testing"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiTestBounds are the bucket bounds of the test histograms.
var apiTestBounds = []string{"0.1", "1", "5", "30", "60", "+Inf"}

// apiSeries is one series of a latency histogram, with its calls per bucket
// (not cumulative, to read easily): ≤0.1 s, ≤1 s, ≤5 s, ≤30 s, ≤60 s, more.
type apiSeries struct {
	verb, resource, subresource, scope, group string
	calls                                     [6]float64
}

// apiExposition writes series as the apiserver's /metrics would.
func apiExposition(metric string, series ...apiSeries) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s Response latency.\n# TYPE %s histogram\n", metric, metric)
	for _, s := range series {
		labels := fmt.Sprintf(`component="apiserver",group=%q,resource=%q,scope=%q,subresource=%q,verb=%q,version="v1"`,
			s.group, s.resource, s.scope, s.subresource, s.verb)
		cum := 0.0
		for i, le := range apiTestBounds {
			cum += s.calls[i]
			fmt.Fprintf(&b, "%s_bucket{%s,le=%q} %g\n", metric, labels, le, cum)
		}
		fmt.Fprintf(&b, "%s_sum{%s} 0\n%s_count{%s} %g\n", metric, labels, metric, labels, cum)
	}
	return b.String()
}

const sli = "apiserver_request_sli_duration_seconds"

// newAPIClock is the tests' clock, at a fixed start.
func newAPIClock() *testingclock.FakeClock {
	return testingclock.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// metricsServer serves /metrics from texts, one per request, repeating the
// last; status other than 200 fails every request.
type metricsServer struct {
	mu     sync.Mutex
	texts  []string
	status int
}

func (m *metricsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	if m.status != 0 && m.status != http.StatusOK {
		http.Error(w, "boom", m.status)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprint(w, m.texts[0])
	if len(m.texts) > 1 {
		m.texts = m.texts[1:]
	}
}

// clientEnv is an Env whose client talks to url, so the production scrape
// path (Env.APIServerMetrics) is what the test runs.
func clientEnv(t *testing.T, url string, clock *testingclock.FakeClock) *Env {
	t.Helper()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: url})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Client: client, Clock: clock}
}

// quiet is an instance whose background scrapes never tick, so a test
// decides when scrapes happen.
func quiet(simple bool) *apiResponsiveness {
	a := newAPIResponsiveness(simple)
	a.interval = time.Hour
	return a
}

func TestAPIResponsivenessDeltaAndExclusions(t *testing.T) {
	start := apiExposition(sli,
		apiSeries{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{100}},
		apiSeries{verb: "WATCH", resource: "pods", scope: "namespace", calls: [6]float64{0, 0, 0, 0, 0, 3}},
	)
	gather := apiExposition(sli,
		// 100 calls before start are not the run's: the run has 90 ≤ 0.1 s,
		// 8 ≤ 1 s, 2 ≤ 5 s. p50: rank 50 in (0, 0.1] holding 90:
		// 0.1*50/90 = 55.56 ms. p90: rank 90 reaches 90 at 0.1: 100 ms.
		// p99: rank 99 in (1, 5] holding 2: 1 + 4*(99-98)/2 = 3 s > 1 s.
		// Slow (over 1 s): 100 - 98 = 2.
		apiSeries{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{190, 8, 2}},
		// New after start: 10 calls in (5, 30]: p99 = 5 + 25*9.9/10 =
		// 29.75 s, within 30 s.
		apiSeries{verb: "LIST", resource: "pods", scope: "cluster", calls: [6]float64{0, 0, 0, 10}},
		// A CRD read counts; p99 = 0.1*4.95/5 = 99 ms.
		apiSeries{verb: "GET", resource: "widgets", scope: "resource", group: "example.com", calls: [6]float64{5}},
		// A built-in mutating call counts: p99 = 0.1*9.9/10 = 99 ms.
		apiSeries{verb: "POST", resource: "deployments", scope: "resource", group: "apps", calls: [6]float64{10}},
		// Excluded, all of them slow enough to fail were they counted.
		apiSeries{verb: "WATCH", resource: "pods", scope: "namespace", calls: [6]float64{0, 0, 0, 0, 0, 9}},
		apiSeries{verb: "WATCHLIST", resource: "pods", scope: "cluster", calls: [6]float64{0, 0, 0, 0, 0, 9}},
		apiSeries{verb: "CONNECT", resource: "pods", subresource: "exec", scope: "resource", calls: [6]float64{0, 0, 0, 0, 0, 9}},
		apiSeries{verb: "GET", resource: "pods", subresource: "log", scope: "resource", calls: [6]float64{0, 0, 0, 0, 0, 9}},
		apiSeries{verb: "GET", resource: "services", subresource: "proxy", scope: "resource", calls: [6]float64{0, 0, 0, 0, 0, 9}},
		apiSeries{verb: "LIST", resource: "events", scope: "cluster", calls: [6]float64{0, 0, 0, 0, 0, 9}},
		apiSeries{verb: "POST", resource: "widgets", scope: "resource", group: "example.com", calls: [6]float64{0, 0, 0, 0, 0, 9}},
		apiSeries{verb: "PUT", resource: "clusters", scope: "resource", group: "cluster.x-k8s.io", calls: [6]float64{0, 0, 0, 0, 0, 9}},
	) + "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1\n"
	srv := httptest.NewServer(&metricsServer{texts: []string{start, gather}})
	defer srv.Close()
	clock := newAPIClock()
	env := clientEnv(t, srv.URL, clock)
	a := quiet(false)
	ctx := context.Background()

	if _, err := a.Execute(ctx, env, Params{"action": "start"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	clock.Step(2 * time.Minute)
	sums, err := a.Execute(ctx, env, Params{"action": "gather"})

	// The run is shorter than 5 minutes, so its only window is the run.
	var v *ViolationError
	if !errors.As(err, &v) {
		t.Fatalf("gather: %v, want a violation", err)
	}
	wantViolations := []string{"GET pods scope=resource: p99 (worst 5-min window) 3s > 1s"}
	if !reflect.DeepEqual(v.Items, wantViolations) {
		t.Fatalf("violations %q, want %q", v.Items, wantViolations)
	}
	if len(sums) != 1 {
		t.Fatalf("summaries %+v", sums)
	}
	s := sums[0]
	if s.Name != "APIResponsivenessPrometheus" || !reflect.DeepEqual(s.Violations, wantViolations) {
		t.Fatalf("summary %q violations %q", s.Name, s.Violations)
	}
	wantHeadline := map[string]float64{"worst p99 ms": 3000, "items": 4, "calls": 125, "slow calls": 2}
	if !reflect.DeepEqual(s.Headline, wantHeadline) || s.Thresholds["worst p99 ms"] != 1000 {
		t.Fatalf("headline %v thresholds %v, want %v and 1000", s.Headline, s.Thresholds, wantHeadline)
	}
	if s.PerfData == nil || s.PerfData.Version != "v1" {
		t.Fatalf("perfdata %+v", s.PerfData)
	}
	// perfdash plots the latencies, and the request counts from the
	// Count labels.
	if pd := perfdashReads(t, s); len(pd[1].Items) != 4 || pd[1].Items[1].Data["RequestCount"] != 100 || pd[0].Items[1].Labels["SlowCount"] != "" {
		t.Errorf("perfdash reads %+v", pd)
	}
	type row struct {
		labels map[string]string
		data   map[string]float64
	}
	want := []row{
		{map[string]string{"Verb": "LIST", "Resource": "pods", "Subresource": "", "Scope": "cluster", "Count": "10", "SlowCount": "0"},
			map[string]float64{"Perc50": 5000 + 25000*5.0/10, "Perc90": 5000 + 25000*9.0/10, "Perc99": 29750}},
		{map[string]string{"Verb": "GET", "Resource": "pods", "Subresource": "", "Scope": "resource", "Count": "100", "SlowCount": "2"},
			map[string]float64{"Perc50": 100.0 * 50 / 90, "Perc90": 100, "Perc99": 3000}},
		{map[string]string{"Verb": "GET", "Resource": "widgets", "Subresource": "", "Scope": "resource", "Count": "5", "SlowCount": "0"},
			map[string]float64{"Perc50": 50, "Perc90": 90, "Perc99": 99}},
		{map[string]string{"Verb": "POST", "Resource": "deployments", "Subresource": "", "Scope": "resource", "Count": "10", "SlowCount": "0"},
			map[string]float64{"Perc50": 50, "Perc90": 90, "Perc99": 99}},
	}
	got := s.PerfData.DataItems
	if len(got) != len(want) {
		t.Fatalf("%d data items, want %d (exclusions): %+v", len(got), len(want), got)
	}
	// Sorted by p99, slowest first as clusterloader2 writes them; the two
	// 99 ms items by name. The headline's worst is GET pods all the same:
	// 3 s of 1 s is worse than 29.75 s of 30 s.
	for i, w := range want {
		if got[i].Unit != "ms" || !reflect.DeepEqual(got[i].Labels, w.labels) {
			t.Errorf("item %d: labels %v unit %q, want %v", i, got[i].Labels, got[i].Unit, w.labels)
		}
		for k, wv := range w.data {
			if math.Abs(got[i].Data[k]-wv) > 1e-6 {
				t.Errorf("item %d %s: %s = %v, want %v", i, w.labels["Verb"]+" "+w.labels["Resource"], k, got[i].Data[k], wv)
			}
		}
	}
}

func TestAPIResponsivenessChoosesMetric(t *testing.T) {
	call := apiSeries{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{1}}
	tests := []struct {
		name    string
		exposes []string
		want    string
	}{
		{"1.26 and later", []string{"apiserver_request_duration_seconds", "apiserver_request_slo_duration_seconds", sli}, sli},
		{"1.23 to 1.25", []string{"apiserver_request_duration_seconds", "apiserver_request_slo_duration_seconds"}, "apiserver_request_slo_duration_seconds"},
		{"older", []string{"apiserver_request_duration_seconds"}, "apiserver_request_duration_seconds"},
		{"none", []string{"etcd_request_duration_seconds"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var text string
			for _, m := range tc.exposes {
				text += apiExposition(m, call)
			}
			a := quiet(false)
			a.scrape = func(context.Context, *Env) ([]byte, error) { return []byte(text), nil }
			err := a.begin(context.Background(), &Env{})
			defer a.halt()
			var nm *NotMeasuredError
			if tc.want == "" {
				if !errors.As(err, &nm) || !strings.Contains(nm.Reason, sli) {
					t.Fatalf("start: %v, want not measured naming the metrics", err)
				}
				return
			}
			if err != nil || a.metric != tc.want {
				t.Fatalf("start: %v, metric %q, want %q", err, a.metric, tc.want)
			}
		})
	}
}

// thresholdFixture: the run's calls of the threshold tests, all after start.
//
//	GET pods resource: 90 ≤ 0.1 s, 8 ≤ 1 s, 2 ≤ 5 s → p99 1 + 4*(99-98)/2 = 3 s,
//	  2 calls over 1 s.
//	LIST pods namespace: 10 in (5, 30] → p99 5 + 25*9.9/10 = 29.75 s,
//	  0 calls over 30 s, 10 over 5 s.
//	LIST nodes cluster: 10 in (30, 60] → p99 30 + 30*9.9/10 = 59.7 s,
//	  10 calls over 30 s.
var thresholdFixture = []apiSeries{
	{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{90, 8, 2}},
	{verb: "LIST", resource: "pods", scope: "namespace", calls: [6]float64{0, 0, 0, 10}},
	{verb: "LIST", resource: "nodes", scope: "cluster", calls: [6]float64{0, 0, 0, 0, 10}},
}

// runOnce starts a, moves the clock and gathers with params, the scrapes
// answering start and then end.
func runOnce(t *testing.T, a *apiResponsiveness, start, end string, d time.Duration, params Params) ([]Summary, error) {
	t.Helper()
	var mu sync.Mutex
	texts := []string{start, end}
	a.scrape = func(context.Context, *Env) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		text := texts[0]
		if len(texts) > 1 {
			texts = texts[1:]
		}
		return []byte(text), nil
	}
	clock := newAPIClock()
	env := &Env{Clock: clock}
	if _, err := a.Execute(context.Background(), env, Params{"action": "start"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	clock.Step(d)
	params["action"] = "gather"
	return a.Execute(context.Background(), env, params)
}

func TestAPIResponsivenessThresholds(t *testing.T) {
	var zero []apiSeries
	for _, s := range thresholdFixture {
		s.calls = [6]float64{}
		zero = append(zero, s)
	}
	start, end := apiExposition(sli, zero...), apiExposition(sli, thresholdFixture...)
	const (
		getPods   = "GET pods scope=resource: p99 (worst 5-min window) 3s > 1s"
		listNodes = "LIST nodes scope=cluster: p99 (worst 5-min window) 59.7s > 30s"
		listPods5 = "LIST pods scope=namespace: p99 (worst 5-min window) 29.75s > 5s"
	)
	customList := []any{
		map[string]any{"verb": "GET", "resource": "pods", "subresource": "", "scope": "resource", "threshold": "5s"},
		map[string]any{"verb": "list", "resource": "nodes", "scope": "cluster", "threshold": "1m"},
	}
	customYAML := `
- verb: GET
  resource: pods
  scope: resource
  threshold: 5s
- verb: LIST
  resource: nodes
  subresource: ""
  scope: cluster
  threshold: 1m
`
	tests := []struct {
		name       string
		simple     bool
		params     Params
		wantErr    string // a failure, not a verdict
		violations []string
		// listed are the violations of a summary whose verdict passes.
		listed      []string
		summaryName string
	}{
		{name: "SLO thresholds", params: Params{}, violations: []string{getPods, listNodes}},
		{name: "legacy namespace LIST threshold", params: Params{"legacyNamespaceListThreshold": "5s"},
			violations: []string{getPods, listNodes, listPods5}},
		{name: "custom thresholds as a list", params: Params{"customThresholds": customList}},
		{name: "custom thresholds as a YAML string", params: Params{"customThresholds": customYAML}},
		{name: "custom threshold naming no call", params: Params{"customThresholds": []any{
			map[string]any{"verb": "GET", "resource": "pods", "subresource": "status", "scope": "resource", "threshold": "5s"}}},
			violations: []string{getPods, listNodes}},
		// GET pods had 2 slow calls, LIST nodes 10.
		{name: "allowedSlowCalls lets items with that few slow calls pass", params: Params{"allowedSlowCalls": 2},
			violations: []string{listNodes}},
		{name: "allowedSlowCalls one short", params: Params{"allowedSlowCalls": 1},
			violations: []string{getPods, listNodes}},
		{name: "allowedSlowCalls covering all", params: Params{"allowedSlowCalls": "10"}},
		{name: "violations disabled", params: Params{"enableViolations": false}, listed: []string{getPods, listNodes}},
		{name: "simple judges the whole run", simple: true, params: Params{}, summaryName: "APIResponsivenessPrometheus_simple",
			violations: []string{
				"GET pods scope=resource: p99 (whole run) 3s > 1s",
				"LIST nodes scope=cluster: p99 (whole run) 59.7s > 30s",
			}},
		{name: "useSimpleLatencyQuery on the main method", params: Params{"useSimpleLatencyQuery": true, "enableViolations": "false"},
			summaryName: "APIResponsivenessPrometheus_simple",
			listed: []string{
				"GET pods scope=resource: p99 (whole run) 3s > 1s",
				"LIST nodes scope=cluster: p99 (whole run) 59.7s > 30s",
			}},
		{name: "custom threshold without threshold", params: Params{"customThresholds": []any{map[string]any{"verb": "GET"}}},
			wantErr: "customThresholds[0]: threshold must be a positive duration"},
		{name: "custom thresholds not YAML", params: Params{"customThresholds": "- verb: [GET"}, wantErr: "not a YAML list"},
		{name: "negative allowedSlowCalls", params: Params{"allowedSlowCalls": -1}, wantErr: "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sums, err := runOnce(t, quiet(tc.simple), start, end, 2*time.Minute, tc.params)
			if tc.wantErr != "" {
				var v *ViolationError
				var nm *NotMeasuredError
				if err == nil || errors.As(err, &v) || errors.As(err, &nm) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want a failure saying %q", err, tc.wantErr)
				}
				return
			}
			var got []string
			var v *ViolationError
			switch {
			case errors.As(err, &v):
				got = v.Items
			case err != nil:
				t.Fatalf("gather: %v", err)
			}
			if !sameItems(got, tc.violations) {
				t.Fatalf("violations %q, want %q", got, tc.violations)
			}
			if len(sums) != 1 {
				t.Fatalf("summaries %+v", sums)
			}
			wantListed := tc.violations
			if tc.listed != nil {
				wantListed = tc.listed
			}
			if !sameItems(sums[0].Violations, wantListed) {
				t.Fatalf("summary violations %q, want %q", sums[0].Violations, wantListed)
			}
			name := tc.summaryName
			if name == "" {
				name = "APIResponsivenessPrometheus"
			}
			if sums[0].Name != name {
				t.Fatalf("summary name %q, want %q", sums[0].Name, name)
			}
		})
	}
}

func sameItems(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func TestAPIResponsivenessWorstWindow(t *testing.T) {
	// 30 minutes of scrapes every 30 s, 100 GET pods calls between
	// scrapes; during minutes 10-15, 3 of each 100 take (1, 5].
	//
	// Whole run: 6000 calls, 5970 ≤ 0.1 s: rank 5940 in the first bucket:
	// 0.1*5940/5970 = 99.497 ms, within 1 s.
	// Window [10m, 15m]: 1000 calls, 970 ≤ 0.1 s, 30 in (1, 5]: rank 990
	// in (1, 5]: 1 + 4*(990-970)/30 = 3.667 s, over 1 s.
	const wantWindow, wantRun = 1 + 4*20.0/30, 0.1 * 5940 / 5970
	for _, simple := range []bool{false, true} {
		t.Run(fmt.Sprintf("simple=%v", simple), func(t *testing.T) {
			var fast, slow float64
			text := func() []byte {
				return []byte(apiExposition(sli, apiSeries{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{fast, 0, slow}}))
			}
			a := quiet(simple)
			a.scrape = func(context.Context, *Env) ([]byte, error) { return text(), nil }
			clock := newAPIClock()
			env := &Env{Clock: clock}
			ctx := context.Background()
			if _, err := a.Execute(ctx, env, Params{"action": "start"}); err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 59; k++ {
				if k >= 20 && k < 30 {
					fast, slow = fast+97, slow+3
				} else {
					fast += 100
				}
				clock.Step(30 * time.Second)
				if err := a.scrapeOnce(ctx, env); err != nil {
					t.Fatal(err)
				}
			}
			fast += 100 // the 60th interval, scraped by gather
			clock.Step(30 * time.Second)
			sums, err := a.Execute(ctx, env, Params{"action": "gather"})
			var v *ViolationError
			if simple {
				if err != nil {
					t.Fatalf("simple: %v, want a pass on the run-long p99", err)
				}
				if p99 := sums[0].PerfData.DataItems[0].Data["Perc99"]; math.Abs(p99-wantRun*1000) > 1e-6 {
					t.Fatalf("simple Perc99 %v ms, want %v", p99, wantRun*1000)
				}
				return
			}
			if !errors.As(err, &v) || len(v.Items) != 1 || v.Items[0] != "GET pods scope=resource: p99 (worst 5-min window) 3.667s > 1s" {
				t.Fatalf("gather: %v, want the 5-minute window to fail", err)
			}
			item := sums[0].PerfData.DataItems[0]
			if math.Abs(item.Data["Perc99"]-wantWindow*1000) > 1e-6 || item.Labels["Count"] != "6000" || item.Labels["SlowCount"] != "30" {
				t.Fatalf("item %+v, want Perc99 %v ms of 6000 calls, 30 slow", item, wantWindow*1000)
			}
			// The violating window is the item's worst window: the
			// minutes of the slow calls.
			t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			if w := sums[0].Window; w == nil || !w.Start.Equal(t0.Add(10*time.Minute)) || !w.End.Equal(t0.Add(15*time.Minute)) {
				t.Fatalf("summary window %+v, want 12:10-12:15", w)
			}
			// The tracker kept one window of scrapes, not the run's.
			for _, tr := range a.trackers {
				if r := tr.Result(); r.End.Sub(r.Start) != 5*time.Minute {
					t.Fatalf("worst window %v - %v", r.Start, r.End)
				}
			}
		})
	}
}

func TestAPIResponsivenessBackgroundScrapesStop(t *testing.T) {
	// Every scrape has one call more than the one before.
	text := func(n int64) []byte {
		return []byte(apiExposition(sli, apiSeries{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{float64(n)}}))
	}
	waitFor := func(n *atomic.Int64, atLeast int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for n.Load() < atLeast {
			if time.Now().After(deadline) {
				t.Fatalf("%d scrapes, want %d", n.Load(), atLeast)
			}
			time.Sleep(time.Millisecond)
		}
	}
	stable := func(n *atomic.Int64) bool {
		before := n.Load()
		time.Sleep(50 * time.Millisecond)
		return n.Load() == before
	}
	for _, how := range []string{"gather", "context"} {
		t.Run(how, func(t *testing.T) {
			var n atomic.Int64
			a := newAPIResponsiveness(false)
			a.interval = 2 * time.Millisecond
			a.scrape = func(context.Context, *Env) ([]byte, error) { return text(n.Add(1)), nil }
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if _, err := a.Execute(ctx, &Env{}, Params{"action": "start"}); err != nil {
				t.Fatal(err)
			}
			waitFor(&n, 4) // the start scrape and three from the loop
			if how == "gather" {
				if _, err := a.Execute(ctx, &Env{}, Params{"action": "gather"}); err != nil {
					t.Fatal(err)
				}
			} else {
				cancel()
			}
			// A scrape under way when the context ended may still count.
			time.Sleep(10 * time.Millisecond)
			if !stable(&n) {
				t.Fatalf("scrapes go on after %s", how)
			}
		})
	}
}

func TestAPIResponsivenessNotMeasured(t *testing.T) {
	good := apiExposition(sli, apiSeries{verb: "GET", resource: "pods", scope: "resource", calls: [6]float64{1}})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name string
		// env makes the Env and returns a func that breaks /metrics
		// after start (nil: start fails already).
		env  func(t *testing.T) (*Env, func())
		want string
	}{
		{"server error at start", func(t *testing.T) (*Env, func()) {
			srv := httptest.NewServer(&metricsServer{texts: []string{good}, status: http.StatusInternalServerError})
			t.Cleanup(srv.Close)
			return clientEnv(t, srv.URL, newAPIClock()), nil
		}, "at start: scraping the apiserver's /metrics"},
		{"unreachable at start", func(t *testing.T) (*Env, func()) {
			return clientEnv(t, closed.URL, newAPIClock()), nil
		}, "connection refused"},
		{"no client", func(t *testing.T) (*Env, func()) { return &Env{}, nil }, "no client"},
		{"server error at gather", func(t *testing.T) (*Env, func()) {
			ms := &metricsServer{texts: []string{good}}
			srv := httptest.NewServer(ms)
			t.Cleanup(srv.Close)
			return clientEnv(t, srv.URL, newAPIClock()), func() {
				ms.mu.Lock()
				ms.status = http.StatusServiceUnavailable
				ms.mu.Unlock()
			}
		}, "at gather: scraping the apiserver's /metrics"},
		{"no calls in the run", func(t *testing.T) (*Env, func()) {
			srv := httptest.NewServer(&metricsServer{texts: []string{good}})
			t.Cleanup(srv.Close)
			return clientEnv(t, srv.URL, newAPIClock()), func() {}
		}, "no API call the SLO covers was recorded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, breakIt := tc.env(t)
			a := quiet(false)
			ctx := context.Background()
			_, err := a.Execute(ctx, env, Params{"action": "start"})
			if breakIt != nil {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				breakIt()
				_, err = a.Execute(ctx, env, Params{"action": "gather"})
			}
			var nm *NotMeasuredError
			if !errors.As(err, &nm) || !strings.Contains(nm.Reason, tc.want) {
				t.Fatalf("err %v, want not measured saying %q", err, tc.want)
			}
		})
	}

	t.Run("gather without start", func(t *testing.T) {
		_, err := quiet(false).Execute(context.Background(), &Env{}, Params{"action": "gather"})
		var nm *NotMeasuredError
		if err == nil || errors.As(err, &nm) {
			t.Fatalf("err %v, want a failure", err)
		}
	})
}

func TestAPIResponsivenessPromQL(t *testing.T) {
	getPods := map[string]string{"verb": "GET", "resource": "pods", "subresource": "", "scope": "resource"}
	listNodes := map[string]string{"verb": "LIST", "resource": "nodes", "subresource": "", "scope": "cluster"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	// answer picks the answer by the query's shape. The server has no
	// SLI metric (a 1.25 cluster), so the SLO one is used.
	answer := func(q string) []promAnswer {
		if strings.Contains(q, sli) {
			return nil
		}
		switch {
		case strings.HasPrefix(q, "sum by (verb, resource, subresource, scope) ("):
			return []promAnswer{{getPods, "100"}, {listNodes, "10"}}
		case strings.HasPrefix(q, "histogram_quantile(0.5,"):
			return []promAnswer{{getPods, "0.05"}, {listNodes, "20"}}
		case strings.HasPrefix(q, "histogram_quantile(0.9,"):
			return []promAnswer{{getPods, "0.1"}, {listNodes, "25"}}
		case strings.HasPrefix(q, "histogram_quantile(0.99,"):
			return []promAnswer{{getPods, "0.5"}, {listNodes, "29"}}
		case strings.HasPrefix(q, "max_over_time("):
			return []promAnswer{{getPods, "1.5"}, {listNodes, "29.5"}}
		case strings.HasPrefix(q, "sum by (verb, resource, subresource, scope, le) ("):
			return []promAnswer{
				{with(getPods, "le", "0.1"), "90"}, {with(getPods, "le", "1"), "98"}, {with(getPods, "le", "+Inf"), "100"},
				{with(listNodes, "le", "30"), "10"}, {with(listNodes, "le", "+Inf"), "10"},
			}
		}
		return nil
	}
	prom := newFakePrometheus(t, answer)

	clock := newAPIClock()
	env := &Env{PrometheusURL: prom.URL, Clock: clock}
	a := newAPIResponsiveness(false)
	ctx := context.Background()
	if _, err := a.Execute(ctx, env, Params{"action": "start"}); err != nil {
		t.Fatal(err)
	}
	clock.Step(20 * time.Minute)
	sums, err := a.Execute(ctx, env, Params{"action": "gather"})
	var v *ViolationError
	want := []string{"GET pods scope=resource: p99 (worst 5-min window) 1.5s > 1s"}
	if !errors.As(err, &v) || !reflect.DeepEqual(v.Items, want) {
		t.Fatalf("gather: %v, want %q", err, want)
	}
	// The worst is GET pods, 1.5 s of 1 s, though LIST nodes is slower.
	if h := sums[0].Headline; h["worst p99 ms"] != 1500 || h["calls"] != 110 || h["slow calls"] != 2 || sums[0].Thresholds["worst p99 ms"] != 1000 {
		t.Fatalf("headline %v thresholds %v", h, sums[0].Thresholds)
	}
	items := sums[0].PerfData.DataItems
	if len(items) != 2 {
		t.Fatalf("items %+v", items)
	}
	// GET pods: slow over 1 s = 100 - 98; LIST nodes: over 30 s = 10 - 10.
	// LIST nodes first, by p99 as clusterloader2 sorts.
	items[0], items[1] = items[1], items[0]
	if d, l := items[0].Data, items[0].Labels; d["Perc50"] != 50 || d["Perc90"] != 100 || d["Perc99"] != 1500 ||
		l["Verb"] != "GET" || l["Count"] != "100" || l["SlowCount"] != "2" {
		t.Fatalf("GET pods %+v", items[0])
	}
	if d, l := items[1].Data, items[1].Labels; d["Perc99"] != 29500 || l["Count"] != "10" || l["SlowCount"] != "0" {
		t.Fatalf("LIST nodes %+v", items[1])
	}

	all := strings.Join(prom.queries(), "\n")
	for _, frag := range []string{
		"increase(apiserver_request_sli_duration_seconds_count{", // tried first
		"increase(apiserver_request_slo_duration_seconds_count{", // then the one there is
		"[1200s]", // the run
		"rate(apiserver_request_slo_duration_seconds_bucket{", // windows
		"[300s])",                         // of 5 minutes
		"[1200s:30s])",                    // over the run, every 30 s
		`verb!~"WATCH|WATCHLIST|CONNECT"`, // exclusions
		`subresource!~"log|exec|portforward|attach|proxy",resource!~"events"`,
		`verb!~"GET|LIST",group=~"|apps|batch|autoscaling|policy|extensions|.*\\.k8s\\.io"`,
	} {
		if !strings.Contains(all, frag) {
			t.Errorf("no query has %s; queries:\n%s", frag, all)
		}
	}
	if strings.Contains(all, "apiserver_request_duration_seconds") {
		t.Errorf("the oldest metric was queried though a newer one had data")
	}

	t.Run("unreachable", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		env := &Env{PrometheusURL: closed.URL, Clock: clock}
		a := newAPIResponsiveness(true)
		if _, err := a.Execute(ctx, env, Params{"action": "start"}); err != nil {
			t.Fatal(err)
		}
		clock.Step(time.Minute)
		_, err := a.Execute(ctx, env, Params{"action": "gather"})
		var nm *NotMeasuredError
		if !errors.As(err, &nm) || !strings.Contains(nm.Reason, "querying Prometheus") {
			t.Fatalf("err %v, want not measured", err)
		}
	})

	t.Run("registered", func(t *testing.T) {
		for _, m := range []string{"APIResponsivenessPrometheus", "APIResponsivenessPrometheusSimple"} {
			if !Known()[m] {
				t.Errorf("%s is not registered", m)
			}
		}
	})
}
