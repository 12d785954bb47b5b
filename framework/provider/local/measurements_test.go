package local

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/framework/report/perfdashcheck"
	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

// runMeasurementsConfig runs testdata/measurements with kscale run against
// the shared cluster and its fleet, and returns the result and the report
// folder.
func runMeasurementsConfig(t *testing.T, prefix, pods, startDelay string) (result, string) {
	t.Helper()
	c, _ := sharedFleet(t)
	reports := t.TempDir()
	r := runBinary(t, "kscale", []string{"CL2_PREFIX=" + prefix, "CL2_PODS=" + pods, "CL2_START_DELAY=" + startDelay},
		"run", "--testconfig", "testdata/measurements/config.yaml",
		"--kubeconfig", c.Dir.AdminKubeconfig(), "--report-dir", reports)
	t.Logf("kscale run: exit %d\nstdout:\n%s", r.code, r.stdout)
	return r, reports
}

// perfData reads the one PerfData file of a summary of testdata/measurements
// in the report folder.
func perfData(t *testing.T, reports, summary string) *metrics.PerfData {
	t.Helper()
	return perfDataOf(t, reports, summary, "measurements-it")
}

// perfDataOf reads the one PerfData file of a summary of the named test.
func perfDataOf(t *testing.T, reports, summary, test string) *metrics.PerfData {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(reports, summary+"_"+test+"_*.json"))
	if err != nil || len(matches) != 1 {
		entries, _ := os.ReadDir(reports)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("PerfData of %s: %d files (%v) among %v", summary, len(matches), err, names)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var pd metrics.PerfData
	if err := json.Unmarshal(data, &pd); err != nil {
		t.Fatalf("%s: %v", matches[0], err)
	}
	return &pd
}

// summaryPerfData is the PerfData summary.json holds for the summary.
func summaryPerfData(t *testing.T, run *report.Run, name string) *metrics.PerfData {
	t.Helper()
	for _, m := range run.Measurements {
		if m.Name == name && m.PerfData != nil {
			return m.PerfData
		}
	}
	t.Fatalf("summary.json holds no PerfData of %s", name)
	return nil
}

// dataItem returns the item whose labels include want.
func dataItem(t *testing.T, pd *metrics.PerfData, want map[string]string) metrics.DataItem {
	t.Helper()
	for _, item := range pd.DataItems {
		ok := true
		for k, v := range want {
			ok = ok && item.Labels[k] == v
		}
		if ok {
			return item
		}
	}
	t.Fatalf("no data item labelled %v in %+v", want, pd.DataItems)
	return metrics.DataItem{}
}

// TestPodStartupLatencyWithStartDelay: pods that the fleet starts 2 s after
// admission report schedule_to_run p50 from 2 s (never before the delay)
// to 3 s (the Running status written and watched within the second after
// it, on a machine the shared 200-node fleet also loads), meet the 5 s SLO,
// and the run passes with every TestMetrics part measured on the local
// cluster.
func TestPodStartupLatencyWithStartDelay(t *testing.T) {
	r, reports := runMeasurementsConfig(t, "psl-2s", "100", "2s")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	psl := perfData(t, reports, "PodStartupLatency_PodStartupLatency")
	p50 := dataItem(t, psl, map[string]string{"Metric": "schedule_to_run"}).Data["Perc50"]
	t.Logf("schedule_to_run p50 %v ms", p50)
	if p50 < 2000 || p50 > 3000 {
		t.Errorf("schedule_to_run p50 = %v ms, want 2000–3000", p50)
	}
	if p99 := dataItem(t, psl, map[string]string{"Metric": "pod_startup"}).Data["Perc99"]; p99 < 2000 || p99 > 5000 {
		t.Errorf("pod_startup p99 = %v ms, want 2000–5000", p99)
	}
	// These three write clusterloader2's shapes for perfdash; their
	// PerfData is in summary.json.
	run := readReport(t, reports)
	st := summaryPerfData(t, run, "SchedulingThroughput")
	if max := st.DataItems[0].Data["Max"]; max <= 0 {
		t.Errorf("scheduling throughput max %v", max)
	}
	usage := summaryPerfData(t, run, "ResourceUsageSummary")
	for _, comp := range []string{"kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager"} {
		if mem := dataItem(t, usage, map[string]string{"Component": comp, "Resource": "memory"}).Data["Max"]; mem <= 0 {
			t.Errorf("%s memory %v MiB", comp, mem)
		}
	}
	etcd := summaryPerfData(t, run, "EtcdMetrics")
	if len(etcd.DataItems) == 0 {
		t.Error("EtcdMetrics has no data items")
	}
	if read, err := perfdashcheck.CheckDir(reports, "measurements-it"); err != nil || len(read["SchedulingThroughput"]) == 0 || len(read["ResourceUsageSummary"]) == 0 {
		t.Errorf("perfdash reads %d SchedulingThroughput and %d ResourceUsageSummary files: %v",
			len(read["SchedulingThroughput"]), len(read["ResourceUsageSummary"]), err)
	}
	if avail := dataItem(t, perfData(t, reports, "APIAvailability"), map[string]string{"Metric": "cluster"}).Data["AvailabilityPercentage"]; avail != 100 {
		t.Errorf("availability %v%%", avail)
	}
	for _, line := range []string{"PodStartupLatency_PodStartupLatency", "SchedulingThroughput", "ResourceUsageSummary", "EtcdMetrics"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("the run's summary does not name %s", line)
		}
	}
	if run.Verdict != report.RunPass || run.Cluster.Version != "v1.37.2" || len(run.Steps) != 4 {
		t.Errorf("summary.json: verdict %s, cluster %+v, %d steps", run.Verdict, run.Cluster, len(run.Steps))
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		// The run has no stateful pods, so their split alone is empty.
		if strings.Contains(line, "VIOLATED") || strings.Contains(line, "NOT MEASURED") && !strings.HasPrefix(line, "StatefulPodStartupLatency") {
			t.Errorf("on the local cluster: %s", line)
		}
	}
}

// TestPodStartupLatencyViolated: a 6 s start delay breaks the 5 s SLO; the
// summary says so, names the item, and the run exits 1.
func TestPodStartupLatencyViolated(t *testing.T) {
	r, reports := runMeasurementsConfig(t, "psl-6s", "20", "6s")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "PodStartupLatency_PodStartupLatency") || !strings.Contains(r.stdout, "VIOLATED") ||
		!strings.Contains(r.stdout, "pod_startup p99") {
		t.Errorf("the summary does not name the violated measurement and item")
	}
	psl := perfData(t, reports, "PodStartupLatency_PodStartupLatency")
	if p99 := dataItem(t, psl, map[string]string{"Metric": "pod_startup"}).Data["Perc99"]; p99 <= 5000 {
		t.Errorf("pod_startup p99 = %v ms, want above 5000", p99)
	}
	if run := readReport(t, reports); run.Verdict != report.RunViolated {
		t.Errorf("summary.json verdict %s, want violated", run.Verdict)
	}
	junit, err := os.ReadFile(filepath.Join(reports, report.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), `<testcase name="measurements-it: [measurement] PodStartupLatency_PodStartupLatency"`) ||
		!strings.Contains(string(junit), `type="SLOViolated"`) {
		t.Errorf("junit.xml does not name the violated measurement:\n%s", junit)
	}
}

// readReport reads summary.json and checks that junit.xml parses.
func readReport(t *testing.T, reports string) *report.Run {
	t.Helper()
	run, err := report.ReadRun(reports)
	if err != nil {
		t.Fatal(err)
	}
	junit, err := os.ReadFile(filepath.Join(reports, report.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Tests int `xml:"tests,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit, &suites); err != nil || len(suites.Suites) != 1 || suites.Suites[0].Tests != len(suites.Suites[0].Cases) ||
		suites.Suites[0].Tests != len(run.Steps)+len(run.Measurements) {
		t.Fatalf("junit.xml: %v %+v", err, suites)
	}
	return run
}

// TestAPIResponsivenessAndSchedulingThroughput measures on the shared
// cluster through the Go API: a burst of namespace-scoped LISTs of a
// resource nothing else lists shows up with exactly that count, and 2000
// pods scheduled onto the fleet give a scheduling throughput whose windows
// span first to last scheduled pod, with no trailing empty window.
func TestAPIResponsivenessAndSchedulingThroughput(t *testing.T) {
	c, _ := sharedFleet(t)
	ns := testNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	env := &measurements.Env{Client: c.Client, Config: c.Config, Progress: testWriter{t}}
	m := measurements.NewManager(env)
	start := map[string]any{"action": "start", "labelSelector": "app=throughput"}
	// Whether 2 cores keep every call within its SLO during the burst is
	// not this test's question: violations are listed, not failed.
	if err := m.Execute(ctx, "APIResponsivenessPrometheus", "api", map[string]any{"action": "start", "enableViolations": false}); err != nil {
		t.Fatal(err)
	}
	if err := m.Execute(ctx, "SchedulingThroughput", "st", start); err != nil {
		t.Fatal(err)
	}
	const lists = 57
	for range lists {
		if _, err := c.Client.CoreV1().PodTemplates(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const pods = 2000
	deploy := localtest.PauseDeployment("throughput", map[string]string{HollowLabel: "fleet"}, pods)
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0", FieldSelector: "spec.nodeName!="})
		return err == nil && len(list.Items) == pods, nil
	})
	if err != nil {
		t.Fatalf("pods not all scheduled: %v", err)
	}
	if err := m.Execute(ctx, "SchedulingThroughput", "st", map[string]any{"action": "gather"}); err != nil {
		t.Fatalf("SchedulingThroughput: %v", err)
	}
	if err := m.Execute(ctx, "APIResponsivenessPrometheus", "api", map[string]any{"action": "gather", "enableViolations": false}); err != nil {
		t.Fatalf("APIResponsivenessPrometheus: %v", err)
	}
	for _, s := range m.Summaries() {
		switch s.Method {
		case "SchedulingThroughput":
			if s.PerfData == nil || s.PerfData.DataItems[0].Data["Max"] <= 0 {
				t.Errorf("scheduling throughput %+v", s.PerfData)
			}
			var series []metrics.Point
			for _, points := range s.Series {
				series = points
			}
			if len(series) == 0 || series[0].Y <= 0 || series[len(series)-1].Y <= 0 {
				t.Errorf("throughput windows must start and end with scheduled pods: %v", series)
			}
			t.Logf("scheduling throughput %v over %d windows", s.PerfData.DataItems[0].Data, len(series))
		case "APIResponsivenessPrometheus":
			item := dataItem(t, s.PerfData, map[string]string{"Verb": "LIST", "Resource": "podtemplates", "Scope": "namespace"})
			if item.Labels["Count"] != strconv.Itoa(lists) {
				t.Errorf("LIST podtemplates count %s, want %d (item %+v)", item.Labels["Count"], lists, item)
			}
			if item.Data["Perc99"] <= 0 {
				t.Errorf("LIST podtemplates p99 %v ms", item.Data["Perc99"])
			}
		}
	}
}
