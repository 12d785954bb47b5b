package kubemark

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestPodFailure holds the step's fast failure to what a root kubelet
// reports of a pod that cannot run; a pod that is merely starting is not a
// failure.
func TestPodFailure(t *testing.T) {
	old := metav1.NewTime(time.Now().Add(-2 * time.Minute))
	waiting := func(reason, msg string) []v1.ContainerStatus {
		return []v1.ContainerStatus{{Name: "fleet", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
	}
	cases := []struct {
		name   string
		status v1.PodStatus
		events []v1.Event
		want   []string
	}{
		{"starting", v1.PodStatus{ContainerStatuses: waiting("ContainerCreating", "")}, nil, nil},
		{"image", v1.PodStatus{ContainerStatuses: waiting("ErrImageNeverPull", `Container image "x:y" is not present with pull policy of Never`)}, nil,
			[]string{"hollow-node pod p container fleet: ErrImageNeverPull", `"x:y"`}},
		{"crash", v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "fleet",
			State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}}}, nil,
			[]string{"CrashLoopBackOff", "last exit code 2, Error"}},
		{"unschedulable", v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
			Message: "0/1 nodes are available: 1 Insufficient cpu.", LastTransitionTime: old}}}, nil,
			[]string{"cannot be scheduled", "Insufficient cpu"}},
		{"unschedulable a moment", v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
			LastTransitionTime: metav1.Now()}}}, nil, nil},
		{"secret", v1.PodStatus{ContainerStatuses: waiting("ContainerCreating", "")},
			[]v1.Event{{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, InvolvedObject: v1.ObjectReference{Name: "p"}, Reason: "FailedMount",
				Message: `MountVolume.SetUp failed for volume "kubeconfig" : secret "hollow-node-credentials" not found`}},
			[]string{"FailedMount", `secret "hollow-node-credentials" not found`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			for i := range tc.events {
				if _, err := client.CoreV1().Events("ns").Create(context.Background(), &tc.events[i], metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			p := &Provider{root: client}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", CreationTimestamp: old}, Status: tc.status}
			got := p.podFailure(context.Background(), pod)
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("a failure: %s", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}
