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
// sets failIfNotMeasured; a skipped unsupported method is recorded too,
// counted as an SLO; failIfNotMeasured: false makes either optional.
func TestMeasurementRunnerNotMeasured(t *testing.T) {
	closed := httptest.NewServer(nil)
	closed.Close()
	env := &measurements.Env{Components: []measurements.Component{{Name: "etcd", MetricsURL: closed.URL}}}
	for _, tc := range []struct {
		name       string
		call       executor.MeasurementCall
		wantFailed bool
		wantReason string
		// wantSLO and wantOptional are the summary's marks.
		wantSLO, wantOptional bool
	}{
		{"unsupported method skipped", executor.MeasurementCall{Method: "DnsLookupLatency", Identifier: "dns"}, false, "not supported by kscale", true, false},
		{"unsupported method skipped, accepted", executor.MeasurementCall{Method: "DnsLookupLatency", Identifier: "dns", Params: map[string]any{"failIfNotMeasured": false}}, false, "not supported by kscale", true, true},
		{"unsupported method skipped, required", executor.MeasurementCall{Method: "DnsLookupLatency", Identifier: "dns", Params: map[string]any{"failIfNotMeasured": true}}, true, "not supported by kscale", true, false},
		{"unreachable etcd", executor.MeasurementCall{Method: "EtcdMetrics", Identifier: "etcd", Params: map[string]any{"action": "gather"}}, false, "etcd", false, false},
		{"unreachable etcd, required", executor.MeasurementCall{Method: "EtcdMetrics", Identifier: "etcd", Params: map[string]any{"action": "gather", "failIfNotMeasured": true}}, true, "etcd", false, false},
		{"unreachable etcd, accepted", executor.MeasurementCall{Method: "EtcdMetrics", Identifier: "etcd", Params: map[string]any{"action": "gather", "failIfNotMeasured": false}}, false, "etcd", false, true},
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
					if s.SLO != tc.wantSLO || s.Optional != tc.wantOptional {
						t.Errorf("summary SLO %v optional %v, want %v %v", s.SLO, s.Optional, tc.wantSLO, tc.wantOptional)
					}
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

// TestMeasurementRunnerBadPolicy: a failIfNotMeasured that is no boolean
// is an error naming the param, whatever the method.
func TestMeasurementRunnerBadPolicy(t *testing.T) {
	r := &measurementRunner{manager: measurements.NewManager(nil), unsupported: map[string]bool{"DnsLookupLatency": true}}
	for _, method := range []string{"DnsLookupLatency", "Sleep"} {
		err := r.Run(context.Background(), executor.MeasurementCall{Method: method, Identifier: "x",
			Params: map[string]any{"duration": "1ms", "failIfNotMeasured": "maybe"}})
		if err == nil || !strings.Contains(err.Error(), "param failIfNotMeasured: want true or false") {
			t.Errorf("%s: %v", method, err)
		}
	}
}
