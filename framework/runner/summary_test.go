package runner

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/executor"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

// summaryResult is a run of one passing step and the given summaries,
// judged as Finish judges it.
func summaryResult(allow bool, summaries ...measurements.Summary) *Result {
	res := &Result{
		Result:    &executor.Result{Steps: []executor.StepResult{{Index: 0, Name: "Collecting measurements", Duration: 1200 * time.Millisecond}}},
		Summaries: summaries,
		Report: &report.Run{Config: "density", AllowNotMeasured: allow,
			Steps: []report.Step{{Index: 0, Name: "Collecting measurements", Status: report.StepOK}}},
	}
	for _, s := range summaries {
		res.Report.Measurements = append(res.Report.Measurements, report.FromSummary(s, ""))
	}
	res.Report.Judge()
	return res
}

// TestSummary: what `kscale run` prints after the steps, and whether it
// exits 0: only a pass does.
func TestSummary(t *testing.T) {
	w := measurements.TimeRange{Start: satT0, End: satT0.Add(5 * time.Minute)}
	psl := measurements.Summary{Method: "PodStartupLatency", Identifier: "PodStartupLatency", Verdict: measurements.Pass, SLO: true}
	unscheduled := measurements.Summary{Method: "PodStartupLatency", Identifier: "PodStartupLatency", Verdict: measurements.NotMeasured, SLO: true,
		Reason: "20 pods matched, none was running with all containers started at gather"}
	noThroughput := measurements.Summary{Method: "SchedulingThroughput", Identifier: "st", Name: "SchedulingThroughput", Verdict: measurements.NotMeasured, SLO: true,
		Reason: "no scheduled pods matched"}
	etcd := measurements.Summary{Method: "EtcdMetrics", Identifier: "e", Name: "EtcdMetrics", Verdict: measurements.NotMeasured,
		Reason: "etcd's metrics endpoint is not known"}
	saturated := measurements.Summary{Method: "APIResponsivenessPrometheus", Identifier: "api", Name: "APIResponsivenessPrometheus",
		Verdict: measurements.Violated, SLO: true, Window: &w,
		Violations:    []string{"PATCH nodes/status scope=resource: p99 (worst 5-min window) 1.42s > 1s"},
		HostSaturated: saturationNote(0.98, 2, w)}
	for _, tc := range []struct {
		name      string
		allow     bool
		summaries []measurements.Summary
		wantOK    bool
		want      []string
		wantNot   []string
	}{
		{name: "every SLO measured and held", summaries: []measurements.Summary{psl, etcd}, wantOK: true,
			want: []string{"verdict: PASS\n", "EtcdMetrics                                        NOT MEASURED: etcd's metrics endpoint"}},
		{name: "SLOs not measured: inconclusive", summaries: []measurements.Summary{unscheduled, noThroughput, etcd},
			want: []string{
				"verdict: INCONCLUSIVE: 2 SLO measurements not measured: PodStartupLatency_PodStartupLatency (20 pods matched, none was running with all containers started at gather); SchedulingThroughput (no scheduled pods matched)\n",
				"    an SLO left unmeasured makes the run inconclusive; --allow-not-measured, or failIfNotMeasured: false on the entry, accepts that\n",
			},
			wantNot: []string{"EtcdMetrics (", "verdict: PASS"}},
		{name: "SLOs not measured, allowed", allow: true, summaries: []measurements.Summary{unscheduled, noThroughput}, wantOK: true,
			want: []string{"verdict: PASS\n", "    not measured, accepted by --allow-not-measured: PodStartupLatency_PodStartupLatency, SchedulingThroughput\n"}},
		{name: "a violation on a saturated host", summaries: []measurements.Summary{saturated, unscheduled},
			want: []string{
				"APIResponsivenessPrometheus                        VIOLATED\n    PATCH nodes/status scope=resource: p99 (worst 5-min window) 1.42s > 1s\n" +
					"    host saturated: 98% of 2 cores busy over the violating window 12:00:00–12:05:00\n",
				"verdict: VIOLATED\n",
			},
			wantNot: []string{"inconclusive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			ok := Summary(summaryResult(tc.allow, tc.summaries...), &out)
			if ok != tc.wantOK {
				t.Errorf("Summary returned %v, want %v", ok, tc.wantOK)
			}
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			for _, bad := range tc.wantNot {
				if strings.Contains(out.String(), bad) {
					t.Errorf("output has %q:\n%s", bad, out.String())
				}
			}
		})
	}
}

// TestReportsOutliveABadSummary: a summary whose file cannot be written
// leaves the other files, summary.json first, written, and names itself
// in the error.
func TestReportsOutliveABadSummary(t *testing.T) {
	dir := t.TempDir()
	bad := measurements.Summary{Method: "GenericPrometheusQuery", Identifier: "q", Name: "GenericPrometheusQuery Lag", Verdict: measurements.Pass,
		Output: map[string]any{"unencodable": make(chan int)}}
	good := measurements.Summary{Method: "Timer", Identifier: "t", Name: "Timer", Verdict: measurements.Pass,
		PerfData: &metrics.PerfData{Version: "v1", DataItems: []metrics.DataItem{{Data: map[string]float64{"phase": 1}, Unit: "s"}}}}
	res := summaryResult(false, bad, good)
	files, err := writeReports(dir, res.Report, res.Summaries, satT0)
	if err == nil || !strings.Contains(err.Error(), "GenericPrometheusQuery Lag") {
		t.Fatalf("err %v, want one naming the bad summary", err)
	}
	for _, want := range []string{"Timer_density_", report.SummaryFile, report.JUnitFile, report.HTMLFile} {
		found := false
		for _, f := range files {
			found = found || strings.Contains(filepath.Base(f), want)
		}
		if !found {
			t.Errorf("%s not written (written: %v)", want, files)
		}
	}
}
