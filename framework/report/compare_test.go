package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/golden"
)

func compareFixture() (a, b *Run) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	run := func(psl, throughput, apiserverMiB, restarts float64, started time.Time, version string) *Run {
		return &Run{Version: SummaryVersion, Config: "density", Started: started, Verdict: RunPass,
			Cluster: Cluster{Version: version, Nodes: 100},
			Measurements: []Measurement{
				{Name: "PodStartupLatency_PodStartupLatency", Headline: map[string]float64{"pod_startup p99 ms": psl, "pods": 3000},
					Thresholds: map[string]float64{"pod_startup p99 ms": 5000}},
				{Name: "SchedulingThroughput", Headline: map[string]float64{"max pods/s": throughput}},
				{Name: "ResourceUsageSummary", Headline: map[string]float64{"kube-apiserver memory p99 MiB": apiserverMiB}},
				{Name: "ContainerRestarts", Headline: map[string]float64{"restarts": restarts}},
				{Name: "OnlyInA", Headline: map[string]float64{"x": 1}},
			}}
	}
	a, b = run(2000, 100, 1000, 0, at, "v1.37.2"), run(2400, 80, 1050, 2, at.Add(24*time.Hour), "v1.38.0")
	b.Measurements = b.Measurements[:len(b.Measurements)-1] // OnlyInA
	return a, b
}

func TestCompare(t *testing.T) {
	a, b := compareFixture()
	for _, tc := range []struct {
		name      string
		opts      CompareOptions
		regressed []string
	}{
		{"default gates on numbers with a threshold", CompareOptions{TolerancePercent: 10}, []string{"PodStartupLatency_PodStartupLatency/pod_startup p99 ms"}},
		{"a wide tolerance lets 20 % pass", CompareOptions{TolerancePercent: 25}, nil},
		{"throughput is worse lower", CompareOptions{Measures: []string{"SchedulingThroughput"}, TolerancePercent: 10}, []string{"SchedulingThroughput/max pods/s"}},
		{"memory 5 % up is within 10 %", CompareOptions{Measures: []string{"ResourceUsageSummary:kube-apiserver memory p99 MiB"}, TolerancePercent: 10}, nil},
		{"from zero is infinitely worse", CompareOptions{Measures: []string{"ContainerRestarts:restarts"}, TolerancePercent: 1000}, []string{"ContainerRestarts/restarts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range Regressions(Compare(a, b, tc.opts)) {
				got = append(got, d.Measurement+"/"+d.Key)
			}
			if strings.Join(got, ",") != strings.Join(tc.regressed, ",") {
				t.Fatalf("regressed %v, want %v", got, tc.regressed)
			}
		})
	}
	deltas := Compare(a, b, CompareOptions{TolerancePercent: 10})
	if len(deltas) != 5 { // PodStartupLatency's two numbers and one each; OnlyInA has no partner
		t.Fatalf("%d deltas: %+v", len(deltas), deltas)
	}
	if d := deltas[0]; d.Key != "pod_startup p99 ms" || math.Abs(d.Change-20) > 1e-9 || !d.Worse {
		t.Fatalf("first delta %+v", d)
	}
	var text bytes.Buffer
	if err := WriteCompareText(&text, a, b, deltas); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare.golden.txt", text.Bytes())
	var page bytes.Buffer
	if err := WriteCompareHTML(&page, a, b, deltas); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<tr class="regressed"><td>PodStartupLatency_PodStartupLatency</td>`) {
		t.Errorf("the regressed row is not marked:\n%s", page.String())
	}
}

// TestCompareInconclusive: a run that measured nothing of an SLO compares
// without a crash; its header says it is inconclusive and why, and the
// numbers it lacks are not compared.
func TestCompareInconclusive(t *testing.T) {
	a, _ := compareFixture()
	b := inconclusiveFixture()
	deltas := Compare(a, b, CompareOptions{TolerancePercent: 10})
	if len(deltas) != 0 {
		t.Fatalf("deltas %+v, want none: b measured nothing", deltas)
	}
	var text, page bytes.Buffer
	if err := WriteCompareText(&text, a, b, deltas); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "B: density (, 0 nodes, 2026-12-01 09:00) — verdict inconclusive (2 SLO measurements not measured: ") {
		t.Errorf("header:\n%s", text.String())
	}
	if err := WriteCompareHTML(&page, a, b, deltas); err != nil || !strings.Contains(page.String(), "verdict inconclusive") {
		t.Errorf("compare page: %v\n%s", err, page.String())
	}
}
