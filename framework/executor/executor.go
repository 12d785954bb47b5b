package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/tuningset"
)

// MeasurementCall is one measurement entry instance as a step runs it.
type MeasurementCall struct {
	Method     string
	Identifier string
	Params     map[string]any
}

// Measurements runs measurement calls by method name; the measurements
// package provides the real one. A returned error fails the call.
type Measurements interface {
	Run(ctx context.Context, call MeasurementCall) error
}

// Options configure a run.
type Options struct {
	// RunID labels everything the run creates (RunLabel).
	RunID string
	// Client is used for namespaces; Dynamic for the objects of phases
	// (several, used round robin, to spread load over connections).
	Client  kubernetes.Interface
	Dynamic []dynamic.Interface
	Mapper  meta.RESTMapper
	// Measurements runs the measurement steps; nil fails them.
	Measurements Measurements
	// KeepNamespaces leaves the run's namespaces in place at the end.
	KeepNamespaces bool
	// Backoff overrides the retry backoff of object writes (tests).
	Backoff *wait.Backoff
	// NodeFailer carries out the config's chaosMonkey.nodeFailure; a config
	// with one needs it.
	NodeFailer NodeFailer
}

// Result is what a run did, step by step.
type Result struct {
	Steps []StepResult
	// CleanupError is set when the run's namespaces could not be removed.
	CleanupError error
	// Interrupted: the run's context ended before every step ran, or a
	// step was never run (a Ginkgo run interrupted between specs).
	Interrupted bool
}

// StepResult is one step's outcome.
type StepResult struct {
	Index    int
	Name     string
	Duration time.Duration
	// Errors are every failure of the step's phases or measurements.
	Errors []error
	// Measurements lists the outcome of each measurement call of the step.
	Measurements []MeasurementResult
	// Skipped: an earlier critical error or a cancellation stopped the run
	// before this step.
	Skipped bool
}

// MeasurementResult is the outcome of one measurement call.
type MeasurementResult struct {
	MeasurementCall
	Err error
	// NotMeasured says why the call measured nothing, when it could not
	// (an unsupported method the user chose to skip); it is not a failure
	// but appears in every report.
	NotMeasured string
}

// NotMeasuredError is returned by a measurement that could not measure for
// a reason the user accepted beforehand.
type NotMeasuredError struct{ Reason string }

func (e *NotMeasuredError) Error() string { return "not measured: " + e.Reason }

// Failed reports whether any step failed or was skipped.
func (r *Result) Failed() bool {
	for _, s := range r.Steps {
		if len(s.Errors) > 0 || s.Skipped {
			return true
		}
	}
	return false
}

// CriticalError stops the remaining steps: the run cannot mean anything
// after it (its namespaces are missing, a template cannot be rendered, a
// kind is unknown to the cluster).
type CriticalError struct{ Err error }

func (e *CriticalError) Error() string { return "critical: " + e.Err.Error() }
func (e *CriticalError) Unwrap() error { return e.Err }

func critical(err error) error { return &CriticalError{Err: err} }

// Executor runs one compiled config.
type Executor struct {
	compiled   *config.Compiled
	opts       Options
	tuningSets *tuningset.Registry
	state      *replicaState
	namespaces *namespaces
	objects    []*objectClient
	next       int
	// versions is the API version the templates use for each kind, for
	// deleting objects without rendering them again.
	versions map[schema.GroupKind]string
	mu       sync.Mutex

	// The run in progress, between Begin and Finish.
	setupErr    error
	stopped     bool
	interrupted bool
	stopChaos   func()
	results     []*StepResult
}

// New prepares a run of compiled with opts.
func New(compiled *config.Compiled, opts Options) (*Executor, error) {
	if opts.RunID == "" {
		return nil, errors.New("executor: a run id is required")
	}
	if opts.Client == nil || len(opts.Dynamic) == 0 || opts.Mapper == nil {
		return nil, errors.New("executor: a client, at least one dynamic client and a REST mapper are required")
	}
	ts, err := tuningset.NewRegistry(compiled.Config.TuningSets)
	if err != nil {
		return nil, err
	}
	cfg := compiled.Config
	if cfg.ChaosMonkey.NodeFailure != nil && opts.NodeFailer == nil {
		return nil, ErrNoNodeFailer
	}
	e := &Executor{
		compiled:   compiled,
		opts:       opts,
		tuningSets: ts,
		state:      newReplicaState(),
		versions:   map[schema.GroupKind]string{},
		namespaces: &namespaces{client: opts.Client, runID: opts.RunID, prefix: cfg.Namespace.Prefix, number: cfg.Namespace.Number},
	}
	backoff := defaultBackoff
	if opts.Backoff != nil {
		backoff = *opts.Backoff
	}
	for _, d := range opts.Dynamic {
		e.objects = append(e.objects, &objectClient{dynamic: d, mapper: opts.Mapper, runID: opts.RunID, backoff: backoff})
	}
	return e, nil
}

// objectClient returns the next client, round robin.
func (e *Executor) objectClient() *objectClient {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.objects[e.next%len(e.objects)]
	e.next++
	return c
}

// Run sets up the namespaces, runs the steps in order and cleans up. When
// ctx ends, no new action starts, actions in flight finish, the remaining
// steps are skipped, and cleanup still runs.
func (e *Executor) Run(ctx context.Context) *Result {
	e.Begin(ctx)
	for i := range e.compiled.Config.Steps {
		e.Step(ctx, i)
	}
	return e.Finish(ctx)
}

// Begin sets up the run's namespaces and starts the chaos monkey, so that
// Step can run the steps one at a time (a Ginkgo spec each). ctx is the
// run's context: the chaos monkey lives until it ends or Finish.
func (e *Executor) Begin(ctx context.Context) {
	e.setupErr = e.setUp(ctx)
	e.stopped = e.setupErr != nil
	e.stopChaos = func() {}
	if e.compiled.Config.ChaosMonkey.NodeFailure != nil && !e.stopped {
		e.stopChaos = e.startChaosMonkey(ctx)
	}
	e.results = make([]*StepResult, len(e.compiled.Config.Steps))
}

// Step runs step i, after Begin and the steps before it. A step after a
// critical error, or once ctx has ended, is skipped; ending ctx during a
// step lets its actions in flight finish and skips the rest.
func (e *Executor) Step(ctx context.Context, i int) StepResult {
	step := e.compiled.Config.Steps[i]
	sr := &StepResult{Index: i, Name: step.Name}
	e.results[i] = sr
	if e.stopped || ctx.Err() != nil {
		sr.Skipped = true
		e.interrupted = e.interrupted || ctx.Err() != nil
		if i == 0 && e.setupErr != nil {
			sr.Errors = append(sr.Errors, e.setupErr)
		}
		return *sr
	}
	start := time.Now()
	klog.InfoS("Step", "index", i, "name", step.Name)
	e.runStep(ctx, step, sr)
	sr.Duration = time.Since(start)
	e.interrupted = e.interrupted || ctx.Err() != nil
	for _, err := range sr.Errors {
		var c *CriticalError
		if errors.As(err, &c) {
			e.stopped = true
		}
	}
	return *sr
}

// Finish stops the chaos monkey (its nodes recovered), deletes what the
// run created and returns every step's result; steps Step never ran are
// skipped, and the run is Interrupted. Cleanup outlives a cancelled ctx,
// bounded by the config's namespace deletion timeout.
func (e *Executor) Finish(ctx context.Context) *Result {
	res := &Result{Interrupted: e.interrupted}
	for i, step := range e.compiled.Config.Steps {
		sr := e.results[i]
		if sr == nil {
			sr = &StepResult{Index: i, Name: step.Name, Skipped: true}
			res.Interrupted = true
		}
		res.Steps = append(res.Steps, *sr)
	}
	e.stopChaos()
	cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.compiled.Config.Namespace.DeleteNamespaceTimeout.Std()+time.Minute)
	defer cancel()
	res.CleanupError = e.cleanUp(cleanupCtx)
	return res
}

func (e *Executor) setUp(ctx context.Context) error {
	ns := e.compiled.Config.Namespace
	if ns.DeleteStaleNamespaces != nil && *ns.DeleteStaleNamespaces {
		if err := e.namespaces.deleteStale(ctx); err != nil {
			return critical(err)
		}
	}
	useExisting := ns.EnableExistingNamespaces != nil && *ns.EnableExistingNamespaces
	if err := e.namespaces.create(ctx, useExisting); err != nil {
		return critical(err)
	}
	return nil
}

func (e *Executor) cleanUp(ctx context.Context) error {
	ns := e.compiled.Config.Namespace
	if e.opts.KeepNamespaces || (ns.DeleteAutomanagedNamespaces != nil && !*ns.DeleteAutomanagedNamespaces) {
		klog.InfoS("Keeping the run's namespaces", "selector", RunLabel+"="+e.opts.RunID)
		return nil
	}
	// Objects outside the run's namespaces (cluster-scoped ones, or in
	// namespaces of a namespaceList) do not go with them: delete them one
	// by one, newest first.
	var errs []error
	for _, s := range e.state.streams() {
		if s.Namespace != "" && e.namespaces.owns(s.Namespace) {
			continue
		}
		for i := e.state.get(s) - 1; i >= 0; i-- {
			if err := e.objectClient().deleteByName(ctx, s, e.versions[schema.GroupKind{Group: s.Group, Kind: s.Kind}], fmt.Sprintf("%s-%d", s.Basename, i)); err != nil {
				errs = append(errs, err)
			}
		}
		e.state.set(s, 0)
	}
	if err := e.namespaces.deleteOwn(ctx, ns.DeleteNamespaceTimeout.Std()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// runStep runs the step's phases, or its measurements, all in parallel.
func (e *Executor) runStep(ctx context.Context, step config.Step, sr *StepResult) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		sr.Errors = append(sr.Errors, err)
	}
	for i, phase := range step.Phases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, err := range e.runPhase(ctx, phase) {
				fail(fmt.Errorf("phase %d: %w", i, err))
			}
		}()
	}
	calls := MeasurementCalls(step.Measurements)
	sr.Measurements = make([]MeasurementResult, len(calls))
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := e.runMeasurement(ctx, call)
			var notMeasured *NotMeasuredError
			if errors.As(err, &notMeasured) {
				sr.Measurements[i] = MeasurementResult{MeasurementCall: call, NotMeasured: notMeasured.Reason}
				return
			}
			sr.Measurements[i] = MeasurementResult{MeasurementCall: call, Err: err}
			if err != nil {
				fail(fmt.Errorf("%s (%s): %w", call.Identifier, call.Method, err))
			}
		}()
	}
	wg.Wait()
}

func (e *Executor) runMeasurement(ctx context.Context, call MeasurementCall) error {
	if e.opts.Measurements == nil {
		return fmt.Errorf("no measurement runner for method %s", call.Method)
	}
	return e.opts.Measurements.Run(ctx, call)
}

// MeasurementCalls flattens entries with instances into one call per
// instance, instance params over the shared ones.
func MeasurementCalls(entries []config.Measurement) []MeasurementCall {
	var out []MeasurementCall
	for _, m := range entries {
		if len(m.Instances) == 0 {
			out = append(out, MeasurementCall{Method: m.Method, Identifier: m.Identifier, Params: m.Params})
			continue
		}
		for _, in := range m.Instances {
			params := map[string]any{}
			for k, v := range m.Params {
				params[k] = v
			}
			for k, v := range in.Params {
				params[k] = v
			}
			out = append(out, MeasurementCall{Method: m.Method, Identifier: in.Identifier, Params: params})
		}
	}
	return out
}
