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

	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/framework/report"
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
	if prom := saved.Component("prometheus"); prom == nil || !prom.Ready {
		t.Fatalf("no ready prometheus in the cluster's state: %+v", saved.Components)
	}
	base := c.PrometheusURL()
	if base == "" || base != saved.PrometheusURL() {
		t.Fatalf("the cluster's Prometheus URL %q, in its saved state %q", base, saved.PrometheusURL())
	}

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
	runFindsPrometheus(t, c)
}

// runFindsPrometheus runs testdata/prometheus with kscale run and no
// --prometheus-url: the run finds the cluster's Prometheus in its folder,
// its GenericPrometheusQuery measures and judges, and Prometheus is not
// one of the processes whose usage it reports.
func runFindsPrometheus(t *testing.T, c *ControlPlane) {
	reports := t.TempDir()
	r := runBinary(t, "kscale", nil, "run", "--testconfig", "testdata/prometheus/config.yaml",
		"--kubeconfig", c.Dir.AdminKubeconfig(), "--report-dir", reports)
	if r.code != 0 {
		t.Fatalf("kscale run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	run := readReport(t, reports)
	found := false
	for _, m := range run.Measurements {
		switch m.Method {
		case "GenericPrometheusQuery":
			found = true
			if m.Verdict != measurements.Pass || !m.SLO || m.Headline["Total"] < 20 {
				t.Errorf("GenericPrometheusQuery: %s %s, SLO %v, %v", m.Verdict, m.Reason, m.SLO, m.Headline)
			}
		case "ResourceUsageSummary":
			for _, it := range m.PerfData.DataItems {
				if it.Labels["Component"] == "prometheus" {
					t.Errorf("ResourceUsageSummary reports Prometheus' own usage: %+v", it)
				}
			}
		}
	}
	if !found || run.Verdict != report.RunPass {
		t.Errorf("run verdict %s, GenericPrometheusQuery reported: %v", run.Verdict, found)
	}
}

// promFleetNodes is the fleet's size in TestPrometheusInTheLoop.
const promFleetNodes = 10

// crossCheck measures localtest.BothWays on the fleet: every API call item
// with enough calls on both sides must agree within
// measurements.CrossCheckTolerance or one bucket, both sides must count
// the same bindings within 5 %, and the PromQL-only methods must measure.
func crossCheck(ctx context.Context, t *testing.T, c *ControlPlane, promURL string) {
	const pods, lists = 300, 60
	byName, err := localtest.BothWays{
		Client: c.Client, Config: c.Config, PrometheusURL: promURL,
		Namespace: testNamespace(t, c), NodeSelector: map[string]string{HollowLabel: "prom"},
		Pods: pods, Lists: lists, Progress: testWriter{t},
	}.Measure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range byName {
		t.Logf("%s: %s %v", name, s.Verdict, s.Headline)
	}
	api := byName["APIResponsivenessPrometheus"]
	cc := api.CrossCheck
	if cc == nil || cc.Note != "" || !strings.HasPrefix(cc.Source, "Prometheus at "+promURL) {
		t.Fatalf("API call latency: cross-check %+v", cc)
	}
	t.Log(cc.String())
	for _, r := range cc.Rows {
		t.Logf("%-45s %-17s Prometheus %9.2f ms  kscale %9.2f ms  agree %v", r.Item, r.What, r.Value, r.Other, r.Agree)
	}
	compared, calls := localtest.ComparedRows(api)
	for _, r := range compared {
		if !r.Agree {
			t.Errorf("%s %s: Prometheus %.2f ms, kscale %.2f ms: more than %g%% and one bucket apart", r.Item, r.What, r.Value, r.Other, 100*measurements.CrossCheckTolerance)
		}
	}
	for _, item := range []string{"LIST podtemplates scope=namespace", "POST pods/binding scope=resource"} {
		if calls[item] < localtest.MinCalls {
			t.Errorf("%s: %d calls in Prometheus' numbers, want at least %d", item, calls[item], localtest.MinCalls)
		}
	}
	if len(compared) < 8 {
		t.Errorf("only %d numbers of items with %d calls or more to compare", len(compared), localtest.MinCalls)
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
	// increase() extrapolates the burst to the span's ends, so it counts
	// more than the pods bound, never fewer.
	if g := byName["GenericPrometheusQuery bindings"]; g.Verdict != measurements.Pass || !g.SLO || g.Headline["Bindings"] < 0.95*pods {
		t.Errorf("GenericPrometheusQuery: %s %s %v", g.Verdict, g.Reason, g.Headline)
	}
}

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
