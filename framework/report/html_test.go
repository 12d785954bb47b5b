package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/golden"
	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

// reportFixture is a 100-node density run cut short by Ctrl-C, with one
// summary of every verdict and every kind of data report.html draws. Its
// numbers are made with plain arithmetic so that the golden file does not
// depend on the platform's math library.
func reportFixture() *Run {
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	series := func(n int, dx float64, y func(i int) float64) []metrics.Point {
		pts := make([]metrics.Point, n)
		for i := range pts {
			pts[i] = metrics.Point{X: float64(i) * dx, Y: y(i)}
		}
		return pts
	}
	ramp := func(i int) float64 { return float64(min(100, i*i/4)) }
	cdf := series(200, 0, func(i int) float64 { return float64(i+1) / 200 })
	for i := range cdf {
		f := float64(i) / 199
		cdf[i].X = 900 + 1400*f + 2600*f*f*f*f*f*f
	}
	wave := func(base, amp float64, period int) func(int) float64 {
		return func(i int) float64 {
			k := i % period
			if k > period/2 {
				k = period - k
			}
			return base + amp*float64(k)/float64(period/2)
		}
	}
	transitions := func(vals ...[3]float64) []metrics.DataItem {
		names := []string{"create_to_schedule", "schedule_to_run", "run_to_watch", "schedule_to_watch", "create_to_run", "pod_startup"}
		var out []metrics.DataItem
		for i, v := range vals {
			out = append(out, metrics.DataItem{Unit: "ms", Labels: map[string]string{"Metric": names[i]},
				Data: map[string]float64{"Perc50": v[0], "Perc90": v[1], "Perc99": v[2]}})
		}
		return out
	}
	call := func(verb, resource, sub, scope string, count, slow int, p50, p90, p99 float64) metrics.DataItem {
		return metrics.DataItem{Unit: "ms",
			Data: map[string]float64{"Perc50": p50, "Perc90": p90, "Perc99": p99},
			Labels: map[string]string{"Verb": verb, "Resource": resource, "Subresource": sub, "Scope": scope,
				"Count": strconv.Itoa(count), "SlowCount": strconv.Itoa(slow)}}
	}
	usage := map[string][]metrics.Point{}
	for i, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		usage["cpu "+c] = series(120, 5, wave(0.1+0.4*float64(3-i), 0.3, 24-4*i))
		usage["memory "+c] = series(120, 5, func(j int) float64 { return float64(120+350*(3-i)) + float64(j*(4-i)) })
	}
	return &Run{
		Version: SummaryVersion, Config: "density", ConfigFile: "configs/density/config.yaml",
		Parameters: map[string]any{"Nodes": 100, "CL2_ENABLE_VIOLATIONS_FOR_API_CALL_PROMETHEUS": true, "PODS_PER_NODE": 30},
		Cluster: Cluster{Version: "v1.37.2", Nodes: 100, Provider: "local", Server: "https://127.0.0.1:6443",
			Hollow:     &Hollow{Kind: "fleet", Nodes: 100, Processes: 2, RSSBytes: 612 << 20, CPUCores: 0.35},
			NodesReady: series(25, 2, ramp), ProvisionSeconds: 52.5},
		Started: started, Finished: started.Add(14 * time.Minute), DurationSeconds: 840,
		Verdict: RunViolated, Incomplete: true,
		Steps: []Step{
			{Index: 0, Name: "Starting measurements", Status: StepOK, DurationSeconds: 0.412},
			{Index: 1, Name: "Creating saturation pods", Status: StepOK, DurationSeconds: 185.25},
			{Index: 2, Name: "Waiting for saturation pods", Status: StepFailed, DurationSeconds: 600,
				Errors: []string{"WaitForControlledPodsRunning: timed out after 10m0s: 2990 of 3000 pods running"}},
			{Index: 3, Name: "Collecting measurements", Status: StepOK, DurationSeconds: 31.7},
			{Index: 4, Name: "Deleting saturation pods", Status: StepSkipped},
		},
		Measurements: []Measurement{
			{Method: "PodStartupLatency", Identifier: "PodStartupLatency", Name: "PodStartupLatency_PodStartupLatency",
				Verdict:    measurements.Pass,
				Headline:   map[string]float64{"pods": 2990, "pods not running": 10, "pod_startup p50 ms": 1630, "pod_startup p90 ms": 2710, "pod_startup p99 ms": 4380},
				Thresholds: map[string]float64{"pod_startup p99 ms": 5000},
				PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: transitions(
					[3]float64{210, 480, 920}, [3]float64{1100, 1900, 3100}, [3]float64{12, 35, 80},
					[3]float64{1150, 1960, 3200}, [3]float64{1500, 2500, 4200}, [3]float64{1630, 2710, 4380})},
				Series: map[string][]metrics.Point{"pod_startup CDF": cdf}},
			{Method: "APIResponsivenessPrometheus", Identifier: "APIResponsivenessPrometheus", Name: "APIResponsivenessPrometheus",
				Verdict:       measurements.Violated,
				Violations:    []string{"PATCH nodes/status scope=resource: p99 (worst 5-min window) 1.42s > 1s"},
				HostSaturated: "host saturated: 98% of 2 cores busy over the violating window 09:04:30–09:09:30",
				Headline:      map[string]float64{"worst p99 ms": 1420, "items": 5, "calls": 48213, "slow calls": 31},
				Thresholds:    map[string]float64{"worst p99 ms": 1000},
				PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: []metrics.DataItem{
					call("LIST", "pods", "", "cluster", 120, 0, 310, 2200, 4100),
					call("PATCH", "nodes", "status", "resource", 9800, 31, 18, 240, 1420),
					call("POST", "pods", "", "namespace", 3000, 0, 9, 21, 96.5),
					call("GET", "nodes", "", "resource", 20400, 0, 2.4, 6.8, 14),
					call("PUT", "leases", "", "namespace", 14893, 0, 3.1, 7.5, 22.25),
				}},
				CrossCheck: &measurements.CrossCheck{
					Source: "Prometheus at http://127.0.0.1:9090 (apiserver_request_sli_duration_seconds)", Other: "kscale's scrapes of the apiserver (apiserver_request_sli_duration_seconds)",
					Rows: []measurements.CrossCheckRow{
						{Item: "PATCH nodes/status scope=resource", What: "p99", Unit: "ms", Value: 1420, Other: 1390, Agree: true},
						{Item: "PUT leases scope=namespace", What: "p99", Unit: "ms", Value: 22.25, Other: 48, Agree: false},
					},
					Missing: []string{"POST namespaces scope=cluster: 1 calls in kscale's scrapes of the apiserver (apiserver_request_sli_duration_seconds) only"},
				}},
			{Method: "SchedulingThroughput", Identifier: "SchedulingThroughput", Name: "SchedulingThroughput",
				Verdict:    measurements.Pass,
				Headline:   map[string]float64{"p50 pods/s": 61.5, "p90 pods/s": 88, "p99 pods/s": 95.2, "max pods/s": 97.5, "scheduled pods": 2990, "windows": 36},
				Thresholds: map[string]float64{"max pods/s": 80},
				Series:     map[string][]metrics.Point{"scheduled pods/s": series(36, 5, wave(40, 57.5, 12))}},
			{Method: "ResourceUsageSummary", Identifier: "ResourceUsageSummary", Name: "ResourceUsageSummary",
				Verdict:    measurements.Pass,
				Headline:   map[string]float64{"kube-apiserver cpu p99 cores": 1.6, "kube-apiserver memory p99 MiB": 1643, "etcd memory p99 MiB": 1411},
				Thresholds: map[string]float64{"kube-apiserver memory p99 MiB": 2048},
				Series:     usage},
			{Method: "EtcdMetrics", Identifier: "EtcdMetrics", Name: "EtcdMetrics_EtcdMetrics",
				Verdict: measurements.NotMeasured, Reason: "etcd metrics unreachable: dial tcp 127.0.0.1:2382: connect: connection refused"},
			{Method: "WaitForControlledPodsRunning", Identifier: "WaitForRunningSaturationRCs", Name: "WaitForControlledPodsRunning_WaitForRunningSaturationRCs",
				Verdict: measurements.Failed, Reason: "timed out after 10m0s: 2990 of 3000 pods running"},
		},
	}
}

func TestHTMLGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, reportFixture()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.golden.html", buf.Bytes())
}

// TestHTMLContents checks what a reader looks for first, independently of
// the golden file's layout.
func TestHTMLContents(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, reportFixture()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<div class="verdict big violated" id="run-verdict">violated</div>`,
		"interrupted: reports cover what was measured",
		`<table id="verdicts">`,
		"100 fleet nodes in 2 processes, 612 MiB RSS, 0.35 CPU cores",
		"pod_startup p99 ms: <b>4380</b> <span class=\"muted\">(≤ 5000)</span>",
		"worst p99 ms: <b class=\"over\">1420</b>",
		"max pods/s: <b>97.5</b> <span class=\"muted\">(≥ 80)</span>",
		"etcd metrics unreachable",
		`<td class="notmeasured">`,
		"p99 (worst 5-min window) ms",
		`<li>PATCH nodes/status scope=resource: p99 (worst 5-min window) 1.42s &gt; 1s</li></ul><p class="saturated">host saturated: 98% of 2 cores busy over the violating window 09:04:30–09:09:30</p>`,
		"Control-plane CPU", "Control-plane memory", "Scheduling throughput", "Nodes ready",
		">kube-controller-manager</text>",
		"1 of 2 numbers agree within 5% or one bucket",
		`<tr class="bad"><td>PUT leases scope=namespace</td><td>p99</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The violated call leads the API table although LIST pods is slower:
	// worst first means over its threshold first.
	table := page[strings.Index(page, `<table class="apicalls">`):]
	if patch, list := strings.Index(table, "<td>PATCH</td>"), strings.Index(table, "<td>LIST</td>"); patch < 0 || list < 0 || patch > list {
		t.Errorf("API calls not sorted worst first:\n%s", table[:strings.Index(table, "</table>")])
	}
	if !strings.Contains(table, `<tr class="bad"><td>PATCH</td><td>nodes</td><td>status</td><td>resource</td><td class="num">9800</td><td class="num">31</td>`) {
		t.Errorf("the violated call is not marked")
	}
	if n := strings.Count(page, `<svg class="plot"`); n != 5 {
		t.Errorf("%d plots, want 5 (CDF, throughput, nodes ready, CPU, memory)", n)
	}
}

// TestHTMLSelfContained: the report must open offline and load nothing.
func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, reportFixture()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;">`) {
		t.Errorf("no content security policy that forbids loads")
	}
	loads := regexp.MustCompile(`(?i)<script|<link|<img|<iframe|<object|<embed|\bsrc=|\bhref=|url\(|@import|xlink:`)
	if m := loads.FindAllString(page, -1); m != nil {
		t.Errorf("report.html refers to outside resources: %q", m)
	}
}

func TestHTMLEmptyRun(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, &Run{Version: SummaryVersion, Config: "empty"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<table id="verdicts">`, "No measurement reported a summary.", "No step ran.",
		"No PodStartupLatency measurement in this run.", "No API call latency was measured.",
		"No scheduling throughput was measured.", "No node readiness was recorded",
		"No control-plane CPU usage was measured.", "No control-plane memory usage was measured.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("empty report lacks %q", want)
		}
	}
	for _, bad := range []string{"<svg", "NaN", "Inf", "interrupted"} {
		if strings.Contains(page, bad) {
			t.Errorf("empty report contains %q", bad)
		}
	}
}

// TestHTMLMeasuredNothing: summaries that exist but carry no points get
// the one-line notice, not an empty frame.
func TestHTMLMeasuredNothing(t *testing.T) {
	r := &Run{Version: SummaryVersion, Config: "x", Measurements: []Measurement{
		{Method: "PodStartupLatency", Identifier: "a", Verdict: measurements.NotMeasured, Reason: "no pods matched",
			Headline: map[string]float64{"pods": 0}},
		{Method: "SchedulingThroughput", Name: "SchedulingThroughput", Verdict: measurements.Pass,
			Series: map[string][]metrics.Point{"scheduled pods/s": {}}},
		{Method: "ResourceUsageSummary", Name: "ResourceUsageSummary", Verdict: measurements.Pass,
			Series: map[string][]metrics.Point{"cpu etcd": {{X: 0, Y: 0.25}}}},
	}}
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"PodStartupLatency_a", "No pod startup latency was measured.", "No pod startup CDF",
		"No scheduling throughput was measured.", "No control-plane memory usage was measured.", "no pods matched"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// One CPU sample is still a plot: a single dot.
	if n := strings.Count(page, `<svg class="plot"`); n != 1 || !strings.Contains(page, "<circle") {
		t.Errorf("%d plots, want the CPU one with one dot", n)
	}
	if strings.Contains(page, "NaN") {
		t.Errorf("NaN in the report")
	}
}

func TestWriteHTML(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteHTML(dir, reportFixture())
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, HTMLFile) {
		t.Errorf("wrote %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte("<!DOCTYPE html>")) {
		t.Fatalf("report.html: %v %.40q", err, data)
	}
	if _, err := WriteHTML(filepath.Join(dir, "missing"), reportFixture()); err == nil {
		t.Errorf("no error writing into a missing folder")
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {3000, "3000"}, {48213, "48213"}, {1630.4, "1630"}, {97.5, "97.5"}, {22.25, "22.2"},
		{0.35, "0.35"}, {0.0012345, "0.00123"}, {-4.5, "-4.5"},
	} {
		if got := formatNumber(tc.v); got != tc.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		s    float64
		want string
	}{{0.412, "412ms"}, {31.74, "31.7s"}, {840, "14m0s"}, {185.25, "3m5s"}, {-1, "n/a"}} {
		if got := formatSeconds(tc.s); got != tc.want {
			t.Errorf("formatSeconds(%v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestHTMLViolationsNotEnforced: with enableViolations false the summary
// passes but still names the slow calls; the table must not say violated.
func TestHTMLViolationsNotEnforced(t *testing.T) {
	r := reportFixture()
	r.Measurements[1].Verdict = measurements.Pass
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	table := buf.String()[strings.Index(buf.String(), `<table class="apicalls">`):]
	table = table[:strings.Index(table, "</table>")]
	if !strings.Contains(table, "over (not enforced)") || strings.Contains(table, ">violated<") {
		t.Errorf("an unenforced slow call is shown as violated:\n%s", table)
	}
	if err := HTML(&buf, nil); err == nil {
		t.Errorf("no error for a nil run")
	}
}

// TestHTMLInconclusive: an inconclusive run's badge is amber and a banner
// names the SLO measurements that measured nothing and why; an accepted
// one says what was accepted.
func TestHTMLInconclusive(t *testing.T) {
	r := inconclusiveFixture()
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<div class="verdict big inconclusive" id="run-verdict">inconclusive</div>`,
		".big.inconclusive{background:var(--notmeasured)}",
		`<div class="banner" id="inconclusive">inconclusive: 2 SLO measurements not measured: PodStartupLatency_PodStartupLatency (20 pods matched`,
		"SchedulingThroughput (no scheduled pods matched",
		"An SLO left unmeasured makes the run inconclusive; --allow-not-measured, or failIfNotMeasured: false on the entry, accepts that.</div>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(page, `id="accepted"`) {
		t.Error("an inconclusive run says something was accepted")
	}

	// A violated run names its unmeasured SLOs too, under its own badge.
	r.Measurements = append(r.Measurements, Measurement{Method: "PodStartupLatency", Identifier: "x", Name: "PodStartupLatency_x",
		Verdict: measurements.Violated, SLO: true, Violations: []string{"pod_startup p99 6s > 5s"}})
	r.Judge()
	buf.Reset()
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page = buf.String()
	if !strings.Contains(page, `<div class="verdict big violated" id="run-verdict">violated</div>`) ||
		!strings.Contains(page, `<div class="banner" id="unmeasured">also 2 SLO measurements not measured: PodStartupLatency_PodStartupLatency (`) ||
		strings.Contains(page, `id="inconclusive"`) {
		t.Errorf("violated run with unmeasured SLOs:\n%s", page[:strings.Index(page, "<dl")])
	}
	r.Measurements = r.Measurements[:3]

	r.AllowNotMeasured = true
	r.Measurements[2].Optional = true
	r.Judge()
	buf.Reset()
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page = buf.String()
	for _, want := range []string{
		`<div class="verdict big pass" id="run-verdict">pass</div>`,
		`<div class="banner" id="accepted">not measured, accepted by --allow-not-measured: PodStartupLatency_PodStartupLatency, SchedulingThroughput</div>`,
		`<span class="verdict">not measured</span><br><span class="muted">accepted (failIfNotMeasured: false)</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("accepted run: report.html lacks %q", want)
		}
	}
	if strings.Contains(page, `id="inconclusive"`) {
		t.Error("an accepted run has the inconclusive banner")
	}
}
