package measurements

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var wtLabels = map[string]string{"group": "load", "app": "a"}

func wtDeployment(name string, replicas int32, image string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "test-ns-1", Name: name, Labels: map[string]string{"group": "load"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: wtSpec(image)},
		},
	}
}

// wtRunning is a running, ready pod of the named controller's template.
func wtRunning(owner, name, image string) *corev1.Pod {
	return wtPod("test-ns-1", name, map[string]string{"app": owner}, corev1.PodRunning, true, wtSpec(image))
}

func wtJob(name string, parallelism, completions int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "test-ns-1", Name: name, Labels: map[string]string{"group": "load"}},
		Spec: batchv1.JobSpec{
			Parallelism: &parallelism, Completions: &completions,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: wtSpec("img:1")},
		},
	}
}

func wtDaemonSet(name string, generation, observed int64, desired int32) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "test-ns-1", Name: name, Labels: map[string]string{"group": "load"}, Generation: generation},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: wtSpec("img:1")},
		},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: observed, DesiredNumberScheduled: desired},
	}
}

var (
	wtDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	wtPods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

func TestWaitForControlledPodsRunning(t *testing.T) {
	replicas2 := int32(2)
	cases := []struct {
		name    string
		objects []runtime.Object
		start   Params
		// before changes the cluster before gather, as a phase would;
		// drive changes it while gather waits.
		before    func(t *testing.T, c *wtCluster)
		drive     func(t *testing.T, c *wtCluster)
		wantErr   []string
		wantOut   string
		wantFile  string
		reportDir bool
	}{
		{
			name:    "pods come up while gather waits",
			objects: []runtime.Object{wtDeployment("dep-1", 3, "img:1")},
			drive: func(t *testing.T, c *wtCluster) {
				for _, n := range []string{"p1", "p2", "p3"} {
					time.Sleep(20 * time.Millisecond)
					wtCreate(t, c, wtRunning("dep-1", n, "img:1"))
				}
			},
			wantOut: "pods running 3/3, 1/1 Deployments ready  100%",
		},
		{
			name: "timeout names the controller and its pods",
			objects: []runtime.Object{wtDeployment("dep-1", 3, "img:1"), wtDeployment("dep-2", 1, "img:1"),
				wtRunning("dep-1", "p1", "img:1"), wtPod("test-ns-1", "p2", map[string]string{"app": "dep-1"}, corev1.PodPending, false, wtSpec("img:1")),
				wtRunning("dep-2", "q1", "img:1")},
			start:   Params{"operationTimeout": "300ms"},
			wantErr: []string{"1/2 Deployments did not reach their desired state", "test-ns-1/dep-1: not running after 300ms: 1/3 pods running, 1 pending"},
			wantOut: "pods running 2/4, 1 pending, 1/2 Deployments ready   50%",
		},
		{
			name:    "a deleted controller's pods go",
			objects: []runtime.Object{wtDeployment("dep-1", 2, "img:1"), wtRunning("dep-1", "p1", "img:1"), wtRunning("dep-1", "p2", "img:1")},
			before: func(t *testing.T, c *wtCluster) {
				_ = c.Tracker().Delete(wtDeployments, "test-ns-1", "dep-1")
			},
			drive: func(t *testing.T, c *wtCluster) {
				time.Sleep(30 * time.Millisecond)
				_ = c.Tracker().Delete(wtPods, "test-ns-1", "p1")
				_ = c.Tracker().Delete(wtPods, "test-ns-1", "p2")
			},
			wantOut: "pods deleted 2/2, 1/1 Deployments gone  100%",
		},
		{
			name:    "a deleted controller's pods stay",
			objects: []runtime.Object{wtDeployment("dep-1", 2, "img:1"), wtRunning("dep-1", "p1", "img:1"), wtRunning("dep-1", "p2", "img:1")},
			start:   Params{"operationTimeout": "150ms"},
			before: func(t *testing.T, c *wtCluster) {
				_ = c.Tracker().Delete(wtDeployments, "test-ns-1", "dep-1")
			},
			// Deletions get twice operationTimeout, as in clusterloader2.
			wantErr: []string{"test-ns-1/dep-1: pods not gone after 300ms: deleted, 2 pods left"},
		},
		{
			name: "failed pods are named and written",
			objects: []runtime.Object{wtDeployment("dep-1", 2, "img:1"), wtRunning("dep-1", "p1", "img:1"),
				wtPod("test-ns-1", "p2", map[string]string{"app": "dep-1"}, corev1.PodFailed, false, wtSpec("img:1"))},
			start:     Params{"operationTimeout": "200ms"},
			reportDir: true,
			wantErr:   []string{"1/2 pods running, 1 failed", "1 failed pods: test-ns-1/p2 (listed in "},
			wantFile:  "WaitForControlledPodsRunning_running_failed_pods.json",
		},
		{
			name:    "pods of an old template do not count",
			objects: []runtime.Object{wtDeployment("dep-1", 1, "img:2"), wtRunning("dep-1", "p1", "img:1")},
			start:   Params{"operationTimeout": "200ms"},
			wantErr: []string{"1/1 pods running (1 of an old template)"},
		},
		{
			name:    "checkIfPodsAreUpdated false accepts them",
			objects: []runtime.Object{wtDeployment("dep-1", 1, "img:2"), wtRunning("dep-1", "p1", "img:1")},
			start:   Params{"checkIfPodsAreUpdated": false},
		},
		{
			name: "countErrorMargin accepts one short",
			objects: []runtime.Object{wtDeployment("dep-1", 3, "img:1"), wtRunning("dep-1", "p1", "img:1"), wtRunning("dep-1", "p2", "img:1"),
				wtPod("test-ns-1", "p3", map[string]string{"app": "dep-1"}, corev1.PodPending, false, wtSpec("img:1"))},
			start: Params{"countErrorMargin": 1},
		},
		{
			name:    "scale-up during the wait is a new operation",
			objects: []runtime.Object{wtDeployment("dep-1", 1, "img:1"), wtRunning("dep-1", "p1", "img:1")},
			drive: func(t *testing.T, c *wtCluster) {
				d := wtDeployment("dep-1", 2, "img:1")
				d.Spec.Replicas = &replicas2
				if err := c.Tracker().Update(wtDeployments, d, "test-ns-1"); err != nil {
					t.Error(err)
				}
				time.Sleep(30 * time.Millisecond)
				wtCreate(t, c, wtRunning("dep-1", "p2", "img:1"))
			},
		},
		{
			name:    "Job: no more pods than completions",
			objects: []runtime.Object{wtJob("job-1", 5, 2), wtRunning("job-1", "p1", "img:1"), wtRunning("job-1", "p2", "img:1")},
			start:   Params{"apiVersion": "batch/v1", "kind": "Job"},
		},
		{
			name: "Job: finished needs no running pods",
			objects: func() []runtime.Object {
				j := wtJob("job-1", 2, 2)
				j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
				return []runtime.Object{j, wtPod("test-ns-1", "p1", map[string]string{"app": "job-1"}, corev1.PodSucceeded, false, wtSpec("img:1"))}
			}(),
			start: Params{"apiVersion": "batch/v1", "kind": "Job"},
		},
		{
			name:    "DaemonSet: the controller's desired count",
			objects: []runtime.Object{wtDaemonSet("ds-1", 1, 1, 2), wtRunning("ds-1", "p1", "img:1"), wtRunning("ds-1", "p2", "img:1")},
			start:   Params{"kind": "DaemonSet"},
		},
		{
			name:    "DaemonSet: generation not observed yet",
			objects: []runtime.Object{wtDaemonSet("ds-1", 2, 1, 2)},
			start:   Params{"kind": "DaemonSet", "operationTimeout": "100ms"},
			wantErr: []string{"test-ns-1/ds-1: not running after 100ms: the DaemonSet controller has not seen generation 2 yet"},
		},
		{
			name: "ReplicationController",
			objects: []runtime.Object{&corev1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Namespace: "test-ns-1", Name: "rc-1", Labels: map[string]string{"group": "load"}},
				Spec: corev1.ReplicationControllerSpec{Replicas: &replicas2, Selector: map[string]string{"app": "rc-1"},
					Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "rc-1"}}, Spec: wtSpec("img:1")}},
			}, wtRunning("rc-1", "p1", "img:1"), wtRunning("rc-1", "p2", "img:1")},
			start: Params{"apiVersion": "v1", "kind": "ReplicationController"},
		},
		{
			name: "controllers outside the label selector are ignored",
			objects: func() []runtime.Object {
				other := wtDeployment("other", 5, "img:1")
				other.Labels = map[string]string{"group": "else"}
				return []runtime.Object{other, wtDeployment("dep-1", 1, "img:1"), wtRunning("dep-1", "p1", "img:1")}
			}(),
			wantOut: "pods running 1/1, 1/1 Deployments ready  100%",
		},
		{
			// The first poll prints at once: one controller, counted by
			// its pods and what keeps the others from running.
			name: "the progress line counts pods",
			objects: []runtime.Object{wtDeployment("dep-1", 4, "img:1"), wtRunning("dep-1", "p1", "img:1"),
				wtPod("test-ns-1", "p2", map[string]string{"app": "dep-1"}, corev1.PodRunning, false, wtSpec("img:1")),
				wtPod("test-ns-1", "p3", map[string]string{"app": "dep-1"}, corev1.PodPending, false, wtSpec("img:1")),
				func() *corev1.Pod {
					p := wtPod("test-ns-1", "p4", map[string]string{"app": "dep-1"}, corev1.PodPending, false, wtSpec("img:1"))
					p.Spec.NodeName = ""
					return p
				}()},
			start:   Params{"operationTimeout": "200ms"},
			wantErr: []string{"1/4 pods running, 1 running but not ready, 1 pending, 1 unscheduled"},
			wantOut: "pods running 1/4, 1 running but not ready, 1 pending, 1 unscheduled, 0/1 Deployments ready   25%  0s  ETA 0s\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := wtNewCluster(tc.objects...)
			var out bytes.Buffer
			env := wtEnv(c, &out)
			if tc.reportDir {
				env.ReportDir = t.TempDir()
			}
			start := Params{"action": "start", "apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": "group=load", "operationTimeout": "5s"}
			for k, v := range tc.start {
				start[k] = v
			}
			w := &waitForControlledPods{identifier: "running", pollInterval: 10 * time.Millisecond}
			ctx := context.Background()
			if _, err := w.Execute(ctx, env, start); err != nil {
				t.Fatalf("start: %v", err)
			}
			var wg sync.WaitGroup
			c.waitWatching(t, "pods", kindResource(start))
			if tc.before != nil {
				tc.before(t, c)
			}
			if tc.drive != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tc.drive(t, c)
				}()
			}
			_, err := w.Execute(ctx, env, Params{"action": "gather", "syncTimeout": "5s"})
			wg.Wait()
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("gather: %v", err)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("gather error %v\nwant it to contain %q", err, want)
				}
			}
			if tc.wantOut != "" && !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("progress %q, want %q", out.String(), tc.wantOut)
			}
			if tc.wantFile != "" {
				body, err := os.ReadFile(filepath.Join(env.ReportDir, tc.wantFile))
				if err != nil || !strings.Contains(string(body), `"name": "p2"`) {
					t.Errorf("failed pods file: %v %s", err, body)
				}
			}
			// It keeps watching: a second gather (after a deleting phase,
			// in the density config) needs no new start; stop ends it.
			if _, err := w.Execute(ctx, env, Params{"action": "gather", "syncTimeout": "5s"}); (err == nil) != (len(tc.wantErr) == 0) {
				t.Errorf("second gather: %v", err)
			}
			if _, err := w.Execute(ctx, env, Params{"action": "stop"}); err != nil {
				t.Errorf("stop: %v", err)
			}
			if _, err := w.Execute(ctx, env, Params{"action": "gather"}); err == nil || !strings.Contains(err.Error(), "was not started") {
				t.Errorf("gather after stop: %v", err)
			}
		})
	}
}

// kindResource is the resource the case's controllers are watched as.
func kindResource(p Params) string {
	switch p["kind"] {
	case "Job":
		return "jobs"
	case "DaemonSet":
		return "daemonsets"
	case "ReplicationController":
		return "replicationcontrollers"
	}
	return "deployments"
}

func TestWaitForControlledPodsRunningParams(t *testing.T) {
	c := wtNewCluster()
	base := func(kv ...any) Params {
		p := Params{"action": "start", "apiVersion": "apps/v1", "kind": "Deployment"}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		return p
	}
	cases := []struct {
		name   string
		params Params
		want   string
	}{
		{"bad action", Params{"action": "begin"}, "param action"},
		{"unknown kind", base("kind", "CronJob"), `param kind: "CronJob"`},
		{"wrong group", base("apiVersion", "v1"), "param apiVersion: v1 is not a group of Deployment"},
		{"no apiVersion", base("apiVersion", nil), "param apiVersion: missing"},
		{"bad selector", base("labelSelector", "a in ("), "param labelSelector"},
		{"bad timeout", base("operationTimeout", "soon"), "param operationTimeout"},
		{"bad margin", base("countErrorMargin", -1), "param countErrorMargin"},
		{"bad bool", base("checkIfPodsAreUpdated", "maybe"), "param checkIfPodsAreUpdated"},
		{"gather before start", Params{"action": "gather"}, "was not started"},
		{"bad syncTimeout", Params{"action": "gather", "syncTimeout": 3}, "param syncTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &waitForControlledPods{}
			_, err := w.Execute(context.Background(), wtEnv(c, nil), tc.params)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWaitForControlledPodsRunningCancel(t *testing.T) {
	c := wtNewCluster(wtDeployment("dep-1", 3, "img:1"))
	w := &waitForControlledPods{pollInterval: 10 * time.Millisecond}
	env := wtEnv(c, nil)
	if _, err := w.Execute(context.Background(), env, Params{"action": "start", "apiVersion": "apps/v1", "kind": "Deployment", "operationTimeout": "1h"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := w.Execute(ctx, env, Params{"action": "gather"})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 3*time.Second {
		t.Fatalf("gather: %v after %v", err, time.Since(start))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running || w.informers != nil {
		t.Fatal("informers still running after a cancelled gather")
	}
}

func TestWaitForControlledPodsRunningStartCancelled(t *testing.T) {
	c := wtNewCluster()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := &waitForControlledPods{}
	_, err := w.Execute(ctx, wtEnv(c, nil), Params{"action": "start", "apiVersion": "apps/v1", "kind": "Deployment"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("start with a cancelled context: %v", err)
	}
}
