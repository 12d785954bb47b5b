package metrics

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestParseText(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		wantErr  bool
		families map[string]dto.MetricType
		series   map[string]int
	}{
		{
			name: "histogram and counter",
			text: `# HELP apiserver_request_sli_duration_seconds Response latency.
# TYPE apiserver_request_sli_duration_seconds histogram
apiserver_request_sli_duration_seconds_bucket{resource="pods",verb="GET",le="1"} 3
apiserver_request_sli_duration_seconds_bucket{resource="pods",verb="GET",le="+Inf"} 4
apiserver_request_sli_duration_seconds_sum{resource="pods",verb="GET"} 2.5
apiserver_request_sli_duration_seconds_count{resource="pods",verb="GET"} 4
apiserver_request_sli_duration_seconds_bucket{resource="nodes",verb="LIST",le="1"} 1
apiserver_request_sli_duration_seconds_bucket{resource="nodes",verb="LIST",le="+Inf"} 1
apiserver_request_sli_duration_seconds_sum{resource="nodes",verb="LIST"} 0.5
apiserver_request_sli_duration_seconds_count{resource="nodes",verb="LIST"} 1
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
`,
			families: map[string]dto.MetricType{
				"apiserver_request_sli_duration_seconds": dto.MetricType_HISTOGRAM,
				"process_cpu_seconds_total":              dto.MetricType_COUNTER,
			},
			series: map[string]int{"apiserver_request_sli_duration_seconds": 2, "process_cpu_seconds_total": 1},
		},
		{name: "empty", text: "", families: map[string]dto.MetricType{}, series: map[string]int{}},
		{name: "garbage", text: "this is {not metrics\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseText([]byte(tc.text))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.families) {
				t.Fatalf("families %v, want %v", keys(got), tc.families)
			}
			for name, typ := range tc.families {
				if got[name].GetType() != typ {
					t.Errorf("%s: type %v, want %v", name, got[name].GetType(), typ)
				}
				if n := len(got[name].GetMetric()); n != tc.series[name] {
					t.Errorf("%s: %d series, want %d", name, n, tc.series[name])
				}
			}
		})
	}
}

func keys(m map[string]*dto.MetricFamily) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestLabelMap(t *testing.T) {
	fams, err := ParseText([]byte("# TYPE x gauge\nx{a=\"1\",b=\"\"} 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := LabelMap(fams["x"].GetMetric()[0])
	if len(got) != 2 || got["a"] != "1" || got["b"] != "" {
		t.Fatalf("labels %v", got)
	}
}
