package fidelity

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name          string
		kind          int
		oracle, other float64
		want          bool
	}{
		{"latency within 20 %", latencyTarget, 1000, 1190, true},
		{"latency 25 % above", latencyTarget, 1000, 1250, false},
		{"latency within 200 ms of a small oracle", latencyTarget, 100, 290, true},
		{"latency 210 ms off a small oracle", latencyTarget, 100, 310, false},
		{"faster counts too", latencyTarget, 1000, 700, false},
		{"count within 10 %", countTarget, 3, 3.25, true},
		{"count 20 % off", countTarget, 3, 3.6, false},
		{"count one call per ten pods off", countTarget, 0.2, 0.3, true},
		{"placement one pod off", placementTarget, 4, 5, true},
		{"placement two pods off", placementTarget, 4, 6, false},
		{"ready after node within 20 s", readyAfterNodeTarget, 0, 19.9, true},
		{"ready after node later", readyAfterNodeTarget, 0, 21, false},
		{"written back within the sync period", writtenBackTarget, 3, 11, true},
		{"written back late", writtenBackTarget, 3, 13, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := judge(Figure{kind: tc.kind, Oracle: tc.oracle, Other: tc.other}); got != tc.want {
				t.Errorf("judge = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	kubelet, fleet := newObservation(Kubelet), newObservation(Fleet)
	kubelet.Startup[WorkloadStream] = map[string]float64{"pod_startup p99": 800}
	fleet.Startup[WorkloadStream] = map[string]float64{"pod_startup p99": 2000}
	kubelet.PodsPerNode = map[string]int{"a": 3, "b": 3}
	fleet.PodsPerNode = map[string]int{"a": 6, "b": 0}
	kubelet.Calls[WorkloadPatched] = map[string]float64{"get pods": 1, "patch pods/status": 1}
	fleet.Calls[WorkloadPatched] = map[string]float64{"get pods": 1, "patch pods/status": 2}
	kubelet.Calls[WorkloadBurst] = map[string]float64{"patch pods/status": 2}
	fleet.Calls[WorkloadBurst] = map[string]float64{"patch pods/status": 1.5, "watch configmaps": 0.1}
	// A LIST after a refused WATCH is the authorizer race, not a
	// difference of kind; a LIST without one is.
	kubelet.Calls[WorkloadStream] = map[string]float64{"list configmaps": 0.08, "list secrets": 0.05}
	kubelet.Calls[WorkloadStream]["watch configmaps"] = 0.08
	kubelet.Refused[WorkloadStream] = map[string]float64{"watch configmaps": 0.08, "list configmaps": 0.02}
	// A failed mount after the list was refused too is the same race; one
	// without a refused list is a difference.
	kubelet.Events[WorkloadStream] = map[string]float64{"FailedMount": 0.02}
	kubelet.Events[WorkloadBurst] = map[string]float64{"FailedMount": 0.1}
	kubelet.Statuses["running"] = []string{"{\n  \"phase\": \"Running\"\n}"}
	fleet.Statuses["running"] = []string{"{\n  \"phase\": \"Pending\"\n}"}
	r := compare(kubelet, fleet)

	missed := map[string]bool{}
	for _, f := range r.Missed(false) {
		missed[f.Workload+"/"+f.Name] = true
	}
	want := map[string]bool{
		// The node's own logic decides these: they must match.
		"status-patched/calls per pod: patch pods/status": true,
		// A call one kind never makes is a difference even where counts vary.
		"burst/calls per pod: watch configmaps (made by one kind only)": true,
		"stream/calls per pod: list secrets (made by one kind only)":    true,
		"burst/events per pod: FailedMount (made by one kind only)":     true,
	}
	for k := range want {
		if !missed[k] {
			t.Errorf("%s not missed; missed: %v", k, missed)
		}
	}
	if len(missed) != len(want) {
		t.Errorf("missed %v, want only %v", missed, want)
	}
	if got := len(r.Missed(true)); got != len(want)+4 {
		t.Errorf("%d figures missed counting the varying ones, want %d (latency, busiest, idlest, burst patches)", got, len(want)+4)
	}
	if len(r.Status) != 1 || r.Status[0].Stage != "running" {
		t.Fatalf("status differences %+v", r.Status)
	}
	if s := r.String(); !strings.Contains(s, "-   \"phase\": \"Running\"") || !strings.Contains(s, "+   \"phase\": \"Pending\"") {
		t.Errorf("the report does not show the status lines that differ:\n%s", s)
	}
}

func TestMergeTakesMedians(t *testing.T) {
	fig := func(o, f float64) *Report {
		return &Report{Figures: []Figure{{Workload: "w", Name: "x ms", Oracle: o, Other: f, kind: latencyTarget}}}
	}
	m := Merge(fig(100, 900), fig(1000, 1100), fig(1200, 1150))
	if len(m.Figures) != 1 {
		t.Fatalf("figures %+v", m.Figures)
	}
	f := m.Figures[0]
	if f.Oracle != 1000 || f.Other != 1100 || !f.Met {
		t.Errorf("merged %+v, want medians 1000 and 1100, met", f)
	}
}

func TestLineDiff(t *testing.T) {
	got := lineDiff("a\nb\nc", "a\nx\nc")
	want := "      a\n    + x\n    - b\n      c\n"
	if got != want {
		t.Errorf("lineDiff =\n%s\nwant\n%s", got, want)
	}
}
