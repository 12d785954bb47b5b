package measurements

import (
	"context"
	"errors"
	testingclock "k8s.io/utils/clock/testing"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeHealthTracker(t *testing.T) {
	notReady := func(name string) *corev1.Node {
		n := wtNode(name, false)
		n.Status.Conditions[0].Status = corev1.ConditionUnknown
		n.Status.Conditions[0].Reason = "NodeStatusUnknown"
		return n
	}
	cases := []struct {
		name     string
		params   Params
		changes  []*corev1.Node
		wantN    float64
		wantViol []string
	}{
		{name: "steady nodes", changes: []*corev1.Node{wtNode("n1", true)}},
		{name: "a node goes unknown", changes: []*corev1.Node{notReady("n2")}, wantN: 1,
			wantViol: []string{"n2 went Unknown at 2026-01-01T00:00:00Z (NodeStatusUnknown)"}},
		{name: "allowed transitions", params: Params{"maxNotReadyTransitions": 2}, changes: []*corev1.Node{notReady("n1"), notReady("n2")}, wantN: 2},
		{name: "a not-ready node getting ready is no transition", changes: []*corev1.Node{wtNode("n3", true)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := wtNewCluster(wtNode("n1", true), wtNode("n2", true), wtNode("n3", false))
			env := wtEnv(c, nil)
			env.Clock = testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			m := &nodeHealthTracker{}
			if _, err := m.Execute(context.Background(), env, Params{"action": "start"}); err != nil {
				t.Fatal(err)
			}
			c.waitWatching(t, "nodes")
			for _, n := range tc.changes {
				if _, err := c.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// Let the informer deliver the updates before gather stops it.
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				m.mu.Lock()
				n := len(m.transitions)
				m.mu.Unlock()
				if float64(n) >= tc.wantN {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			params := Params{"action": "gather"}
			for k, v := range tc.params {
				params[k] = v
			}
			sums, err := m.Execute(context.Background(), env, params)
			if len(sums) != 1 || sums[0].Headline["NotReadyTransitions"] != tc.wantN || sums[0].PerfData.DataItems[0].Data["NotReadyTransitions"] != tc.wantN {
				t.Fatalf("summaries %+v", sums)
			}
			var v *ViolationError
			if len(tc.wantViol) == 0 && err != nil {
				t.Fatalf("err %v", err)
			}
			for _, want := range tc.wantViol {
				if !errors.As(err, &v) || !strings.Contains(err.Error(), want) {
					t.Errorf("err %v, want a violation with %q", err, want)
				}
			}
		})
	}
	if _, err := (&nodeHealthTracker{}).Execute(context.Background(), wtEnv(wtNewCluster(), nil), Params{"action": "gather"}); err == nil || !strings.Contains(err.Error(), "was not started") {
		t.Errorf("gather before start: %v", err)
	}
}
