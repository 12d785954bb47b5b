package local

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/measurements"
)

// TestPrometheusInTheLoop starts a cluster with its Prometheus and a fleet.
// It waits until Prometheus scrapes every component and the fleet with
// success (the client certificate is let in by the apiserver, the
// controller-manager and the scheduler; the fleet is learnt from the
// targets file), then runs a workload measured both by kscale's own
// scrapes and by PromQL, and checks that the two agree.
func TestPrometheusInTheLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := localtest.Options()
	o.Prometheus = true
	c, err := Start(ctx, filepath.Join(t.TempDir(), "cluster"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups, not defers: the test's namespace is deleted by a cleanup,
	// before the cluster stops.
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	f, err := c.StartFleet(ctx, FleetOptions{Group: "prom", Nodes: promFleetNodes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Stop() })
	saved, err := c.Dir.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	prom := saved.Component("prometheus")
	if prom == nil || !prom.Ready {
		t.Fatalf("no ready prometheus in the cluster's state: %+v", saved.Components)
	}
	base := prom.MetricsURL[:len(prom.MetricsURL)-len("/metrics")]

	want := []string{"etcd", "hollow-nodes", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}
	var last string
	for {
		jobs, health, err := promTargets(ctx, base)
		if err == nil && slices.Equal(jobs, want) && health == "up" {
			break
		}
		last = fmt.Sprintf("jobs %v, health %s, err %v", jobs, health, err)
		select {
		case <-ctx.Done():
			t.Fatalf("Prometheus never scraped every target: %s", last)
		case <-time.After(time.Second):
		}
	}
	// What was scraped is there to query: the apiserver's requests and the
	// fleet's own nodes.
	for query, atLeast := range map[string]float64{
		`sum(apiserver_request_total{job="kube-apiserver"})`: 1,
		`sum(kscale_fleet_nodes{job="hollow-nodes"})`:        promFleetNodes,
	} {
		v, err := promQuery(ctx, base, query)
		if err != nil || v < atLeast {
			t.Errorf("%s = %v, %v; want at least %v", query, v, err, atLeast)
		}
	}
	if t.Failed() {
		return
	}
	if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=prom", promFleetNodes, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	crossCheck(ctx, t, c, base)
}

// promFleetNodes is the fleet's size in TestPrometheusInTheLoop.
const promFleetNodes = 10

// crossCheck runs a deployment of pods onto the fleet and a burst of LISTs,
// measured by APIResponsivenessPrometheus with the cluster's Prometheus
// (which scrapes the apiserver itself as well, and compares), by
// SchedulingThroughput and SchedulingThroughputPrometheus, and by the
// PromQL-only methods. Every API call item with enough calls on both sides
// must agree within measurements.CrossCheckTolerance or one bucket, and
// both sides must count the same bindings within 5 %.
//
// A warm-up deployment first makes every series the workload touches
// exist before the start: Prometheus cannot see the first calls of a
// series born between two scrapes (increase() has no earlier sample), a
// difference of construction the docs describe.
func crossCheck(ctx context.Context, t *testing.T, c *ControlPlane, promURL string) {
	ns := testNamespace(t, c)
	sel := map[string]string{HollowLabel: "prom"}
	run := func(name string, replicas int32) {
		t.Helper()
		if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, localtest.PauseDeployment(name, sel, replicas), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
			if err != nil {
				return false, nil
			}
			running := 0
			for _, p := range list.Items {
				if p.Status.Phase == v1.PodRunning {
					running++
				}
			}
			return running == int(replicas), nil
		})
		if err != nil {
			t.Fatalf("deployment %s: pods not all running: %v", name, err)
		}
	}
	run("warm-up", 20)
	const lists = 60
	listTemplates := func() {
		t.Helper()
		for range lists {
			if _, err := c.Client.CoreV1().PodTemplates(ns).List(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	listTemplates()
	// Two scrapes, so that the warm-up's series have a sample before the
	// start.
	time.Sleep(2 * promScrape)

	env := &measurements.Env{Client: c.Client, Config: c.Config, PrometheusURL: promURL, Progress: testWriter{t}}
	m := measurements.NewManager(env)
	exec := func(method, id string, params map[string]any) {
		t.Helper()
		if err := m.Execute(ctx, method, id, params); err != nil {
			t.Fatalf("%s %v: %v", method, params["action"], err)
		}
	}
	queries := []any{map[string]any{"name": "Bindings", "query": `sum(increase(apiserver_request_total{verb="POST",resource="pods",subresource="binding",code="201"}[%v]))`, "threshold": 1, "lowerBound": true}}
	for _, e := range []struct {
		method string
		params map[string]any
	}{
		{"APIResponsivenessPrometheus", map[string]any{"enableViolations": false}},
		{"SchedulingThroughput", map[string]any{"labelSelector": "app=measured"}},
		{"SchedulingThroughputPrometheus", map[string]any{}},
		{"PrometheusSchedulingMetrics", map[string]any{}},
		{"GenericPrometheusQuery", map[string]any{"metricName": "bindings", "metricVersion": "v1", "unit": "pods", "queries": queries}},
	} {
		e.params["action"] = "start"
		exec(e.method, e.method, e.params)
	}
	listTemplates()
	const pods = 300
	run("measured", pods)
	// Prometheus' last scrape must follow the last call the workload made.
	time.Sleep(2 * promScrape)
	for _, method := range []string{"SchedulingThroughput", "SchedulingThroughputPrometheus", "PrometheusSchedulingMetrics", "APIResponsivenessPrometheus"} {
		exec(method, method, map[string]any{"action": "gather", "enableViolations": false})
	}
	exec("GenericPrometheusQuery", "GenericPrometheusQuery", map[string]any{"action": "gather", "enableViolations": true})

	byName := map[string]measurements.Summary{}
	for _, s := range m.Summaries() {
		byName[s.FileName()] = s
		t.Logf("%s: %s %v", s.FileName(), s.Verdict, s.Headline)
	}
	api := byName["APIResponsivenessPrometheus"]
	cc := api.CrossCheck
	if cc == nil || cc.Note != "" || !strings.HasPrefix(cc.Source, "Prometheus at "+promURL) {
		t.Fatalf("API call latency: cross-check %+v", cc)
	}
	t.Log(cc.String())
	counts := map[string]int{}
	for _, it := range api.PerfData.DataItems {
		n, _ := strconv.Atoi(it.Labels["Count"])
		name := it.Labels["Verb"] + " " + it.Labels["Resource"]
		if it.Labels["Subresource"] != "" {
			name += "/" + it.Labels["Subresource"]
		}
		counts[name+" scope="+it.Labels["Scope"]] = n
	}
	compared := 0
	for _, r := range cc.Rows {
		t.Logf("%-45s %-17s Prometheus %9.2f ms  kscale %9.2f ms  agree %v", r.Item, r.What, r.Value, r.Other, r.Agree)
		if counts[r.Item] < promMinCalls {
			continue
		}
		compared++
		if !r.Agree {
			t.Errorf("%s %s: Prometheus %.2f ms, kscale %.2f ms: more than %g%% and one bucket apart", r.Item, r.What, r.Value, r.Other, 100*measurements.CrossCheckTolerance)
		}
	}
	for _, item := range []string{"LIST podtemplates scope=namespace", "POST pods/binding scope=resource"} {
		if counts[item] < promMinCalls {
			t.Errorf("%s: %d calls in Prometheus' numbers, want at least %d", item, counts[item], promMinCalls)
		}
	}
	if compared < 8 {
		t.Errorf("only %d numbers of items with %d calls or more to compare", compared, promMinCalls)
	}

	direct, viaProm := byName["SchedulingThroughput"], byName["SchedulingThroughputPrometheus"]
	scheduled, bindings := direct.Headline["scheduled pods"], viaProm.Headline["bindings"]
	if scheduled != pods || math.Abs(bindings-scheduled) > 0.05*scheduled {
		t.Errorf("scheduled pods: kscale %v, Prometheus' bindings %v; want %d within 5%%", scheduled, bindings, pods)
	}
	if viaProm.Verdict != measurements.Pass || viaProm.Headline["max pods/s"] <= 0 {
		t.Errorf("SchedulingThroughputPrometheus: %s %v", viaProm.Verdict, viaProm.Headline)
	}
	t.Logf("scheduling throughput max: kscale %.1f pods/s (5 s windows from the first pod), Prometheus %.1f pods/s (irate between scrapes)",
		direct.Headline["max pods/s"], viaProm.Headline["max pods/s"])
	sched := byName["PrometheusSchedulingMetrics_PrometheusSchedulingMetrics"]
	if sched.Verdict != measurements.Pass || sched.Headline["pod_scheduling_sli p99 ms"] <= 0 {
		t.Errorf("PrometheusSchedulingMetrics: %s %s %v", sched.Verdict, sched.Reason, sched.Headline)
	}
	// increase() extrapolates the burst to the span's ends: at least the
	// pods bound, and no more than the span holds scrape intervals.
	if g := byName["GenericPrometheusQuery bindings"]; g.Verdict != measurements.Pass || !g.SLO || g.Headline["Bindings"] < 0.95*pods {
		t.Errorf("GenericPrometheusQuery: %s %s %v", g.Verdict, g.Reason, g.Headline)
	}
}

// promScrape is the cluster's Prometheus' scrape interval.
var promScrape = mustDuration(controlplane.PrometheusScrapeInterval)

func mustDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

const (
	// promMinCalls is how many calls an item needs for its quantiles to
	// be compared: with fewer, one call more or less on a side moves the
	// p99 across buckets.
	promMinCalls = 50
)

// promTargets returns the jobs of Prometheus' active targets, sorted, and
// "up" when every one was scraped with success, else the first other
// health seen.
func promTargets(ctx context.Context, base string) ([]string, string, error) {
	var v struct {
		Data struct {
			ActiveTargets []struct {
				Labels    map[string]string `json:"labels"`
				Health    string            `json:"health"`
				LastError string            `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := promGet(ctx, base+"/api/v1/targets", &v); err != nil {
		return nil, "", err
	}
	health := "up"
	var jobs []string
	for _, t := range v.Data.ActiveTargets {
		if !slices.Contains(jobs, t.Labels["job"]) {
			jobs = append(jobs, t.Labels["job"])
		}
		if t.Health != "up" && health == "up" {
			health = t.Labels["job"] + " " + t.Health + ": " + t.LastError
		}
	}
	sort.Strings(jobs)
	return jobs, health, nil
}

// promQuery returns the value of an instant query with one result.
func promQuery(ctx context.Context, base, query string) (float64, error) {
	var v struct {
		Data struct {
			Result []struct {
				Value []any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := promGet(ctx, base+"/api/v1/query?query="+url.QueryEscape(query), &v); err != nil {
		return 0, err
	}
	if len(v.Data.Result) != 1 || len(v.Data.Result[0].Value) != 2 {
		return 0, fmt.Errorf("%s: %d results", query, len(v.Data.Result))
	}
	s, _ := v.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

func promGet(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
