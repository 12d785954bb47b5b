package measurements

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func init() {
	Register("WaitForFinishedJobs", Informational, func(string) Measurement { return &waitForFinishedJobs{} })
}

const (
	// clusterloader2's default gather timeout for WaitForFinishedJobs.
	finishedJobsDefaultTimeout = 10 * time.Minute
	finishedJobsPollInterval   = time.Second
)

// waitForFinishedJobs is WaitForFinishedJobs: `start` follows the Jobs
// matching the selector with an informer; `gather` waits until every Job
// that exists then is Complete or Failed, and names those that are not
// after timeout. Failed Jobs do not fail the wait, as in clusterloader2;
// the summary counts and names them.
type waitForFinishedJobs struct {
	// pollInterval overrides finishedJobsPollInterval (tests).
	pollInterval time.Duration

	mu        sync.Mutex
	sel       watchSelector
	informers *informerSet
	// finished is each finished Job's condition by key.
	finished map[string]batchv1.JobConditionType
}

func (w *waitForFinishedJobs) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, w.start(ctx, env, params)
	}
	timeout, err := params.Duration("timeout", finishedJobsDefaultTimeout)
	if err != nil {
		return nil, err
	}
	return w.gather(ctx, env, timeout)
}

func (w *waitForFinishedJobs) start(ctx context.Context, env *Env, params Params) error {
	sel, err := parseWatchSelector(params)
	if err != nil {
		return err
	}
	if env == nil || env.Client == nil {
		return fmt.Errorf("no client for the cluster")
	}
	w.mu.Lock()
	if w.informers != nil {
		w.mu.Unlock()
		klog.V(2).InfoS("WaitForFinishedJobs already started")
		return nil
	}
	w.sel, w.finished = sel, map[string]batchv1.JobConditionType{}
	w.mu.Unlock()

	set, err := watchJobs(ctx, env, sel, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onJob(obj, false) },
		UpdateFunc: func(_, obj any) { w.onJob(obj, false) },
		DeleteFunc: func(obj any) { w.onJob(obj, true) },
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.informers = set
	w.mu.Unlock()
	return nil
}

// watchJobs starts an informer on the Jobs sel selects, with handlers.
func watchJobs(ctx context.Context, env *Env, sel watchSelector, handlers cache.ResourceEventHandler) (*informerSet, error) {
	jobs := env.Client.BatchV1().Jobs(sel.Namespace)
	inf := cache.NewSharedIndexInformer(newSelectedListWatch(env.Client, sel,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return jobs.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return jobs.Watch(ctx, o) }),
		&batchv1.Job{}, 0, cache.Indexers{})
	_ = inf.SetTransform(informerDropManagedFields)
	if _, err := inf.AddEventHandler(handlers); err != nil {
		return nil, err
	}
	set, err := startInformerSet(ctx, "Job", inf)
	if err != nil {
		return nil, fmt.Errorf("starting to watch Jobs (%s): %w", sel, err)
	}
	return set, nil
}

func (w *waitForFinishedJobs) onJob(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	key := j.Namespace + "/" + j.Name
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := wfJobFinished(j); c != "" && !deleted {
		w.finished[key] = c
	} else {
		delete(w.finished, key)
	}
}

func (w *waitForFinishedJobs) gather(ctx context.Context, env *Env, timeout time.Duration) ([]Summary, error) {
	w.mu.Lock()
	set, sel := w.informers, w.sel
	w.mu.Unlock()
	if set == nil {
		return nil, fmt.Errorf("WaitForFinishedJobs was not started")
	}
	defer func() {
		set.stop()
		w.mu.Lock()
		w.informers = nil
		w.mu.Unlock()
	}()
	// The Jobs to wait for are those that exist when gather begins, as
	// listed now, not as the informer may still be catching up.
	list, err := env.Client.BatchV1().Jobs(sel.Namespace).List(ctx, sel.listOptions())
	if err != nil {
		return nil, fmt.Errorf("listing Jobs (%s): %w", sel, err)
	}
	var keys []string
	for i := range list.Items {
		if sel.matchesLabels(list.Items[i].Labels) {
			keys = append(keys, list.Items[i].Namespace+"/"+list.Items[i].Name)
		}
	}
	interval := w.pollInterval
	if interval <= 0 {
		interval = finishedJobsPollInterval
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	progress := env.progress("jobs finished", len(keys))
	var pending []string
	completed, failed := 0, []string{}
	err = waitPoll(tctx, interval, func(context.Context) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		pending, completed, failed = pending[:0], 0, failed[:0]
		for _, k := range keys {
			switch w.finished[k] {
			case batchv1.JobComplete:
				completed++
			case batchv1.JobFailed:
				failed = append(failed, k)
			default:
				pending = append(pending, k)
			}
		}
		progress.Update(len(keys) - len(pending))
		return len(pending) == 0, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%d/%d Jobs not finished after %v: %s", len(pending), len(keys), timeout, waitFirstN(pending, 20))
		}
		return nil, err
	}
	klog.V(2).InfoS("WaitForFinishedJobs done", "jobs", len(keys), "completed", completed, "failed", len(failed))
	s := Summary{Headline: map[string]float64{"completed": float64(completed), "failed": float64(len(failed))}}
	if len(failed) > 0 {
		s.Reason = "failed Jobs: " + waitFirstN(failed, 20)
	}
	return []Summary{s}, nil
}
