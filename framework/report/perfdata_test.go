package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

func TestWriteSummaries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	at := time.Date(2026, 12, 1, 8, 30, 5, 0, time.FixedZone("CET", 3600))
	pd := &metrics.PerfData{Version: "v1", DataItems: []metrics.DataItem{{
		Data: map[string]float64{"Perc50": 1, "Perc90": 2, "Perc99": 3}, Unit: "ms", Labels: map[string]string{"Metric": "pod_startup"},
	}}}
	written, err := WriteSummaries(dir, "density", at, []measurements.Summary{
		{Method: "PodStartupLatency", Identifier: "PodStartupLatency", PerfData: pd,
			Files: map[string][]byte{"PodStartupLatency_slowest_pods.json": []byte("[]")}},
		{Method: "APIResponsivenessPrometheus", Identifier: "x", Name: "APIResponsivenessPrometheus_simple", PerfData: pd},
		{Method: "DnsLookupLatency", Identifier: "dns", Verdict: measurements.NotMeasured},
		// Spaces stay, as clusterloader2 writes them; a slash does not.
		{Method: "GenericPrometheusQuery", Identifier: "q", Name: "GenericPrometheusQuery Pods/s", PerfData: pd},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"PodStartupLatency_PodStartupLatency_density_2026-12-01T07-30-05Z.json",
		"PodStartupLatency_slowest_pods.json",
		"APIResponsivenessPrometheus_simple_density_2026-12-01T07-30-05Z.json",
		"GenericPrometheusQuery Pods_s_density_2026-12-01T07-30-05Z.json",
	}
	if len(written) != len(want) {
		t.Fatalf("written %v", written)
	}
	for i, name := range want {
		if filepath.Base(written[i]) != name {
			t.Errorf("file %d: %s, want %s", i, filepath.Base(written[i]), name)
		}
	}
	data, err := os.ReadFile(written[0])
	if err != nil {
		t.Fatal(err)
	}
	var back metrics.PerfData
	if err := json.Unmarshal(data, &back); err != nil || back.Version != "v1" || back.DataItems[0].Data["Perc99"] != 3 || back.DataItems[0].Labels["Metric"] != "pod_startup" {
		t.Fatalf("PerfData round trip: %v %+v", err, back)
	}
}
