package measurements

import (
	"context"
	"errors"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// jlJob is a Job created at t0, started start after it and completed run
// after that (zero: not yet).
func jlJob(name string, t0 time.Time, start, run time.Duration) *batchv1.Job {
	j := wtJob(name, 1, 1)
	j.CreationTimestamp = metav1.NewTime(t0)
	if start > 0 {
		j.Status.StartTime = &metav1.Time{Time: t0.Add(start)}
	}
	if run > 0 {
		j.Status.CompletionTime = &metav1.Time{Time: t0.Add(start + run)}
	}
	return j
}

func TestJobLifecycleLatency(t *testing.T) {
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	c := wtNewCluster([]runtime.Object{
		jlJob("j1", t0, time.Second, 5*time.Second),
		jlJob("j2", t0, 2*time.Second, 0),
		jlJob("j3", t0, 3*time.Second, 7*time.Second),
	}...)
	env := wtEnv(c, nil)
	m := &jobLifecycleLatency{pollInterval: 10 * time.Millisecond}
	if _, err := m.Execute(context.Background(), env, Params{"action": "start", "labelSelector": "group=load"}); err != nil {
		t.Fatal(err)
	}
	c.waitWatching(t, "jobs")
	go func() {
		time.Sleep(30 * time.Millisecond)
		if err := c.Tracker().Update(jobs, jlJob("j2", t0, 2*time.Second, 9*time.Second), "test-ns-1"); err != nil {
			t.Error(err)
		}
	}()
	sums, err := m.Execute(context.Background(), env, Params{"action": "gather", "timeout": "5s"})
	if err != nil || len(sums) != 1 {
		t.Fatalf("gather: %+v %v", sums, err)
	}
	s := sums[0]
	want := map[string]map[string]float64{
		"create_to_start":   {"Perc50": 2000, "Perc90": 3000, "Perc99": 3000},
		"start_to_complete": {"Perc50": 7000, "Perc90": 9000, "Perc99": 9000},
	}
	if len(s.PerfData.DataItems) != 2 {
		t.Fatalf("data items %+v", s.PerfData.DataItems)
	}
	for _, it := range s.PerfData.DataItems {
		w := want[it.Labels["Metric"]]
		for k, v := range w {
			if it.Data[k] != v || it.Unit != "ms" {
				t.Errorf("%s %s = %v %s, want %v ms", it.Labels["Metric"], k, it.Data[k], it.Unit, v)
			}
		}
	}
	if s.Headline["jobs"] != 3 || s.Headline["completed"] != 3 {
		t.Errorf("headline %v", s.Headline)
	}
}

// A Job that never completes is left out of start_to_complete once the
// timeout runs out; no Job at all is not measured.
func TestJobLifecycleLatencyTimeoutAndNone(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	c := wtNewCluster(jlJob("j1", t0, time.Second, 0), jlJob("j2", t0, time.Second, 2*time.Second))
	env := wtEnv(c, nil)
	m := &jobLifecycleLatency{pollInterval: 10 * time.Millisecond}
	if _, err := m.Execute(context.Background(), env, Params{"action": "start", "labelSelector": "group=load"}); err != nil {
		t.Fatal(err)
	}
	c.waitWatching(t, "jobs")
	sums, err := m.Execute(context.Background(), env, Params{"action": "gather", "timeout": "100ms"})
	if err != nil || len(sums) != 1 || sums[0].Headline["completed"] != 1 || sums[0].Headline["start_to_complete p99 ms"] != 2000 {
		t.Fatalf("gather after the timeout: %+v %v", sums, err)
	}

	empty := &jobLifecycleLatency{pollInterval: 10 * time.Millisecond}
	env = wtEnv(wtNewCluster(), nil)
	if _, err := empty.Execute(context.Background(), env, Params{"action": "start", "labelSelector": "group=load"}); err != nil {
		t.Fatal(err)
	}
	var nm *NotMeasuredError
	if _, err := empty.Execute(context.Background(), env, Params{"action": "gather", "timeout": "50ms"}); !errors.As(err, &nm) {
		t.Fatalf("no Jobs: %v, want not measured", err)
	}
}
