package suite

import (
	"strings"
	"testing"

	"github.com/kscale/kscale/measurements"
)

// TestSummaryFailure: which summaries fail their measurement's spec, and
// so the suite: violations, failures and SLOs left unmeasured unless
// accepted.
func TestSummaryFailure(t *testing.T) {
	unmeasured := measurements.Summary{Method: "SchedulingThroughput", Identifier: "st", Name: "SchedulingThroughput",
		Verdict: measurements.NotMeasured, SLO: true, Reason: "no scheduled pods matched"}
	optional := unmeasured
	optional.Optional = true
	informational := measurements.Summary{Method: "EtcdMetrics", Identifier: "e", Verdict: measurements.NotMeasured, Reason: "unreachable"}
	for _, tc := range []struct {
		name  string
		s     measurements.Summary
		allow bool
		want  string // "" passes
	}{
		{"a pass", measurements.Summary{Method: "PodStartupLatency", Identifier: "p", Verdict: measurements.Pass, SLO: true}, false, ""},
		{"a violation on a saturated host", measurements.Summary{Method: "PodStartupLatency", Identifier: "p", Verdict: measurements.Violated,
			Violations: []string{"p99 6s > 5s"}, HostSaturated: "host saturated: 99% of 2 cores busy over the violating window 12:00:00–12:05:00"}, false,
			"PodStartupLatency_p violated: p99 6s > 5s (host saturated: 99% of 2 cores busy"},
		{"a failure", measurements.Summary{Method: "X", Identifier: "x", Verdict: measurements.Failed, Reason: "boom"}, false, "X_x failed: boom"},
		{"an SLO not measured", unmeasured, false, "SchedulingThroughput not measured: no scheduled pods matched; an SLO left unmeasured makes the run inconclusive"},
		{"an SLO not measured, allowed by the run", unmeasured, true, ""},
		{"an SLO not measured, accepted by its entry", optional, false, ""},
		{"an informational measurement not measured", informational, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summaryFailure(tc.s, tc.allow)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("summaryFailure = %q, want %q", got, tc.want)
			}
		})
	}
}
