package report

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/golden"
	"github.com/kscale/kscale/measurements"
)

// junitFixture is a run with a passing, a failed and a skipped step, and a
// passing, a violated, a failed and a not-measured measurement.
func junitFixture() *Run {
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return &Run{
		Version: SummaryVersion, Config: "density", Started: start, Finished: start.Add(95 * time.Second), DurationSeconds: 95,
		Steps: []Step{
			{Index: 0, Name: "Starting measurements", Status: StepOK, DurationSeconds: 0.2},
			{Index: 1, Name: "Collecting measurements", Status: StepFailed, DurationSeconds: 1.5,
				Errors: []string{"PodStartupLatency (PodStartupLatency): SLO violated by 1 item(s): pod_startup p99 6.1s > 5s (all pods, 20 pods)"}},
			{Index: 2, Name: "Deleting pods", Status: StepSkipped},
		},
		Measurements: []Measurement{
			{Method: "SchedulingThroughput", Identifier: "st", Name: "SchedulingThroughput", Verdict: measurements.Pass},
			{Method: "PodStartupLatency", Identifier: "PodStartupLatency", Name: "PodStartupLatency_PodStartupLatency", Verdict: measurements.Violated,
				Violations:    []string{"pod_startup p99 6.1s > 5s (all pods, 20 pods)"},
				HostSaturated: "host saturated: 98% of 2 cores busy over the violating window 09:00:10–09:01:30"},
			{Method: "WaitForControlledPodsRunning", Identifier: "w", Name: "WaitForControlledPodsRunning_w", Verdict: measurements.Failed,
				Reason: "1/2 Deployments not running after 3m"},
			{Method: "EtcdMetrics", Identifier: "e", Name: "EtcdMetrics", Verdict: measurements.NotMeasured,
				Reason: "etcd's metrics endpoint is not known to this run"},
		},
	}
}

func TestJUnit(t *testing.T) {
	data, err := JUnit(junitFixture())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit.golden.xml", data)
	var parsed junitSuites
	if err := xml.Unmarshal(data, &parsed); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	s := parsed.Suites[0]
	// 3 steps + 4 measurements; failures: the failed step, the violated
	// and the failed measurement; skipped: the step not run and the
	// measurement not measured.
	if s.Tests != 7 || s.Failures != 3 || s.Skipped != 2 || len(s.Cases) != s.Tests {
		t.Fatalf("counts: tests %d failures %d skipped %d cases %d", s.Tests, s.Failures, s.Skipped, len(s.Cases))
	}
	psl := s.Cases[4]
	if psl.Name != "density: [measurement] PodStartupLatency_PodStartupLatency" || psl.Failure == nil ||
		psl.Failure.Message != "PodStartupLatency_PodStartupLatency violated by 1 item(s): pod_startup p99 6.1s > 5s (all pods, 20 pods)" {
		t.Errorf("violated measurement case %+v", psl)
	}
	// The saturated host is said beside the violation, in the failure's
	// text.
	if want := "pod_startup p99 6.1s > 5s (all pods, 20 pods)\nhost saturated: 98% of 2 cores busy"; psl.Failure == nil || !strings.HasPrefix(psl.Failure.Text, want) {
		t.Errorf("violated measurement text %q, want it to start %q", psl.Failure.Text, want)
	}
}

// inconclusiveFixture is a run whose steps all passed while its two SLO
// measurements measured nothing: 20 pods that could never be scheduled.
func inconclusiveFixture() *Run {
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := &Run{
		Version: SummaryVersion, Config: "density", Started: start, Finished: start.Add(40 * time.Second), DurationSeconds: 40,
		Steps: []Step{
			{Index: 0, Name: "Starting measurements", Status: StepOK, DurationSeconds: 0.2},
			{Index: 1, Name: "Creating pods", Status: StepOK, DurationSeconds: 1.1},
			{Index: 2, Name: "Collecting measurements", Status: StepOK, DurationSeconds: 0.4},
		},
		Measurements: []Measurement{
			{Method: "PodStartupLatency", Identifier: "PodStartupLatency", Name: "PodStartupLatency_PodStartupLatency", Verdict: measurements.NotMeasured,
				SLO: true, Reason: `20 pods matched namespace=(all) labelSelector="group=latency", none was running with all containers started at gather`},
			{Method: "SchedulingThroughput", Identifier: "SchedulingThroughput", Name: "SchedulingThroughput", Verdict: measurements.NotMeasured,
				SLO: true, Reason: `no scheduled pods matched namespace=(all) labelSelector="group=latency"`},
			{Method: "EtcdMetrics", Identifier: "e", Name: "EtcdMetrics", Verdict: measurements.NotMeasured,
				Reason: "etcd's metrics endpoint is not known to this run"},
		},
	}
	r.Judge()
	return r
}

func TestJUnitInconclusive(t *testing.T) {
	r := inconclusiveFixture()
	if r.Verdict != RunInconclusive {
		t.Fatalf("verdict %s, want inconclusive", r.Verdict)
	}
	data, err := JUnit(r)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit_inconclusive.golden.xml", data)
	var parsed junitSuites
	if err := xml.Unmarshal(data, &parsed); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	s := parsed.Suites[0]
	// 3 steps + 3 measurements, skipped as not measured, + the verdict,
	// the one failure.
	if s.Tests != 7 || s.Failures != 1 || s.Skipped != 3 || len(s.Cases) != s.Tests {
		t.Fatalf("counts: tests %d failures %d skipped %d cases %d", s.Tests, s.Failures, s.Skipped, len(s.Cases))
	}
	v := s.Cases[len(s.Cases)-1]
	if v.Name != "density: [verdict] inconclusive" || v.Failure == nil || v.Failure.Type != "Inconclusive" {
		t.Fatalf("verdict case %+v", v)
	}
	for _, want := range []string{"2 SLO measurements not measured", "PodStartupLatency_PodStartupLatency (20 pods matched", "SchedulingThroughput (no scheduled pods"} {
		if !strings.Contains(v.Failure.Message, want) {
			t.Errorf("verdict message %q lacks %q", v.Failure.Message, want)
		}
	}
	// EtcdMetrics judges no SLO: it is not why the run is inconclusive.
	if strings.Contains(v.Failure.Message, "EtcdMetrics") || !strings.Contains(v.Failure.Text, "--allow-not-measured") {
		t.Errorf("verdict text %q", v.Failure.Text)
	}
	// Once accepted, no verdict case.
	r.AllowNotMeasured = true
	r.Judge()
	if data, err = JUnit(r); err != nil || strings.Contains(string(data), "[verdict]") {
		t.Fatalf("an accepted run still has a verdict case: %v\n%s", err, data)
	}
}

func TestRunJudge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Run)
		want   Verdict
	}{
		{"a violation alone is violated, not failed", func(*Run) {}, RunViolated},
		{"a step failing for another reason fails the run", func(r *Run) {
			r.Steps[1].Errors = append(r.Steps[1].Errors, "phase 0: creating pods: forbidden")
		}, RunFailed},
		{"everything in order passes", func(r *Run) {
			r.Steps[1] = Step{Index: 1, Name: "Collecting measurements", Status: StepOK}
			r.Measurements[1].Verdict, r.Measurements[1].Violations = measurements.Pass, nil
		}, RunPass},
		{"a failed cleanup fails the run", func(r *Run) {
			r.Steps[1] = Step{Index: 1, Name: "Collecting measurements", Status: StepOK}
			r.Measurements[1].Verdict, r.Measurements[1].Violations = measurements.Pass, nil
			r.CleanupError = "namespaces not deleted in 10m"
		}, RunFailed},
		{"an informational measurement not measured passes", func(r *Run) {
			r.Steps[1] = Step{Index: 1, Name: "Collecting measurements", Status: StepOK}
			r.Measurements[1].Verdict, r.Measurements[1].Violations = measurements.Pass, nil
		}, RunPass},
		{"an SLO not measured makes a passing run inconclusive", func(r *Run) {
			r.Steps[1] = Step{Index: 1, Name: "Collecting measurements", Status: StepOK}
			r.Measurements[1].Verdict, r.Measurements[1].Violations = measurements.Pass, nil
			r.Measurements[0].Verdict, r.Measurements[0].SLO = measurements.NotMeasured, true
		}, RunInconclusive},
		{"an SLO its entry marks optional does not", func(r *Run) {
			r.Steps[1] = Step{Index: 1, Name: "Collecting measurements", Status: StepOK}
			r.Measurements[1].Verdict, r.Measurements[1].Violations = measurements.Pass, nil
			r.Measurements[0].Verdict, r.Measurements[0].SLO, r.Measurements[0].Optional = measurements.NotMeasured, true, true
		}, RunPass},
		{"nor does one the run allows", func(r *Run) {
			r.Steps[1] = Step{Index: 1, Name: "Collecting measurements", Status: StepOK}
			r.Measurements[1].Verdict, r.Measurements[1].Violations = measurements.Pass, nil
			r.Measurements[0].Verdict, r.Measurements[0].SLO = measurements.NotMeasured, true
			r.AllowNotMeasured = true
		}, RunPass},
		{"violated beats inconclusive", func(r *Run) {
			r.Measurements[0].Verdict, r.Measurements[0].SLO = measurements.NotMeasured, true
		}, RunViolated},
		{"failed beats inconclusive", func(r *Run) {
			r.Measurements[0].Verdict, r.Measurements[0].SLO = measurements.NotMeasured, true
			r.Measurements[1].Verdict, r.Measurements[1].Violations = measurements.Pass, nil
			r.CleanupError = "namespaces not deleted in 10m"
		}, RunFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := junitFixture()
			tc.change(r)
			r.Judge()
			if r.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s", r.Verdict, tc.want)
			}
		})
	}
}

// A test suite's runs go into one document, a testsuite per entry named by
// its identifier, each with the cases its run alone would have.
func TestJUnitSuites(t *testing.T) {
	runs := []*Run{junitFixture(), inconclusiveFixture()}
	data, err := JUnitSuites([]string{"pod-affinity", "pod-anti-affinity"}, runs)
	if err != nil {
		t.Fatal(err)
	}
	var parsed junitSuites
	if err := xml.Unmarshal(data, &parsed); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	if len(parsed.Suites) != 2 {
		t.Fatalf("%d testsuites, want 2", len(parsed.Suites))
	}
	for i, want := range []string{"pod-affinity", "pod-anti-affinity"} {
		alone, err := JUnit(runs[i])
		if err != nil {
			t.Fatal(err)
		}
		var one junitSuites
		if err := xml.Unmarshal(alone, &one); err != nil {
			t.Fatal(err)
		}
		got := parsed.Suites[i]
		if got.Name != want || got.Tests != one.Suites[0].Tests || got.Failures != one.Suites[0].Failures || got.Skipped != one.Suites[0].Skipped {
			t.Errorf("testsuite %d: %s tests %d failures %d skipped %d; alone: tests %d failures %d skipped %d", i,
				got.Name, got.Tests, got.Failures, got.Skipped, one.Suites[0].Tests, one.Suites[0].Failures, one.Suites[0].Skipped)
		}
	}
	if _, err := JUnitSuites([]string{"one"}, runs); err == nil {
		t.Error("two runs with one name: no error")
	}
}
