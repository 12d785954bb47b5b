package measurements

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kscale/kscale/measurements/metrics"
)

// counting records how often one instance was called.
type counting struct{ calls int }

func (c *counting) Execute(context.Context, *Env, Params) ([]Summary, error) {
	c.calls++
	return nil, nil
}

func TestManagerKeepsOneInstancePerIdentifier(t *testing.T) {
	var made []*counting
	Register("TestCounting", Informational, func(string) Measurement { c := &counting{}; made = append(made, c); return c })
	m := NewManager(nil)
	ctx := context.Background()
	for _, id := range []string{"a", "a", "b"} {
		if err := m.Execute(ctx, "TestCounting", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(made) != 2 || made[0].calls != 2 || made[1].calls != 1 {
		t.Fatalf("instances %d, calls %v", len(made), made)
	}
	err := m.Execute(ctx, "NoSuchMethod", "x", nil)
	if err == nil || !strings.Contains(err.Error(), `unknown measurement method "NoSuchMethod"`) || !strings.Contains(err.Error(), "Sleep") {
		t.Fatalf("unknown method: %v", err)
	}
	if !Known()["Sleep"] || !Known()["TestCounting"] {
		t.Fatalf("known: %v", KnownList())
	}
}

func TestSleep(t *testing.T) {
	m := NewManager(nil)
	start := time.Now()
	if err := m.Execute(context.Background(), "Sleep", "s", map[string]any{"duration": "50ms"}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("Sleep returned before its duration")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Execute(ctx, "Sleep", "s", map[string]any{"duration": "1h"}); err != context.Canceled {
		t.Fatalf("cancelled Sleep: %v", err)
	}
	for _, bad := range []any{"soon", 5} {
		if err := m.Execute(context.Background(), "Sleep", "s", map[string]any{"duration": bad}); err == nil || !strings.Contains(err.Error(), "param duration") {
			t.Errorf("duration %v: %v", bad, err)
		}
	}
}

// TestKinds: every shipped method declares whether it judges an SLO; the
// SLO ones are those that can say violated.
func TestKinds(t *testing.T) {
	want := map[string]bool{
		"APIAvailability":                   true,
		"APIResponsivenessPrometheus":       true,
		"APIResponsivenessPrometheusSimple": true,
		"ContainerRestarts":                 true,
		"NodeHealthTracker":                 true,
		"PodStartupLatency":                 true,
		"ResourceUsageSummary":              true,
		"SchedulingThroughput":              true,
		"SystemPodMetrics":                  true, // with enableRestartCountCheck
		"MetricsForE2E":                     false,
		"ClusterOOMsTracker":                true,
		"EtcdMetrics":                       false,
		"JobLifecycleLatency":               false, // no threshold, as in clusterloader2
		"CPUProfile":                        false,
		"MemoryProfile":                     false,
		"BlockProfile":                      false,
		"RestartApiserver":                  false,
		"SchedulingMetrics":                 false,
		"Sleep":                             false,
		"TestMetrics":                       false, // its parts carry their own kinds
		"Timer":                             false,
		"WaitForControlledPodsRunning":      false,
		"WaitForFinishedJobs":               false,
		"WaitForGenericK8sObjects":          false,
		"WaitForNodes":                      false,
		"WaitForBoundPVCs":                  false,
		"WaitForAvailablePVs":               false,
		"WaitForRunningPods":                false,
		// The PromQL methods judge by the entry: an SLO summary when
		// enableViolations is set and a threshold given.
		"GenericPrometheusQuery":         false,
		"SchedulingThroughputPrometheus": false,
		"PrometheusSchedulingMetrics":    false,
		"SLOMeasurement":                 false, // its parts carry their own
	}
	for _, method := range KnownList() {
		if strings.HasPrefix(method, "Test") && method != "TestMetrics" {
			continue // registered by tests
		}
		slo, ok := want[method]
		if !ok {
			t.Errorf("method %s is not in this table: decide whether it judges an SLO", method)
			continue
		}
		if IsSLO(method) != slo {
			t.Errorf("%s: IsSLO %v, want %v", method, IsSLO(method), slo)
		}
	}
	if IsSLO("NoSuchMethod") {
		t.Error("an unknown method is SLO")
	}
}

// scripted is a method whose calls return what the test says.
type scripted struct {
	gather func() ([]Summary, error)
}

func (s *scripted) Execute(_ context.Context, _ *Env, p Params) ([]Summary, error) {
	if a, _ := p.String("action", ""); a == "gather" {
		return s.gather()
	}
	return nil, nil
}

var scriptedGather func() ([]Summary, error)

func init() {
	f := func(string) Measurement {
		return &scripted{gather: func() ([]Summary, error) { return scriptedGather() }}
	}
	Register("TestScriptedSLO", SLO, f)
	Register("TestScriptedInfo", Informational, f)
}

// TestManagerMarksSummaries: the Manager marks the summaries of SLO
// methods (never an empty group's), gives them the start-to-gather window
// unless the measurement set its own, and makes them Optional when the
// entry's failIfNotMeasured says false.
func TestManagerMarksSummaries(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	own := &TimeRange{Start: t0.Add(time.Minute), End: t0.Add(6 * time.Minute)}
	for _, tc := range []struct {
		name        string
		method      string
		gather      func() ([]Summary, error)
		startParams map[string]any
		params      map[string]any
		wantSLO     []bool
		wantOpt     bool
		wantWindow  *TimeRange
		wantErr     string
	}{
		{name: "SLO method not measured", method: "TestScriptedSLO",
			gather:  func() ([]Summary, error) { return nil, notMeasuredf("no pods matched") },
			wantSLO: []bool{true}, wantWindow: &TimeRange{Start: t0, End: t0.Add(10 * time.Minute)}},
		{name: "informational method", method: "TestScriptedInfo",
			gather:  func() ([]Summary, error) { return nil, notMeasuredf("unreachable") },
			wantSLO: []bool{false}, wantWindow: &TimeRange{Start: t0, End: t0.Add(10 * time.Minute)}},
		{name: "an empty group is never SLO", method: "TestScriptedSLO",
			gather: func() ([]Summary, error) {
				return []Summary{{Verdict: Pass}, {Verdict: NotMeasured, Empty: true}}, nil
			},
			wantSLO: []bool{true, false}, wantWindow: &TimeRange{Start: t0, End: t0.Add(10 * time.Minute)}},
		{name: "the measurement's own window stays", method: "TestScriptedSLO",
			gather:  func() ([]Summary, error) { return []Summary{{Window: own}}, violations([]string{"x over"}) },
			wantSLO: []bool{true}, wantWindow: own},
		{name: "failIfNotMeasured false on the start", method: "TestScriptedSLO",
			gather:      func() ([]Summary, error) { return nil, notMeasuredf("no pods matched") },
			startParams: map[string]any{FailIfNotMeasuredParam: false},
			wantSLO:     []bool{true}, wantOpt: true, wantWindow: &TimeRange{Start: t0, End: t0.Add(10 * time.Minute)}},
		{name: "failIfNotMeasured as a template's string", method: "TestScriptedSLO",
			gather:  func() ([]Summary, error) { return nil, notMeasuredf("no pods matched") },
			params:  map[string]any{FailIfNotMeasuredParam: "false"},
			wantSLO: []bool{true}, wantOpt: true, wantWindow: &TimeRange{Start: t0, End: t0.Add(10 * time.Minute)}},
		{name: "the gather's true overrides the start's false", method: "TestScriptedSLO",
			gather:      func() ([]Summary, error) { return nil, notMeasuredf("no pods matched") },
			startParams: map[string]any{FailIfNotMeasuredParam: false},
			params:      map[string]any{FailIfNotMeasuredParam: true},
			wantSLO:     []bool{true}, wantWindow: &TimeRange{Start: t0, End: t0.Add(10 * time.Minute)}},
		{name: "a bad failIfNotMeasured", method: "TestScriptedSLO",
			gather:  func() ([]Summary, error) { return nil, nil },
			params:  map[string]any{FailIfNotMeasuredParam: "sometimes"},
			wantErr: "param failIfNotMeasured: want true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scriptedGather = tc.gather
			clock := testingclock.NewFakePassiveClock(t0)
			m := NewManager(&Env{Clock: clock})
			ctx := context.Background()
			start := map[string]any{"action": "start"}
			for k, v := range tc.startParams {
				start[k] = v
			}
			if err := m.Execute(ctx, tc.method, "id", start); err != nil {
				t.Fatal(err)
			}
			clock.SetTime(t0.Add(10 * time.Minute))
			gather := map[string]any{"action": "gather"}
			for k, v := range tc.params {
				gather[k] = v
			}
			err := m.Execute(ctx, tc.method, "id", gather)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			got := m.Summaries()
			if len(got) != len(tc.wantSLO) {
				t.Fatalf("%d summaries, want %d: %+v", len(got), len(tc.wantSLO), got)
			}
			for i, s := range got {
				if s.SLO != tc.wantSLO[i] || s.Optional != tc.wantOpt {
					t.Errorf("summary %d: SLO %v optional %v, want %v %v", i, s.SLO, s.Optional, tc.wantSLO[i], tc.wantOpt)
				}
				if s.Window == nil || !s.Window.Start.Equal(tc.wantWindow.Start) || !s.Window.End.Equal(tc.wantWindow.End) {
					t.Errorf("summary %d: window %+v, want %+v", i, s.Window, tc.wantWindow)
				}
			}
			wantUnmeasured := got[0].Verdict == NotMeasured && tc.wantSLO[0] && !tc.wantOpt
			if got[0].UnmeasuredSLO() != wantUnmeasured {
				t.Errorf("UnmeasuredSLO %v, want %v", got[0].UnmeasuredSLO(), wantUnmeasured)
			}
		})
	}
}

// TestManagerSkip: a skipped unsupported method is one not-measured
// summary per identifier, counted as an SLO unless its entry accepts it.
func TestManagerSkip(t *testing.T) {
	m := NewManager(nil)
	for _, call := range []map[string]any{{"action": "start"}, {"action": "gather"}} {
		if err := m.RecordUnsupported("DnsLookupLatency", "dns", call, "unsupported"); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.RecordUnsupported("NetworkProgrammingLatency", "npl", map[string]any{"action": "gather", FailIfNotMeasuredParam: false}, "unsupported"); err != nil {
		t.Fatal(err)
	}
	got := m.Summaries()
	if len(got) != 2 {
		t.Fatalf("%d summaries, want one per identifier: %+v", len(got), got)
	}
	if s := got[0]; s.Verdict != NotMeasured || !s.SLO || s.Optional || !s.UnmeasuredSLO() {
		t.Errorf("skipped method: %+v", s)
	}
	if s := got[1]; !s.Optional || s.UnmeasuredSLO() {
		t.Errorf("skipped method its entry accepts: %+v", s)
	}
	if err := m.RecordUnsupported("X", "x", map[string]any{FailIfNotMeasuredParam: 3}, "unsupported"); err == nil {
		t.Error("no error for failIfNotMeasured: 3")
	}
}

// TestManagerDropsNonFiniteNumbers: a NaN or infinite number a method
// returns is left out of its summary, which JSON reports could not hold.
func TestManagerDropsNonFiniteNumbers(t *testing.T) {
	scriptedGather = func() ([]Summary, error) {
		return []Summary{{
			Headline:   map[string]float64{"lag p99 s": math.NaN(), "items": 2},
			Thresholds: map[string]float64{"lag p99 s": math.Inf(1)},
			PerfData: &metrics.PerfData{Version: "v1", DataItems: []metrics.DataItem{
				{Data: map[string]float64{"Perc99": math.NaN(), "Perc50": 0.2}, Labels: map[string]string{"resource": "pods"}},
			}},
		}}, nil
	}
	m := NewManager(&Env{})
	if err := m.Execute(context.Background(), "TestScriptedInfo", "id", map[string]any{"action": "gather"}); err != nil {
		t.Fatal(err)
	}
	got := m.Summaries()
	if len(got) != 1 {
		t.Fatalf("%d summaries", len(got))
	}
	s := got[0]
	want := Summary{Headline: map[string]float64{"items": 2}, Thresholds: map[string]float64{},
		PerfData: &metrics.PerfData{Version: "v1", DataItems: []metrics.DataItem{{Data: map[string]float64{"Perc50": 0.2}, Labels: map[string]string{"resource": "pods"}}}}}
	if !reflect.DeepEqual(s.Headline, want.Headline) || !reflect.DeepEqual(s.Thresholds, want.Thresholds) || !reflect.DeepEqual(s.PerfData, want.PerfData) {
		t.Fatalf("summary %+v %+v %+v, want the finite numbers only", s.Headline, s.Thresholds, s.PerfData)
	}
	if _, _, err := s.ReportFile(); err != nil {
		t.Fatalf("report file: %v", err)
	}
}
