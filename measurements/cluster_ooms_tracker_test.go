package measurements

import (
	"context"
	"errors"
	testingclock "k8s.io/utils/clock/testing"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func oomEventObject(name, node, process string, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name, UID: types.UID(name), ResourceVersion: "1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node},
		Reason:         oomEventReason,
		Message:        "Killed process 4242 (" + process + ") total-vm:1024kB, anon-rss:512kB, file-rss:0kB, shmem-rss:0kB",
		FirstTimestamp: metav1.NewTime(at),
	}
}

func TestClusterOOMsTracker(t *testing.T) {
	start := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	now := testingclock.NewFakePassiveClock(start)
	client := fake.NewClientset(oomEventObject("before", "node-1", "etcd", start.Add(-time.Hour)))
	env := &Env{Client: client, Clock: now}
	m := &clusterOOMsTracker{}
	params := func(action string, extra ...any) Params {
		p := Params{"action": action, "clusterOOMsTrackerEnabled": true, "clusterOOMsIgnoredProcesses": "chrome, fluentd"}
		for i := 0; i < len(extra); i += 2 {
			p[extra[i].(string)] = extra[i+1]
		}
		return p
	}
	if _, err := m.Execute(context.Background(), env, params("start")); err != nil {
		t.Fatal(err)
	}
	now.SetTime(start.Add(time.Minute))
	ctx := context.Background()
	for _, ev := range []*corev1.Event{
		oomEventObject("during", "node-2", "kube-proxy", now.Now()),
		oomEventObject("ignored", "node-3", "fluentd", now.Now()),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other", UID: "other"}, Reason: "Started"},
	} {
		if _, err := client.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		m.mu.Lock()
		n := len(m.ooms)
		m.mu.Unlock()
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	sums, err := m.Execute(ctx, env, params("gather"))
	var v *ViolationError
	if !errors.As(err, &v) || len(v.Items) != 1 || !strings.Contains(v.Items[0], "OOM kill of kube-proxy (pid 4242) on node-2") {
		t.Fatalf("gather: %v", err)
	}
	file := sums[0].Output.(map[string][]oomEvent)
	if len(file["failures"]) != 1 || len(file["ignored"]) != 1 || len(file["past"]) != 1 || file["failures"][0].ProcessMemory != "1024kB" {
		t.Errorf("file %+v", file)
	}
	if sums[0].Name != "ClusterOOMsTracker" || sums[0].Headline["ooms"] != 1 {
		t.Errorf("summary %+v", sums[0])
	}
	if _, err := m.Execute(ctx, env, params("gather")); err == nil {
		t.Error("a second gather without start: no error")
	}
	// clusterOOMsFailureEnabled: false reports without a violation.
	now.SetTime(start.Add(time.Hour))
	m = &clusterOOMsTracker{}
	if _, err := m.Execute(ctx, env, params("start")); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.ooms = append(m.ooms, oomEvent{Process: "kubelet", Time: now.Now()})
	m.mu.Unlock()
	if sums, err := m.Execute(ctx, env, params("gather", "clusterOOMsFailureEnabled", false)); err != nil || sums[0].Headline["ooms"] != 1 {
		t.Errorf("failure disabled: %v %+v", err, sums)
	}
	// Off by default, as in clusterloader2.
	if sums, err := (&clusterOOMsTracker{}).Execute(ctx, env, Params{"action": "start"}); err != nil || sums != nil {
		t.Errorf("off: %v %v", sums, err)
	}
}

// A kill counted by a local cgroup's counter is named after the component
// whose process was replaced since start.
func TestClusterOOMsTrackerLocalCgroup(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "memory.events")
	if err := os.WriteFile(events, []byte("oom 3\noom_kill 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	m := &clusterOOMsTracker{
		cgroups: map[string]uint64{dir: 1},
		pids:    map[string]int{"kube-apiserver": 1 << 30, "etcd": os.Getpid()},
	}
	got := m.localOOMs(now)
	if len(got) != 2 || got[0].Process != "kube-apiserver" || got[1].Process != "a process in "+dir || got[0].Node != "local" {
		t.Fatalf("local OOMs %+v", got)
	}
}
