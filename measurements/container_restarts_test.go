package measurements

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func wtRestartPod(name string, restarts int32) *corev1.Pod {
	p := wtPod("test-ns-1", name, map[string]string{"group": "load"}, corev1.PodRunning, true, wtSpec("img"))
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: restarts}}
	return p
}

func TestContainerRestarts(t *testing.T) {
	cases := []struct {
		name     string
		initial  []runtime.Object
		updates  []*corev1.Pod
		creates  []*corev1.Pod
		params   Params
		want     float64
		wantViol string
	}{
		{name: "restarts before start do not count", initial: []runtime.Object{wtRestartPod("p1", 5)}},
		{name: "a restart during the run", initial: []runtime.Object{wtRestartPod("p1", 5)}, updates: []*corev1.Pod{wtRestartPod("p1", 7)},
			want: 2, wantViol: "container test-ns-1/p1/c restarted 2 times (allowed 0)"},
		{name: "a new pod counts from zero", creates: []*corev1.Pod{wtRestartPod("p2", 1)}, want: 1, params: Params{"allowedRestarts": 1}},
		{name: "clusterloader2's param name", creates: []*corev1.Pod{wtRestartPod("p2", 3)}, want: 3, params: Params{"defaultAllowedRestarts": 1},
			wantViol: "restarted 3 times (allowed 1)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := wtNewCluster(tc.initial...)
			env := wtEnv(c, nil)
			m := &containerRestarts{}
			if _, err := m.Execute(context.Background(), env, Params{"action": "start", "labelSelector": "group=load"}); err != nil {
				t.Fatal(err)
			}
			c.waitWatching(t, "pods")
			for _, p := range tc.updates {
				if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tc.creates {
				wtCreate(t, c, p)
			}
			params := Params{"action": "gather"}
			for k, v := range tc.params {
				params[k] = v
			}
			var sums []Summary
			var err error
			deadline := time.Now().Add(2 * time.Second)
			for {
				// Wait until the informer delivered the changes.
				m.mu.Lock()
				total := int32(0)
				for k, n := range m.last {
					total += n - m.base[k]
				}
				m.mu.Unlock()
				if float64(total) >= tc.want || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			sums, err = m.Execute(context.Background(), env, params)
			if len(sums) != 1 || sums[0].Headline["restarts"] != tc.want {
				t.Fatalf("summaries %+v err %v", sums, err)
			}
			if tc.wantViol == "" && err != nil {
				t.Fatalf("err %v", err)
			}
			// perfdash sums each container name's restarts.
			if got := perfdashReads(t, sums[0])[0].Items[0].Data["c"]; got != tc.want {
				t.Errorf("perfdash reads %v restarts of container c, want %v", got, tc.want)
			}
			var v *ViolationError
			if tc.wantViol != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.wantViol)) {
				t.Fatalf("err %v, want a violation with %q", err, tc.wantViol)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&containerRestarts{}).Execute(ctx, wtEnv(wtNewCluster(), nil), Params{"action": "start"}); !errors.Is(err, context.Canceled) {
		t.Errorf("start with a cancelled context: %v", err)
	}
}
