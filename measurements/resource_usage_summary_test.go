package measurements

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// processMetrics serves the process collector's two metrics; each scrape
// adds cpuStep seconds of CPU time.
func processMetrics(t *testing.T, cpuStep float64, rss float64) *httptest.Server {
	var scrapes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := scrapes.Add(1)
		fmt.Fprintf(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %g\n", float64(n)*cpuStep)
		fmt.Fprintf(w, "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %g\n", rss)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestResourceUsageSummary(t *testing.T) {
	remote := processMetrics(t, 0.5, 64<<20)
	env := &Env{Components: []Component{
		{Name: "self", PID: os.Getpid()},
		{Name: "remote", MetricsURL: remote.URL},
	}}
	constraints := filepath.Join(t.TempDir(), "constraints.yaml")
	// remote uses 0.5 s of CPU per 50 ms poll: about 10 cores, over its
	// limit of 2; its 64 MiB are within 100 MiB.
	if err := os.WriteFile(constraints, []byte("remote:\n  cpuConstraint: 2\n  memoryConstraint: 104857600\nself:\n  memoryConstraint: 1e12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewManager(env)
	ctx := context.Background()
	if err := m.Execute(ctx, "ResourceUsageSummary", "r", map[string]any{"action": "start", "interval": "50ms"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	err := m.Execute(ctx, "ResourceUsageSummary", "r", map[string]any{"action": "gather", "resourceConstraints": constraints})
	var v *ViolationError
	if !errors.As(err, &v) || len(v.Items) != 1 || !strings.HasPrefix(v.Items[0], "remote cpu p99") {
		t.Fatalf("want one violation of remote's CPU, got %v", err)
	}
	sums := m.Summaries()
	if len(sums) != 1 || sums[0].Verdict != Violated || sums[0].FileName() != "ResourceUsageSummary" {
		t.Fatalf("summaries %+v", sums)
	}
	s := sums[0]
	if got := s.Headline["remote memory p99 MiB"]; got != 64 {
		t.Errorf("remote memory p99 %v MiB, want 64", got)
	}
	if got := s.Headline["self memory p99 MiB"]; got <= 1 {
		t.Errorf("own memory p99 %v MiB", got)
	}
	if got := s.Headline["remote cpu p99 cores"]; got < 2 {
		t.Errorf("remote cpu p99 %v cores, want about 10", got)
	}
	if len(s.Series["cpu remote"]) < 3 || len(s.Series["memory self"]) < 3 {
		t.Errorf("series too short: %d cpu, %d memory points", len(s.Series["cpu remote"]), len(s.Series["memory self"]))
	}
	items := map[string]bool{}
	for _, item := range s.PerfData.DataItems {
		items[item.Labels["Component"]+"/"+item.Labels["Resource"]+"/"+item.Unit] = true
	}
	for _, want := range []string{"remote/cpu/cores", "remote/memory/MiB", "self/cpu/cores", "self/memory/MiB"} {
		if !items[want] {
			t.Errorf("no data item %s in %v", want, items)
		}
	}
	// clusterloader2's file: per percentile, each component's cores and
	// bytes; perfdash plots memory in MiB.
	got := map[string]float64{}
	for _, it := range perfdashReads(t, s)[0].Items {
		for perc, v := range it.Data {
			got[it.Labels["PodName"]+"/"+it.Labels["Resource"]+"/"+perc] = v
		}
	}
	for _, perc := range []string{"50", "90", "99", "100"} {
		if got["remote/memory/"+perc] != 64 || got["remote/CPU/"+perc] < 2 || got["self/memory/"+perc] <= 1 {
			t.Errorf("perfdash reads at p%s: %v", perc, got)
		}
	}
}

func TestResourceUsageSummaryNotMeasured(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name string
		env  *Env
		want string
	}{
		{"unreachable endpoint", &Env{Components: []Component{{Name: "etcd", MetricsURL: closed.URL + "/metrics"}}}, "etcd:"},
		{"nothing to observe", &Env{}, "no component to observe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(tc.env)
			ctx := context.Background()
			if err := m.Execute(ctx, "ResourceUsageSummary", "r", map[string]any{"action": "start", "interval": "20ms"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(60 * time.Millisecond)
			err := m.Execute(ctx, "ResourceUsageSummary", "r", map[string]any{"action": "gather"})
			var nm *NotMeasuredError
			if !errors.As(err, &nm) || !strings.Contains(nm.Reason, tc.want) {
				t.Fatalf("want not measured mentioning %q, got %v", tc.want, err)
			}
			if s := m.Summaries(); len(s) != 1 || s[0].Verdict != NotMeasured || s[0].Reason != nm.Reason {
				t.Fatalf("summaries %+v", s)
			}
		})
	}
}

func TestResourceUsageSummaryBadParams(t *testing.T) {
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"action": "begin"}, "param action"},
		{map[string]any{"action": "start", "interval": "0s"}, "param interval"},
		{map[string]any{"action": "gather"}, "gather without start"},
	} {
		err := NewManager(&Env{}).Execute(context.Background(), "ResourceUsageSummary", "r", tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want %q, got %v", tc.params, tc.want, err)
		}
	}
	m := NewManager(&Env{})
	_ = m.Execute(context.Background(), "ResourceUsageSummary", "r", map[string]any{"action": "start"})
	err := m.Execute(context.Background(), "ResourceUsageSummary", "r", map[string]any{"action": "gather", "resourceConstraints": "/no/such/file"})
	if err == nil || !strings.Contains(err.Error(), "param resourceConstraints") {
		t.Errorf("missing constraints file: %v", err)
	}
}
