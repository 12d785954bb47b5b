package measurements

import (
	"context"
	"errors"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register("JobLifecycleLatency", Informational, func(string) Measurement { return &jobLifecycleLatency{} })
}

// jobLifecycleTransitions are the reported transitions, in report order, as
// clusterloader2 names them.
var jobLifecycleTransitions = []struct {
	name     string
	from, to func(*jobTimes) time.Time
}{
	{"create_to_start", func(j *jobTimes) time.Time { return j.created }, func(j *jobTimes) time.Time { return j.started }},
	{"start_to_complete", func(j *jobTimes) time.Time { return j.started }, func(j *jobTimes) time.Time { return j.completed }},
}

// jobTimes are a Job's creation, status.startTime and status.completionTime,
// each the first seen.
type jobTimes struct {
	created, started, completed time.Time
}

// jobLifecycleLatency is JobLifecycleLatency: `start` follows the Jobs
// matching the selector; `gather` waits up to timeout for every Job seen to
// have completed (going on without the rest when it runs out, as
// clusterloader2 does) and reports create_to_start and start_to_complete
// percentiles over the Jobs that went through each.
type jobLifecycleLatency struct {
	// pollInterval overrides finishedJobsPollInterval (tests).
	pollInterval time.Duration

	mu        sync.Mutex
	sel       watchSelector
	informers *informerSet
	jobs      map[string]*jobTimes
}

func (m *jobLifecycleLatency) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, m.start(ctx, env, params)
	}
	timeout, err := params.Duration("timeout", finishedJobsDefaultTimeout)
	if err != nil {
		return nil, err
	}
	return m.gather(ctx, timeout)
}

func (m *jobLifecycleLatency) start(ctx context.Context, env *Env, params Params) error {
	sel, err := parseWatchSelector(params)
	if err != nil {
		return err
	}
	if env == nil || env.Client == nil {
		return errors.New("no client for the cluster")
	}
	m.mu.Lock()
	if m.informers != nil {
		m.mu.Unlock()
		klog.V(2).InfoS("JobLifecycleLatency already started")
		return nil
	}
	m.sel, m.jobs = sel, map[string]*jobTimes{}
	m.mu.Unlock()

	set, err := watchJobs(ctx, env, sel, cache.ResourceEventHandlerFuncs{
		AddFunc:    m.onJob,
		UpdateFunc: func(_, obj any) { m.onJob(obj) },
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.informers = set
	m.mu.Unlock()
	return nil
}

// onJob records the first creation, start and completion time seen of a
// Job; a deleted Job keeps what was recorded.
func (m *jobLifecycleLatency) onJob(obj any) {
	j, ok := obj.(*batchv1.Job)
	if !ok || !m.sel.matchesLabels(j.Labels) {
		return
	}
	key := j.Namespace + "/" + j.Name
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.jobs[key]
	if t == nil {
		t = &jobTimes{created: j.CreationTimestamp.Time}
		m.jobs[key] = t
	}
	if t.started.IsZero() && j.Status.StartTime != nil {
		t.started = j.Status.StartTime.Time
	}
	if t.completed.IsZero() && j.Status.CompletionTime != nil {
		t.completed = j.Status.CompletionTime.Time
	}
}

func (m *jobLifecycleLatency) gather(ctx context.Context, timeout time.Duration) ([]Summary, error) {
	m.mu.Lock()
	set, sel := m.informers, m.sel
	m.mu.Unlock()
	if set == nil {
		return nil, errors.New("JobLifecycleLatency was not started")
	}
	defer func() {
		set.stop()
		m.mu.Lock()
		m.informers = nil
		m.mu.Unlock()
	}()
	interval := m.pollInterval
	if interval <= 0 {
		interval = finishedJobsPollInterval
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var seen, completed int
	err := waitPoll(tctx, interval, func(context.Context) (bool, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		seen, completed = len(m.jobs), 0
		for _, t := range m.jobs {
			if !t.completed.IsZero() {
				completed++
			}
		}
		return completed == seen, nil
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		klog.InfoS("JobLifecycleLatency: not every Job completed; reporting those that did", "timeout", timeout, "jobs", seen, "completed", completed)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.jobs) == 0 {
		return nil, notMeasuredf("no Jobs matched %s", sel)
	}
	s := Summary{
		PerfData: &metrics.PerfData{Version: metrics.PhaseLatencyVersion},
		Headline: map[string]float64{"jobs": float64(len(m.jobs)), "completed": float64(completed)},
	}
	for _, tr := range jobLifecycleTransitions {
		var samples []float64
		for _, t := range m.jobs {
			from, to := tr.from(t), tr.to(t)
			if !from.IsZero() && !to.IsZero() {
				samples = append(samples, float64(to.Sub(from).Milliseconds()))
			}
		}
		if len(samples) == 0 {
			continue
		}
		pc := metrics.NearestRankPercentiles(samples)
		s.PerfData.DataItems = append(s.PerfData.DataItems, metrics.DataItem{
			Data: pc.Data(), Unit: "ms", Labels: map[string]string{"Metric": tr.name},
		})
		s.Headline[tr.name+" p99 ms"] = pc.Perc99
	}
	return []Summary{s}, nil
}
