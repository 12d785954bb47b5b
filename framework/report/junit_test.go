package report

import (
	"encoding/xml"
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
				Violations: []string{"pod_startup p99 6.1s > 5s (all pods, 20 pods)"}},
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
