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

func TestParseComponent(t *testing.T) {
	for _, tc := range []struct {
		spec, name, url, err string
	}{
		{"fleet-1=http://127.0.0.1:10269/metrics", "fleet-1", "http://127.0.0.1:10269/metrics", ""},
		{"etcd=https://127.0.0.1:2381/metrics", "etcd", "https://127.0.0.1:2381/metrics", ""},
		{"fleet-1", "", "", "want NAME=METRICS_URL"},
		{"=http://127.0.0.1/metrics", "", "", "want NAME=METRICS_URL"},
		{"fleet=127.0.0.1:10269", "", "", "want NAME=METRICS_URL"},
	} {
		c, err := ParseComponent(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--observe") {
				t.Errorf("%s: want an --observe error, got %v", tc.spec, err)
			}
			continue
		}
		if err != nil || c.Name != tc.name || c.MetricsURL != tc.url {
			t.Errorf("%s: %+v %v", tc.spec, c, err)
		}
	}
}
