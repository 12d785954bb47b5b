package measurements

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestControlledPodsProgress: the line counts pods of every controller the
// gather waits for, each up to its desired count, and says what the rest
// do.
func TestControlledPodsProgress(t *testing.T) {
	tracker := func(desired int, deleted bool, state ctrlOpState, initial int, pods ...*corev1.Pod) *controllerTracker {
		tr := &controllerTracker{view: &controllerView{desired: desired}, deleted: deleted, state: state, initial: initial}
		for _, p := range pods {
			tr.tally.add(p, func(p *corev1.Pod) bool { return p.Spec.Containers[0].Image == "img:2" })
		}
		return tr
	}
	pod := func(phase corev1.PodPhase, ready bool, image string) *corev1.Pod {
		return wtPod("ns", "p", nil, phase, ready, wtSpec(image))
	}
	running, notReady, pending := pod(corev1.PodRunning, true, "img:2"), pod(corev1.PodRunning, false, "img:2"), pod(corev1.PodPending, false, "img:2")
	terminating := pod(corev1.PodRunning, true, "img:2")
	terminating.DeletionTimestamp = &terminating.CreationTimestamp
	for _, tc := range []struct {
		name     string
		trackers map[string]*controllerTracker
		want     podsProgress
	}{
		{"3000 pods of one Deployment", map[string]*controllerTracker{
			"a": tracker(3000, false, ctrlOpWaiting, 0, append(repeat(running, 2801), repeat(notReady, 199)...)...),
		}, podsProgress{"pods running", 2801, 3000, "199 running but not ready, 0/1 Deployments ready"}},
		{"a controller counts up to its desired pods", map[string]*controllerTracker{
			"a": tracker(2, false, ctrlOpWaiting, 0, running, running, running, terminating),
			"b": tracker(3, false, ctrlOpReached, 0, running, running, running),
		}, podsProgress{"pods running", 5, 5, "1 terminating, 1/2 Deployments ready"}},
		{"an old template's pods are named", map[string]*controllerTracker{
			"a": tracker(2, false, ctrlOpWaiting, 0, pod(corev1.PodRunning, true, "img:1"), running, pending),
		}, podsProgress{"pods running", 1, 2, "1 running of an old template, 1 pending, 0/1 Deployments ready"}},
		{"a controller of unknown size", map[string]*controllerTracker{
			"a": tracker(1, false, ctrlOpReached, 0, running),
			"b": tracker(-1, false, ctrlOpWaiting, 0),
		}, podsProgress{"pods running", 1, 1, "1 Deployments of unknown size, 1/2 Deployments ready"}},
		{"deletions alone count pods gone", map[string]*controllerTracker{
			"a": tracker(0, true, ctrlOpWaiting, 10, terminating, terminating, terminating),
			"b": tracker(0, true, ctrlOpReached, 5),
		}, podsProgress{"pods deleted", 12, 15, "3 terminating, 1/2 Deployments gone"}},
		{"deletions beside creations", map[string]*controllerTracker{
			"a": tracker(2, false, ctrlOpWaiting, 0, running),
			"b": tracker(0, true, ctrlOpWaiting, 2, terminating, terminating),
		}, podsProgress{"pods running", 1, 2, "2 pods of deleted Deployments left, 0/1 Deployments ready"}},
		{"nothing to wait for", map[string]*controllerTracker{}, podsProgress{"pods running", 0, 0, "0/0 Deployments ready"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := controlledPodsProgress("Deployment", tc.trackers); got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func repeat(p *corev1.Pod, n int) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = p
	}
	return out
}
