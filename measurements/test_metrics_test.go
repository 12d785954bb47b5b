package measurements

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

// etcdExposition is etcd's /metrics at a scrape: n is 0 at start; by the
// next scrape 100 fsyncs happened, 50 in (1ms, 2ms] and 50 in (2ms, 4ms].
func etcdExposition(n int64) string {
	var b strings.Builder
	le := []string{"0.001", "0.002", "0.004", "+Inf"}
	counts := []int64{10, 10, 10, 10}
	if n > 0 {
		counts = []int64{10, 60, 110, 110}
	}
	b.WriteString("# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n")
	for i := range le {
		fmt.Fprintf(&b, "etcd_disk_wal_fsync_duration_seconds_bucket{le=%q} %d\n", le[i], counts[i])
	}
	fmt.Fprintf(&b, "etcd_disk_wal_fsync_duration_seconds_sum 1\netcd_disk_wal_fsync_duration_seconds_count %d\n", counts[3])
	fmt.Fprintf(&b, "# TYPE etcd_mvcc_db_total_size_in_bytes gauge\netcd_mvcc_db_total_size_in_bytes %d\n", (20+n)<<20)
	fmt.Fprintf(&b, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %d\n", n)
	fmt.Fprintf(&b, "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %d\n", 50<<20)
	return b.String()
}

func TestTestMetricsBundle(t *testing.T) {
	var scrapes atomic.Int64
	etcd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, etcdExposition(scrapes.Add(1)-1))
	}))
	defer etcd.Close()
	// No scheduler: SchedulingMetrics is not measured; the rest is.
	m := NewManager(&Env{Components: []Component{{Name: "etcd", MetricsURL: etcd.URL}}})
	ctx := context.Background()
	if err := m.Execute(ctx, "TestMetrics", "tm", map[string]any{"action": "start"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Execute(ctx, "TestMetrics", "tm", map[string]any{"action": "gather"}); err != nil {
		t.Fatalf("gather: %v", err)
	}
	byName := map[string]Summary{}
	for _, s := range m.Summaries() {
		byName[s.FileName()] = s
	}
	// SystemPodMetrics is off by default and says nothing.
	if len(byName) != 4 {
		t.Fatalf("summaries %+v", m.Summaries())
	}
	if s := byName["MetricsForE2E"]; s.Verdict != NotMeasured || !strings.Contains(s.Reason, "no client for the cluster") {
		t.Errorf("MetricsForE2E: %s %q", s.Verdict, s.Reason)
	}
	if s := byName["SchedulingMetrics"]; s.Verdict != NotMeasured || !strings.Contains(s.Reason, "kube-scheduler's metrics endpoint is not known") {
		t.Errorf("SchedulingMetrics: %s %q", s.Verdict, s.Reason)
	}
	if s := byName["ResourceUsageSummary"]; s.Verdict != Pass || s.Headline["etcd memory p99 MiB"] != 50 {
		t.Errorf("ResourceUsageSummary: %s %v", s.Verdict, s.Headline)
	}
	// Each part is SLO by its own method: only ResourceUsageSummary
	// judges a threshold.
	for name, want := range map[string]bool{"EtcdMetrics": false, "SchedulingMetrics": false, "ResourceUsageSummary": true} {
		if got := byName[name].SLO; got != want {
			t.Errorf("%s: SLO %v, want %v", name, got, want)
		}
	}
	e := byName["EtcdMetrics"]
	if e.Verdict != Pass || e.Method != "TestMetrics" || e.Identifier != "tm" {
		t.Fatalf("EtcdMetrics: %+v", e)
	}
	// p50: the 50th of 100 fsyncs is the last of the (1ms, 2ms] bucket: 2ms.
	// p90: 40 of the 50 in (2ms, 4ms]: 2 + 2*40/50 = 3.6ms.
	// p99: 2 + 2*49/50 = 3.96ms.
	want := map[string]float64{"Perc50": 2, "Perc90": 3.6, "Perc99": 3.96}
	var fsync, size map[string]float64
	for _, item := range e.PerfData.DataItems {
		switch item.Labels["Metric"] {
		case "WalFsyncDuration":
			fsync = item.Data
		case "MaxDatabaseSize":
			size = item.Data
		}
	}
	for k, v := range want {
		if math.Abs(fsync[k]-v) > 1e-9 {
			t.Errorf("WalFsyncDuration %s = %v ms, want %v", k, fsync[k], v)
		}
	}
	// clusterloader2's file: cumulative bucket counts of the 100 fsyncs
	// since start, which perfdash turns into the share at or under each.
	res := perfdashReads(t, e)
	fsyncShares := map[string]float64{"<= 0.001s": 0, "<= 0.002s": 50, "<= 0.004s": 100}
	if len(res[0].Items) != 1 || !maps.Equal(res[0].Items[0].Data, fsyncShares) || res[0].Items[0].Labels["Metric"] != "walFsyncDuration" {
		t.Errorf("EtcdMetrics as perfdash reads it: %+v, want walFsyncDuration %v", res[0].Items, fsyncShares)
	}
	// Scrapes: etcd start, resource sample at start, etcd gather: the
	// database grew to 20 + the scrape number MiB; the largest seen wins.
	if size["Max"] < 21 {
		t.Errorf("MaxDatabaseSize %v MiB", size["Max"])
	}
}

func TestEtcdMetricsNotMeasuredWithoutEtcd(t *testing.T) {
	m := NewManager(&Env{})
	ctx := context.Background()
	err := m.Execute(ctx, "EtcdMetrics", "e", map[string]any{"action": "start"})
	if err == nil || !strings.Contains(err.Error(), "etcd's metrics endpoint is not known") {
		t.Fatalf("start: %v", err)
	}
	if len(m.Summaries()) != 0 {
		t.Fatalf("a start that could not measure recorded %+v; the gather reports it", m.Summaries())
	}
	err = m.Execute(ctx, "EtcdMetrics", "e", map[string]any{"action": "gather"})
	if s := m.Summaries(); err == nil || len(s) != 1 || s[0].Verdict != NotMeasured {
		t.Fatalf("gather: %v %+v", err, s)
	}
}

// The bundle forwards CL2's pause and unpause of system-pod restart
// counts to its SystemPodMetrics part, and refuses other actions.
func TestTestMetricsPauseSystemPodMetrics(t *testing.T) {
	client := fake.NewClientset(kubeSystemPod("coredns", 0))
	env := &Env{Client: client}
	tm := newTestMetrics()
	on := func(action string) Params { return Params{"action": action, "systemPodMetricsEnabled": true} }
	if _, err := tm.parts[4].m.Execute(context.Background(), env, on("start")); err != nil {
		t.Fatal(err)
	}
	setRestarts(t, client, "coredns", 3)
	for _, action := range []string{"pauseSystemPodMetrics", "unpauseSystemPodMetrics"} {
		if sums, err := tm.Execute(context.Background(), env, on(action)); err != nil || sums != nil {
			t.Errorf("%s: %v %v", action, sums, err)
		}
	}
	sums, err := tm.parts[4].m.Execute(context.Background(), env, on("gather"))
	if err != nil || len(sums) != 1 {
		t.Fatalf("gather: %v %v", sums, err)
	}
	if got := sums[0].Headline["restarts"]; got != 0 {
		t.Errorf("restarts over the pause counted: %v", got)
	}
	if _, err := tm.Execute(context.Background(), env, Params{"action": "pause"}); err == nil {
		t.Error("an unknown action: no error")
	}
}
