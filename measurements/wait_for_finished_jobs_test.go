package measurements

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func wtFinishedJob(name string, c batchv1.JobConditionType) *batchv1.Job {
	j := wtJob(name, 1, 1)
	if c != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: c, Status: corev1.ConditionTrue}}
	}
	return j
}

func TestWaitForFinishedJobs(t *testing.T) {
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cases := []struct {
		name      string
		objects   []runtime.Object
		drive     func(t *testing.T, c *wtCluster)
		timeout   string
		wantErr   string
		wantOut   string
		wantFail  float64
		wantCompl float64
	}{
		{name: "all finished, one failed", objects: []runtime.Object{wtFinishedJob("j1", batchv1.JobComplete), wtFinishedJob("j2", batchv1.JobFailed)},
			wantOut: "jobs finished 2/2", wantFail: 1, wantCompl: 1},
		{name: "a job finishes while waiting", objects: []runtime.Object{wtFinishedJob("j1", "")},
			drive: func(t *testing.T, c *wtCluster) {
				time.Sleep(30 * time.Millisecond)
				if err := c.Tracker().Update(jobs, wtFinishedJob("j1", batchv1.JobComplete), "test-ns-1"); err != nil {
					t.Error(err)
				}
			}, wantCompl: 1},
		{name: "timeout names the running jobs", objects: []runtime.Object{wtFinishedJob("j1", ""), wtFinishedJob("j2", batchv1.JobComplete)},
			timeout: "200ms", wantErr: "1/2 Jobs not finished after 200ms: test-ns-1/j1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := wtNewCluster(tc.objects...)
			var out bytes.Buffer
			env := wtEnv(c, &out)
			w := &waitForFinishedJobs{pollInterval: 10 * time.Millisecond}
			if _, err := w.Execute(context.Background(), env, Params{"action": "start", "labelSelector": "group=load"}); err != nil {
				t.Fatal(err)
			}
			c.waitWatching(t, "jobs")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if tc.drive != nil {
					tc.drive(t, c)
				}
			}()
			g := Params{"action": "gather"}
			if tc.timeout != "" {
				g["timeout"] = tc.timeout
			}
			sums, err := w.Execute(context.Background(), env, g)
			<-done
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(sums) != 1 || sums[0].Headline["failed"] != tc.wantFail || sums[0].Headline["completed"] != tc.wantCompl {
				t.Fatalf("gather: %+v %v", sums, err)
			}
			if tc.wantFail > 0 && !strings.Contains(sums[0].Reason, "test-ns-1/j2") {
				t.Errorf("reason %q does not name the failed job", sums[0].Reason)
			}
			if tc.wantOut != "" && !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("progress %q, want %q", out.String(), tc.wantOut)
			}
		})
	}
}

func TestWaitForFinishedJobsParamsAndCancel(t *testing.T) {
	c := wtNewCluster(wtFinishedJob("j1", ""))
	env := wtEnv(c, nil)
	for _, tc := range []struct {
		params Params
		want   string
	}{
		{Params{"action": "run"}, "param action"},
		{Params{"action": "gather"}, "was not started"},
		{Params{"action": "start", "labelSelector": "(("}, "param labelSelector"},
		{Params{"action": "gather", "timeout": "long"}, "param timeout"},
	} {
		if _, err := (&waitForFinishedJobs{}).Execute(context.Background(), env, tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.params, err, tc.want)
		}
	}
	w := &waitForFinishedJobs{pollInterval: 10 * time.Millisecond}
	if _, err := w.Execute(context.Background(), env, Params{"action": "start"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := w.Execute(ctx, env, Params{"action": "gather"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled gather: %v", err)
	}
}
