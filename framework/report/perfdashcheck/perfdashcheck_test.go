package perfdashcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		parser  Parser
		body    string
		items   int
		wantErr string
	}{
		{"perfdata", PerfData, `{"version":"1.0","dataItems":[{"data":{"Perc50":1},"unit":"ms","labels":{"Metric":"pod_startup"}}]}`, 1, ""},
		{"perfdata without version", PerfData, `{"dataItems":[{"data":{"Perc50":1}}]}`, 0, "no version"},
		{"request count", RequestCount, `{"version":"v1","dataItems":[{"data":{"Perc99":3},"labels":{"Verb":"GET","Count":"12","SlowCount":"0"}}]}`, 1, ""},
		{"request count without Count", RequestCount, `{"version":"v1","dataItems":[{"data":{"Perc99":3},"labels":{"Verb":"GET"}}]}`, 0, "no 'Count' label"},
		{"resource usage", ResourceUsage, `{"50":[{"Name":"etcd","CPU":0.5,"Mem":1048576}],"99":[{"Name":"etcd","CPU":1,"Mem":2097152}]}`, 4, ""},
		{"resource usage as PerfData", ResourceUsage, `{"version":"v1","dataItems":[]}`, 0, "cannot unmarshal"},
		{"scheduling throughput", SchedulingThroughput, `{"perc50":10,"perc90":20,"perc99":30,"max":31}`, 1, ""},
		{"scheduling throughput as PerfData", SchedulingThroughput, `{"version":"v1","dataItems":[{"data":{"Perc50":10}}]}`, 0, "none of the keys perfdash reads"},
		{"scheduling latency", SchedulingLatency, `{"e2eSchedulingLatency":{"Perc50":1000000,"Perc90":2000000,"Perc99":3000000},"frameworkExtensionPointDuration":{"Filter":{"Perc50":1}}}`, 4, ""},
		{"scheduling latency as PerfData", SchedulingLatency, `{"version":"v1","dataItems":[]}`, 0, "none of the keys perfdash reads"},
		{"etcd", EtcdHistograms, `{"walFsyncDuration":[{"labels":{},"buckets":{"0.001":5,"+Inf":10}}],"maxDatabaseSize":3}`, 1, ""},
		{"etcd without +Inf", EtcdHistograms, `{"walFsyncDuration":[{"labels":{},"buckets":{"0.001":5}}]}`, 0, "no +Inf bucket"},
		{"etcd as PerfData", EtcdHistograms, `{"version":"v1","dataItems":[]}`, 0, ""},
		{"system pods", SystemPodMetrics, `{"pods":[{"name":"coredns","containers":[{"name":"coredns","restartCount":2}]}]}`, 1, ""},
		{"system pods without a list", SystemPodMetrics, `{"version":"v1"}`, 0, "no pods list"},
		{"container restarts", ContainerRestarts, `[{"Container":"c","Pod":"p","Namespace":"n","RestartCount":3}]`, 1, ""},
		{"container restarts as PerfData", ContainerRestarts, `{"version":"v1","dataItems":[]}`, 0, "cannot unmarshal"},
		{"init events", InitEventsCount, `{"APIServerMetrics":{"apiserver_init_events_total":[{"metric":{"__name__":"apiserver_init_events_total","resource":"pods"},"value":[1700000000,"42"]}]}}`, 1, ""},
		{"init events missing", InitEventsCount, `{"APIServerMetrics":{}}`, 0, "no apiserver_init_events_total"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Parse(tc.parser, []byte(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Items) != tc.items {
				t.Errorf("%d items, want %d: %+v", len(res.Items), tc.items, res.Items)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	res, err := Parse(SchedulingLatency, []byte(`{"e2eSchedulingLatency":{"Perc50":1500000,"Perc90":2000000,"Perc99":3000000}}`))
	if err != nil || res.Items[1].Labels["Operation"] != "e2eScheduling" || res.Items[1].Data["Perc50"] != 1.5 {
		t.Errorf("scheduling latency in ms: %+v %v", res.Items, err)
	}
	res, err = Parse(EtcdHistograms, []byte(`{"backendCommitDuration":[{"labels":{},"buckets":{"0.001":5,"0.002":10,"+Inf":10}}]}`))
	if err != nil || res.Items[0].Data["<= 0.001s"] != 50 || res.Items[0].Data["<= 0.002s"] != 100 {
		t.Errorf("etcd shares: %+v %v", res.Items, err)
	}
	res, err = Parse(RequestCount, []byte(`{"version":"v1","dataItems":[{"data":{"Perc99":3},"unit":"ms","labels":{"Count":"7","SlowCount":"1","Verb":"GET"}}]}`))
	if err != nil || res.Items[0].Data["RequestCount"] != 7 || len(res.Items[0].Data) != 1 || res.Items[0].Labels["Count"] != "" {
		t.Errorf("request count: %+v %v", res.Items, err)
	}
}

func TestParsers(t *testing.T) {
	for name, want := range map[string][]Parser{
		"APIResponsivenessPrometheus_simple":  {PerfData, RequestCount},
		"PodStartupLatency_PodStartupLatency": {PerfData},
		"StatefulPodStartupLatency_Create":    {PerfData},
		"SchedulingThroughput":                {SchedulingThroughput},
		"MetricsForE2E":                       {InitEventsCount},
		"JobLifecycleLatency_x":               nil,
		"Timer":                               nil,
	} {
		if got := Parsers(name); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"SchedulingThroughput_load_2026-12-06T01-00-00Z.json":                `{"perc50":1,"perc90":2,"perc99":3,"max":4}`,
		"PodStartupLatency_PodStartupLatency_load_2026-12-06T01-00-00Z.json": `{"version":"1.0","dataItems":[{"data":{"Perc50":1}}]}`,
		"Timer_load_2026-12-06T01-00-00Z.json":                               `not read by perfdash`,
		"summary.json":                                                       `{}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := CheckDir(dir, "load")
	if err != nil || len(got) != 2 || len(got["PodStartupLatency_PodStartupLatency"]) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	bad := filepath.Join(dir, "SchedulingThroughput_load_2026-12-06T02-00-00Z.json")
	if err := os.WriteFile(bad, []byte(`{"version":"v1","dataItems":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckDir(dir, "load"); err == nil || !strings.Contains(err.Error(), "T02-00-00Z.json by parseSchedulingThroughputCL") {
		t.Errorf("a PerfData SchedulingThroughput: %v", err)
	}
}
