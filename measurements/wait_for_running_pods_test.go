package measurements

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestWaitForRunningPods(t *testing.T) {
	lbl := map[string]string{"group": "latency"}
	running := func(name string) *corev1.Pod {
		return wtPod("test-ns-1", name, lbl, corev1.PodRunning, true, wtSpec("img"))
	}
	cases := []struct {
		name    string
		objects []runtime.Object
		params  Params
		drive   func(t *testing.T, c *wtCluster)
		wantErr []string
		wantOut string
	}{
		{
			name:    "pods start while waiting",
			objects: []runtime.Object{running("p1")},
			params:  Params{"desiredPodCount": 3},
			drive: func(t *testing.T, c *wtCluster) {
				time.Sleep(20 * time.Millisecond)
				wtCreate(t, c, running("p2"))
				wtCreate(t, c, running("p3"))
			},
			wantOut: "pods running 3/3",
		},
		{
			name: "finished pods do not block, other selectors do not count",
			objects: []runtime.Object{running("p1"), wtPod("test-ns-1", "p2", lbl, corev1.PodSucceeded, false, wtSpec("img")),
				wtPod("test-ns-1", "other", map[string]string{"group": "else"}, corev1.PodPending, false, wtSpec("img"))},
			params: Params{"desiredPodCount": 1},
		},
		{
			name:    "more running than desired is not done",
			objects: []runtime.Object{running("p1"), running("p2")},
			params:  Params{"desiredPodCount": 1, "timeout": "300ms"},
			wantErr: []string{"1 pods (namespace=(all) labelSelector=\"group=latency\") not running after 300ms: 2/1 pods running"},
		},
		{
			name:    "timeout names the pods that do not run",
			objects: []runtime.Object{running("p1"), wtPod("test-ns-1", "p2", lbl, corev1.PodPending, false, wtSpec("img"))},
			params:  Params{"desiredPodCount": 2, "timeout": "300ms"},
			wantErr: []string{"1/2 pods running, 1 pending", "not running: test-ns-1/p2 (Pending)"},
		},
		{
			name:    "zero desired with no pods",
			params:  Params{"desiredPodCount": 0},
			wantOut: "pods running 0/0",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := wtNewCluster(tc.objects...)
			var out bytes.Buffer
			params := Params{"labelSelector": "group=latency"}
			for k, v := range tc.params {
				params[k] = v
			}
			var wg sync.WaitGroup
			if tc.drive != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c.waitWatching(t, "pods")
					tc.drive(t, c)
				}()
			}
			w := &waitForRunningPods{pollInterval: 10 * time.Millisecond}
			_, err := w.Execute(context.Background(), wtEnv(c, &out), params)
			wg.Wait()
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("err: %v", err)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err %v\nwant it to contain %q", err, want)
				}
			}
			if tc.wantOut != "" && !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("progress %q, want %q", out.String(), tc.wantOut)
			}
		})
	}
}

func TestWaitForRunningPodsParamsAndCancel(t *testing.T) {
	c := wtNewCluster()
	for _, tc := range []struct {
		params Params
		want   string
	}{
		{Params{}, "param desiredPodCount: missing"},
		{Params{"desiredPodCount": "many"}, "param desiredPodCount"},
		{Params{"desiredPodCount": -1}, "negative"},
		{Params{"desiredPodCount": 1, "timeout": "x"}, "param timeout"},
		{Params{"desiredPodCount": 1, "labelSelector": "!!"}, "param labelSelector"},
	} {
		if _, err := (&waitForRunningPods{}).Execute(context.Background(), wtEnv(c, nil), tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.params, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := (&waitForRunningPods{pollInterval: 10 * time.Millisecond}).Execute(ctx, wtEnv(c, nil), Params{"desiredPodCount": 1, "timeout": "1h"})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 3*time.Second {
		t.Fatalf("cancelled wait: %v after %v", err, time.Since(start))
	}
}

func wtNode(name string, ready bool, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "hollow"}}}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func TestWaitForNodes(t *testing.T) {
	cordoned := func(n *corev1.Node) { n.Spec.Unschedulable = true }
	tainted := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	}
	cases := []struct {
		name    string
		objects []runtime.Object
		params  Params
		drive   func(t *testing.T, c *wtCluster)
		wantErr []string
		wantOut string
	}{
		{
			name:    "nodes become ready",
			objects: []runtime.Object{wtNode("n1", true), wtNode("n2", false)},
			params:  Params{"minDesiredNodeCount": 2, "maxDesiredNodeCount": 2},
			drive: func(t *testing.T, c *wtCluster) {
				time.Sleep(20 * time.Millisecond)
				if _, err := c.CoreV1().Nodes().Update(context.Background(), wtNode("n2", true), metav1.UpdateOptions{}); err != nil {
					t.Error(err)
				}
			},
			wantOut: "nodes ready 2/2",
		},
		{
			name:    "cordoned and tainted nodes do not count",
			objects: []runtime.Object{wtNode("n1", true), wtNode("n2", true, cordoned), wtNode("n3", true, tainted)},
			params:  Params{"minDesiredNodeCount": 2, "maxDesiredNodeCount": 3, "timeout": "300ms"},
			wantErr: []string{"1 ready nodes (namespace=(all) labelSelector=\"pool=hollow\") after 300ms, want between 2 and 3", "not ready or not schedulable: n2; n3"},
		},
		{
			name:    "too many is out of range",
			objects: []runtime.Object{wtNode("n1", true), wtNode("n2", true)},
			params:  Params{"minDesiredNodeCount": 1, "maxDesiredNodeCount": 1, "timeout": "300ms"},
			wantErr: []string{"2 ready nodes"},
		},
		{
			name:    "within the range",
			objects: []runtime.Object{wtNode("n1", true), wtNode("n2", true), wtNode("n3", false)},
			params:  Params{"minDesiredNodeCount": 1, "maxDesiredNodeCount": 5},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := wtNewCluster(tc.objects...)
			var out bytes.Buffer
			params := Params{"labelSelector": "pool=hollow"}
			for k, v := range tc.params {
				params[k] = v
			}
			var wg sync.WaitGroup
			if tc.drive != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c.waitWatching(t, "nodes")
					tc.drive(t, c)
				}()
			}
			_, err := (&waitForNodes{pollInterval: 10 * time.Millisecond}).Execute(context.Background(), wtEnv(c, &out), params)
			wg.Wait()
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("err: %v", err)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err %v\nwant it to contain %q", err, want)
				}
			}
			if tc.wantOut != "" && !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("progress %q, want %q", out.String(), tc.wantOut)
			}
		})
	}
}

func TestWaitForNodesParamsAndCancel(t *testing.T) {
	c := wtNewCluster()
	for _, tc := range []struct {
		params Params
		want   string
	}{
		{Params{"maxDesiredNodeCount": 1}, "param minDesiredNodeCount: missing"},
		{Params{"minDesiredNodeCount": 1}, "param maxDesiredNodeCount: missing"},
		{Params{"minDesiredNodeCount": 3, "maxDesiredNodeCount": 1}, "above maxDesiredNodeCount"},
		{Params{"minDesiredNodeCount": 1, "maxDesiredNodeCount": 1, "timeout": 5}, "param timeout"},
	} {
		if _, err := (&waitForNodes{}).Execute(context.Background(), wtEnv(c, nil), tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.params, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := (&waitForNodes{pollInterval: 10 * time.Millisecond}).Execute(ctx, wtEnv(c, nil), Params{"minDesiredNodeCount": 1, "maxDesiredNodeCount": 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}
