package measurements

import (
	"context"
	"fmt"
	testingclock "k8s.io/utils/clock/testing"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// trackerT0 is the tests' start: the clock reads trackerT0+400ms at the
// start action, so a pod created at trackerT0 (its creationTimestamp
// truncated to the second) still counts.
var trackerT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

const trackerTestNS = "ns-1"

// newTrackerTestEnv is an Env over a fake clientset holding objs, with the
// clock at the start.
func newTrackerTestEnv(objs ...runtime.Object) (*Env, *fake.Clientset, *testingclock.FakeClock) {
	client := fake.NewClientset(objs...)
	clock := testingclock.NewFakeClock(trackerT0.Add(400 * time.Millisecond))
	return &Env{Client: client, Clock: clock}, client, clock
}

// trackerTestPod is a pending pod of two containers, a and b, created at
// created; stateful pods mount a PVC.
func trackerTestPod(name string, created time.Time, stateful bool) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: trackerTestNS, Name: name, UID: types.UID("uid-" + name),
			Labels:            map[string]string{"group": "test"},
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "a", Image: "pause"}, {Name: "b", Image: "pause"}},
			Volumes: []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{
				ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}},
			}}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	if stateful {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name},
		}})
	}
	return pod
}

// trackerSchedulePod binds pod to node-1 with a PodScheduled time of at, as
// the apiserver does when it stores a binding.
func trackerSchedulePod(pod *v1.Pod, at time.Time) {
	pod.Spec.NodeName = "node-1"
	pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{
		Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at),
	})
}

// trackerRunPod marks pod Running with its containers started at startedAt
// (a, b, ... in order).
func trackerRunPod(pod *v1.Pod, startedAt ...time.Time) {
	pod.Status.Phase = v1.PodRunning
	pod.Status.ContainerStatuses = nil
	for i, c := range pod.Spec.Containers {
		cs := v1.ContainerStatus{Name: c.Name}
		if i < len(startedAt) {
			cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt[i])}
		} else {
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
	}
}

// trackerUpdatePod writes pod through the fake clientset, so the tracker sees
// it through its watch.
func trackerUpdatePod(t *testing.T, client *fake.Clientset, pod *v1.Pod) {
	t.Helper()
	if _, err := client.CoreV1().Pods(pod.Namespace).Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating pod %s: %v", pod.Name, err)
	}
}

func trackerCreatePod(t *testing.T, client *fake.Clientset, pod *v1.Pod) {
	t.Helper()
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
}

// waitTracked waits until the tracker's view satisfies cond: the informer
// delivers the fake's events asynchronously.
func waitTracked(t *testing.T, tr *podTracker, what string, cond func(pods map[string]podTimes, ignored int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, ignored := tr.snapshot()
		pods := map[string]podTimes{}
		for _, p := range list {
			pods[p.Name] = p
		}
		if cond(pods, ignored) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tracker never saw %s; it has %d pods, %d ignored", what, len(pods), ignored)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestPodStartupTrackerPhases follows pods through the tracker: which
// times it records, from where, how it narrows the API's whole-second
// stamps with its own sightings (refineStamp), and which pods it ignores.
//
// The informer reads the clock when it delivers an update, not when the
// test writes it, so every clock move waits for the tracker to have seen
// the update before it.
func TestPodStartupTrackerPhases(t *testing.T) {
	at := func(d time.Duration) time.Time { return trackerT0.Add(d) }
	ms := time.Millisecond
	old := trackerTestPod("old", at(-10*time.Second), false)
	env, client, clock := newTrackerTestEnv(old)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, err := startPodTracker(ctx, env, "test", watchSelector{Namespace: trackerTestNS})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.stop()

	// bound: a scheduler binding (condition time), every stamp seen within
	// its second; direct: created with nodeName and no PodScheduled time,
	// so the tracker's own sight of the node counts, and its start is seen
	// late; partial: Running with one container still waiting, its
	// PodScheduled stamp ahead of the local clock.
	bound := trackerTestPod("bound", at(0), false)
	direct := trackerTestPod("direct", at(time.Second), true)
	partial := trackerTestPod("partial", at(0), false)

	// Created, stamped T0, seen at T0+450ms (50ms after the start).
	clock.SetTime(at(450 * ms))
	trackerCreatePod(t, client, bound)
	trackerCreatePod(t, client, partial)
	waitTracked(t, tr, "bound and partial", func(pods map[string]podTimes, ignored int) bool { return len(pods) == 2 && ignored == 1 })
	// Created, stamped T0+1s, seen at T0+1.3s.
	clock.SetTime(at(1300 * ms))
	trackerCreatePod(t, client, direct)
	waitTracked(t, tr, "direct", func(pods map[string]podTimes, _ int) bool { return len(pods) == 3 })

	// The apiserver's clock runs ahead of the local one: the PodScheduled
	// stamp T0+2s is seen at T0+1.7s, before it, and stays as stamped.
	clock.SetTime(at(1700 * ms))
	trackerSchedulePod(partial, at(2*time.Second))
	trackerUpdatePod(t, client, partial)
	waitTracked(t, tr, "partial bound", func(pods map[string]podTimes, _ int) bool { return !pods["partial"].Scheduled.IsZero() })

	// Bound at T0+2s (stamp), seen 30ms into that second.
	clock.SetTime(at(2030 * ms))
	trackerSchedulePod(bound, at(2*time.Second))
	trackerUpdatePod(t, client, bound)
	waitTracked(t, tr, "bound bound", func(pods map[string]podTimes, _ int) bool { return !pods["bound"].Scheduled.IsZero() })

	// No stamp to refine: the sighting of nodeName is the schedule time.
	clock.SetTime(at(3 * time.Second))
	direct.Spec.NodeName = "node-2"
	trackerUpdatePod(t, client, direct)
	waitTracked(t, tr, "direct bound", func(pods map[string]podTimes, _ int) bool { return !pods["direct"].Scheduled.IsZero() })

	// Containers started at T0+3s and T0+4s (stamps), all running seen at
	// T0+4.08s: the latest start is taken as T0+4.08s.
	clock.SetTime(at(4080 * ms))
	trackerRunPod(bound, at(3*time.Second), at(4*time.Second))
	trackerUpdatePod(t, client, bound)
	waitTracked(t, tr, "bound running", func(pods map[string]podTimes, _ int) bool { return !pods["bound"].Watched.IsZero() })

	// Containers started at T0+4s, seen only at T0+5.2s, after that
	// second: the start is taken as its last millisecond, T0+4.999s.
	// partial runs one container of two; old, from before the start, runs.
	clock.SetTime(at(5200 * ms))
	trackerRunPod(partial, at(3*time.Second))
	old.Spec.NodeName = "node-1"
	trackerRunPod(old, at(0), at(0))
	trackerRunPod(direct, at(4*time.Second), at(4*time.Second))
	for _, p := range []*v1.Pod{partial, old, direct} {
		trackerUpdatePod(t, client, p)
	}
	waitTracked(t, tr, "direct running", func(pods map[string]podTimes, _ int) bool { return !pods["direct"].Watched.IsZero() })

	// A later update must not move a recorded time.
	clock.SetTime(at(9 * time.Second))
	trackerRunPod(bound, at(7*time.Second), at(8*time.Second))
	trackerUpdatePod(t, client, bound)
	if err := client.CoreV1().Pods(trackerTestNS).Delete(ctx, "partial", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTracked(t, tr, "partial deleted", func(pods map[string]podTimes, _ int) bool { return pods["partial"].Deleted })
	tr.stop()

	pods, ignored := tr.snapshot()
	got := map[string]podTimes{}
	for _, p := range pods {
		got[p.Name] = p
	}
	for _, tc := range []struct {
		name string
		want podTimes
	}{
		{"bound", podTimes{Namespace: trackerTestNS, Name: "bound", Node: "node-1", Stateless: true,
			Created: at(450 * ms), Scheduled: at(2030 * ms), ScheduledBy: scheduledByCondition,
			Running: at(4080 * ms), Watched: at(4080 * ms)}},
		{"direct", podTimes{Namespace: trackerTestNS, Name: "direct", Node: "node-2", Stateless: false,
			Created: at(1300 * ms), Scheduled: at(3 * time.Second), ScheduledBy: scheduledByObservation,
			Running: at(4999 * ms), Watched: at(5200 * ms)}},
		{"partial", podTimes{Namespace: trackerTestNS, Name: "partial", Node: "node-1", Stateless: true,
			Created: at(450 * ms), Scheduled: at(2 * time.Second), ScheduledBy: scheduledByCondition, Deleted: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if g := got[tc.name]; g != tc.want {
				t.Fatalf("\n got %+v\nwant %+v", g, tc.want)
			}
		})
	}
	if _, seen := got["old"]; seen || ignored != 1 || len(got) != 3 {
		t.Fatalf("the pod created before the start must be ignored once: pods %v, ignored %d", got, ignored)
	}
}

// TestRefineStamp checks the estimate of a whole-second stamp from the
// local time it was first seen.
func TestRefineStamp(t *testing.T) {
	stamp := trackerT0.Add(time.Second) // 10:00:01
	ms := time.Millisecond
	for _, tc := range []struct {
		name        string
		stamp, seen time.Time
		want        time.Time
	}{
		{"seen inside the second: the sighting", stamp, stamp.Add(250 * ms), stamp.Add(250 * ms)},
		{"seen exactly at the stamp", stamp, stamp, stamp},
		{"seen at the second's last millisecond", stamp, stamp.Add(999 * ms), stamp.Add(999 * ms)},
		{"seen within the last millisecond: clamped", stamp, stamp.Add(999*ms + 500*time.Microsecond), stamp.Add(999 * ms)},
		{"seen at the next second: clamped to stamp+999ms", stamp, stamp.Add(time.Second), stamp.Add(999 * ms)},
		{"seen long after: clamped to stamp+999ms", stamp, stamp.Add(5 * time.Second), stamp.Add(999 * ms)},
		{"seen before the stamp (clock skew): the stamp", stamp, stamp.Add(-300 * ms), stamp},
		{"zero stamp stays zero", time.Time{}, stamp, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := refineStamp(tc.stamp, tc.seen); !got.Equal(tc.want) {
				t.Fatalf("refineStamp(%v, %v) = %v, want %v", tc.stamp, tc.seen, got, tc.want)
			}
		})
	}
}

func TestPodStartupTrackerStopsWithContext(t *testing.T) {
	env, _, _ := newTrackerTestEnv()
	ctx, cancel := context.WithCancel(context.Background())
	tr, err := startPodTracker(ctx, env, "test", watchSelector{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.stopped() {
		t.Fatal("stopped before its context ended")
	}
	cancel()
	select {
	case <-tr.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the informer outlived its context")
	}
	tr.stop() // after the context ended, stop returns at once
	if _, err := startPodTracker(context.Background(), &Env{}, "test", watchSelector{}); err == nil {
		t.Fatal("a tracker without a client must fail")
	}
}

// TestPodStartupTrackerSelectors checks that the namespace and both
// selectors reach the apiserver on the list and on the watch.
func TestPodStartupTrackerSelectors(t *testing.T) {
	env, client, _ := newTrackerTestEnv()
	sel := watchSelector{Namespace: trackerTestNS, LabelSelector: "group=test", FieldSelector: "spec.schedulerName=default-scheduler"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, err := startPodTracker(ctx, env, "test", sel)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		seen := map[string]bool{}
		for _, a := range client.Actions() {
			var lbl, fld string
			switch a := a.(type) {
			case clienttesting.ListActionImpl:
				lbl, fld = a.GetListRestrictions().Labels.String(), a.GetListRestrictions().Fields.String()
			case clienttesting.WatchActionImpl:
				lbl, fld = a.GetWatchRestrictions().Labels.String(), a.GetWatchRestrictions().Fields.String()
			default:
				continue
			}
			ok := a.GetNamespace() == sel.Namespace && lbl == sel.LabelSelector && fld == sel.FieldSelector
			seen[a.GetVerb()] = seen[a.GetVerb()] || ok
		}
		if seen["list"] && seen["watch"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("list and watch with %s not seen; actions %v", sel, client.Actions())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if got, want := sel.String(), `namespace=ns-1 labelSelector="group=test" fieldSelector="spec.schedulerName=default-scheduler"`; got != want {
		t.Fatalf("String: %s, want %s", got, want)
	}
	if got, want := (watchSelector{}).String(), `namespace=(all) labelSelector=""`; got != want {
		t.Fatalf("String: %s, want %s", got, want)
	}
}

func TestPodStartupStatelessVolumes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		source v1.VolumeSource
		want   bool
	}{
		{"emptyDir", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, true},
		{"configMap", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}, true},
		{"secret", v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}, true},
		{"downwardAPI", v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}, true},
		{"projected", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}, true},
		{"persistentVolumeClaim", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{}}, false},
		{"hostPath", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{}}, false},
		{"ephemeral", v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Volumes: []v1.Volume{
				{Name: "token", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}},
				{Name: "v", VolumeSource: tc.source},
			}}}
			if got := podIsStateless(pod); got != tc.want {
				t.Fatalf("stateless = %v, want %v", got, tc.want)
			}
		})
	}
	if !podIsStateless(&v1.Pod{}) {
		t.Fatal("a pod without volumes is stateless")
	}
}

func TestPodStartupContainersStarted(t *testing.T) {
	at := func(s int) time.Time { return trackerT0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name   string
		mutate func(*v1.Pod)
		want   time.Time
		ok     bool
	}{
		{"pending", func(*v1.Pod) {}, time.Time{}, false},
		{"all running: the latest start", func(p *v1.Pod) { trackerRunPod(p, at(5), at(3)) }, at(5), true},
		{"one container waiting", func(p *v1.Pod) { trackerRunPod(p, at(5)) }, time.Time{}, false},
		{"running phase, no statuses yet", func(p *v1.Pod) { p.Status.Phase = v1.PodRunning }, time.Time{}, false},
		{"succeeded", func(p *v1.Pod) { trackerRunPod(p, at(1), at(2)); p.Status.Phase = v1.PodSucceeded }, time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := trackerTestPod("p", trackerT0, false)
			tc.mutate(pod)
			got, ok := podContainersStarted(pod)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Fatalf("got %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestPodStartupTrackerSelectorParams(t *testing.T) {
	for _, tc := range []struct {
		params  Params
		wantErr string
	}{
		{Params{"namespace": "a", "labelSelector": "x=y", "fieldSelector": "status.phase=Running"}, ""},
		{Params{"labelSelector": "a in ("}, "param labelSelector"},
		{Params{"fieldSelector": "a~b"}, "param fieldSelector"},
		{Params{"namespace": 3}, "param namespace"},
	} {
		t.Run(fmt.Sprint(tc.params), func(t *testing.T) {
			_, err := parseWatchSelector(tc.params)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}
