package runner

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/executor"
	"github.com/kscale/kscale/measurements"
)

// TestMeasurementRunnerNotMeasured: a measurement that cannot measure is
// "not measured" (in the summaries, not a failed step) unless its entry
// sets failIfNotMeasured; a skipped unsupported method is recorded too.
func TestMeasurementRunnerNotMeasured(t *testing.T) {
	closed := httptest.NewServer(nil)
	closed.Close()
	env := &measurements.Env{Components: []measurements.Component{{Name: "etcd", MetricsURL: closed.URL}}}
	for _, tc := range []struct {
		name       string
		call       executor.MeasurementCall
		wantFailed bool
		wantReason string
	}{
		{"unsupported method skipped", executor.MeasurementCall{Method: "DnsLookupLatency", Identifier: "dns"}, false, "not supported by kscale"},
		{"unreachable etcd", executor.MeasurementCall{Method: "EtcdMetrics", Identifier: "etcd", Params: map[string]any{"action": "gather"}}, false, "etcd"},
		{"unreachable etcd, required", executor.MeasurementCall{Method: "EtcdMetrics", Identifier: "etcd", Params: map[string]any{"action": "gather", "failIfNotMeasured": true}}, true, "etcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mgr := measurements.NewManager(env)
			r := &measurementRunner{manager: mgr, unsupported: map[string]bool{"DnsLookupLatency": true}}
			if tc.call.Method == "EtcdMetrics" {
				// gather needs a start first
				start := tc.call
				start.Params = map[string]any{"action": "start"}
				_ = r.Run(context.Background(), start)
			}
			err := r.Run(context.Background(), tc.call)
			var nm *executor.NotMeasuredError
			switch {
			case tc.wantFailed && (err == nil || errors.As(err, &nm) || !strings.Contains(err.Error(), "failIfNotMeasured")):
				t.Fatalf("want a failure naming failIfNotMeasured, got %v", err)
			case !tc.wantFailed && !errors.As(err, &nm):
				t.Fatalf("want not measured, got %v", err)
			}
			var found bool
			for _, s := range mgr.Summaries() {
				if s.Identifier == tc.call.Identifier && s.Verdict == measurements.NotMeasured && strings.Contains(s.Reason, tc.wantReason) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no not-measured summary mentioning %q: %+v", tc.wantReason, mgr.Summaries())
			}
		})
	}
}
