package fidelity

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNormalize: two pods' statuses that differ only in what differs by
// nature between pods (times, IPs, container IDs, generated volume names,
// the runtime's reason for an exited container) normalize to the same
// text; a difference in what the node decides does not go away.
func TestNormalize(t *testing.T) {
	status := func(ip, id, volume, reason string, at time.Time, ready v1.ConditionStatus) v1.PodStatus {
		ts := metav1.NewTime(at)
		return v1.PodStatus{
			Phase: v1.PodRunning, HostIP: "10.0.0." + ip, HostIPs: []v1.HostIP{{IP: "10.0.0." + ip}},
			PodIP: "10.64.0." + ip, PodIPs: []v1.PodIP{{IP: "10.64.0." + ip}}, StartTime: &ts,
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: ready, LastTransitionTime: ts}},
			ContainerStatuses: []v1.ContainerStatus{{
				Name: "c", ContainerID: id,
				State:        v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: id, Reason: reason, StartedAt: ts, FinishedAt: ts}},
				VolumeMounts: []v1.VolumeMountStatus{{Name: volume, MountPath: "/var/run"}},
			}},
		}
	}
	a := status("1", "fake://a", "kube-api-access-abcde", "Completed", time.Unix(100, 0), v1.ConditionTrue)
	b := status("2", "fakeRuntime://b", "kube-api-access-x7k2p", "", time.Unix(200, 0), v1.ConditionTrue)
	if statusText(a) != statusText(b) {
		t.Errorf("statuses alike by nature differ:\n%s\n%s", statusText(a), statusText(b))
	}
	c := status("1", "fake://a", "kube-api-access-abcde", "Completed", time.Unix(100, 0), v1.ConditionFalse)
	if statusText(a) == statusText(c) {
		t.Error("a difference in the Ready condition was normalized away")
	}
	if a.PodIP != "10.64.0.1" {
		t.Error("normalize changed its argument")
	}
}
