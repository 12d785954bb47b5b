package measurements

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// wtCluster is a fake clientset that counts the watches opened per
// resource: a fake watch does not replay what happened between an
// informer's list and its watch, so tests change objects only once the
// measurement watches.
type wtCluster struct {
	*fake.Clientset
	mu      sync.Mutex
	watches map[string]int
}

func wtNewCluster(objs ...runtime.Object) *wtCluster {
	c := &wtCluster{Clientset: fake.NewClientset(objs...), watches: map[string]int{}}
	c.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := a.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := c.Tracker().Watch(a.GetResource(), a.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		c.mu.Lock()
		c.watches[a.GetResource().Resource]++
		c.mu.Unlock()
		return true, w, nil
	})
	return c
}

// waitWatching waits until every resource named has an open watch.
func (c *wtCluster) waitWatching(t *testing.T, resources ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		ok := true
		for _, r := range resources {
			ok = ok && c.watches[r] > 0
		}
		c.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("no watch on %v", resources)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func wtEnv(c *wtCluster, out io.Writer) *Env {
	env := &Env{Progress: out, NamespacePrefix: "test-ns", Namespaces: 2}
	if c != nil {
		env.Client = c
	}
	return env
}

// wtSpec is the pod spec of the test templates, with an image to tell
// template versions apart.
func wtSpec(image string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}
}

// wtPod is a pod in phase with the Ready condition set as told; a Pending
// pod with a node is scheduled.
func wtPod(ns, name string, lbls map[string]string, phase corev1.PodPhase, ready bool, spec corev1.PodSpec) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}, Spec: spec}
	p.Spec.NodeName = "node-1"
	p.Status.Phase = phase
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

func wtCreate(t *testing.T, c *wtCluster, obj runtime.Object) {
	t.Helper()
	if err := c.Tracker().Add(obj); err != nil {
		t.Errorf("creating %T: %v", obj, err)
	}
}

func TestPodTally(t *testing.T) {
	spec := wtSpec("img")
	now := metav1.Now()
	terminating := wtPod("ns", "t", nil, corev1.PodRunning, true, spec)
	terminating.DeletionTimestamp = &now
	unscheduled := wtPod("ns", "u", nil, corev1.PodPending, false, spec)
	unscheduled.Spec.NodeName = ""
	cases := []struct {
		name    string
		pods    []*corev1.Pod
		desired int
		margin  int
		reached bool
		text    string
	}{
		{"all running", []*corev1.Pod{wtPod("ns", "a", nil, corev1.PodRunning, true, spec), wtPod("ns", "b", nil, corev1.PodRunning, true, spec)}, 2, 0, true, "2/2 pods running"},
		{"not ready blocks", []*corev1.Pod{wtPod("ns", "a", nil, corev1.PodRunning, false, spec)}, 1, 0, false, "0/1 pods running, 1 running but not ready"},
		{"finished pods allowed", []*corev1.Pod{wtPod("ns", "a", nil, corev1.PodRunning, true, spec), wtPod("ns", "b", nil, corev1.PodFailed, false, spec)}, 1, 0, true, "1/1 pods running, 1 failed"},
		{"terminating blocks", []*corev1.Pod{wtPod("ns", "a", nil, corev1.PodRunning, true, spec), terminating}, 1, 0, false, "1/1 pods running, 1 terminating"},
		{"too many", []*corev1.Pod{wtPod("ns", "a", nil, corev1.PodRunning, true, spec), wtPod("ns", "b", nil, corev1.PodRunning, true, spec)}, 1, 0, false, "2/1 pods running"},
		{"margin", []*corev1.Pod{wtPod("ns", "a", nil, corev1.PodRunning, true, spec), unscheduled}, 2, 1, true, "1/2 pods running, 1 unscheduled"},
		{"pending", []*corev1.Pod{wtPod("ns", "a", nil, corev1.PodPending, false, spec)}, 1, 0, false, "0/1 pods running, 1 pending"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tally podTally
			for _, p := range tc.pods {
				tally.add(p, nil)
			}
			if got := tally.reached(tc.desired, tc.margin); got != tc.reached {
				t.Errorf("reached = %v, want %v (%+v)", got, tc.reached, tally)
			}
			if got := tally.String(tc.desired); got != tc.text {
				t.Errorf("String = %q, want %q", got, tc.text)
			}
		})
	}
}

func TestParseWatchSelector(t *testing.T) {
	cases := []struct {
		params  Params
		wantErr string
		want    string
	}{
		{Params{}, "", `namespace=(all) labelSelector=""`},
		{Params{"labelSelector": "group = load", "namespace": "ns"}, "", `namespace=ns labelSelector="group = load"`},
		{Params{"labelSelector": "a in ("}, "param labelSelector", ""},
		{Params{"fieldSelector": "a=b=c=="}, "param fieldSelector", ""},
		{Params{"labelSelector": 5}, "param labelSelector", ""},
	}
	for _, tc := range cases {
		s, err := parseWatchSelector(tc.params)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want %q", tc.params, err, tc.wantErr)
			}
			continue
		}
		if err != nil || s.String() != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.params, s.String(), err, tc.want)
		}
	}
}

func TestWaitPollCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := waitPoll(ctx, 10*time.Millisecond, func(context.Context) (bool, error) { return false, nil })
	if err != context.DeadlineExceeded || time.Since(start) > 2*time.Second {
		t.Fatalf("waitPoll: %v after %v", err, time.Since(start))
	}
}
