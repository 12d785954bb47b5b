package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"k8s.io/utils/clock"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/executor"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
	"github.com/kscale/kscale/measurements/procstat"
)

// Options are the flags of a run, read the same way by validate and run.
type Options struct {
	TestConfig      string
	Overrides       []string
	Nodes           int
	SkipUnsupported bool
	// StrictTemplates makes a template key nobody set an error instead of
	// a warning (config.Options.StrictTemplates).
	StrictTemplates bool
	// Run only:
	Kubeconfig     string
	ReportDir      string
	KeepNamespaces bool
	// ClientsNumber is the number of client connections for object writes;
	// 0 means one per 100 nodes.
	ClientsNumber int
	QPS           float32
	Burst         int
	// ClusterDir is the local cluster's folder, whose processes the
	// measurements read (metrics, CPU and memory); empty means the
	// kubeconfig's folder when it holds a kscale cluster.
	ClusterDir string
	// PrometheusURL is a Prometheus server that scrapes the cluster, which
	// the PromQL measurements query; empty means the local cluster's own
	// when it runs one (kscale cluster up --prometheus).
	PrometheusURL string
	// Components are more processes to observe.
	Components []measurements.Component
	// Fleets are the endpoints of the hollow-node fleets in the cluster:
	// their usage is reported and the config's chaosMonkey fails their
	// nodes.
	Fleets []string
	// Progress receives the progress lines of long waits; nil is quiet.
	Progress io.Writer
	// Provider names how the cluster was provisioned, for the report
	// (local, kubemark, existing); empty for a cluster given as is.
	Provider string
	// Hollow, NodesReady and ProvisionSeconds are what the provider
	// started and how long it took, for the report.
	Hollow           *report.Hollow
	NodesReady       []metrics.Point
	ProvisionSeconds float64
	// HollowRestarts tells the hollow-node restarts seen so far; nil when
	// the provider does not watch for them.
	HollowRestarts func() []report.HollowRestart
	// Force starts the run even when namespaces of another kscale run are
	// in the cluster.
	Force bool
	// AllowNotMeasured lets a run whose SLO measurements measured nothing
	// pass rather than be inconclusive (--allow-not-measured).
	AllowNotMeasured bool
	// CIJob and CIBuild name the CI job and build of the run in its
	// metadata; empty, the CI's own variables (Prow, GitHub Actions) do.
	CIJob, CIBuild string
}

// Result is what a run did and measured.
type Result struct {
	*executor.Result
	// Summaries are every measurement's summaries with their verdicts,
	// "not measured" ones included.
	Summaries []measurements.Summary
	// Report is the run as summary.json tells it, with the run's verdict.
	Report *report.Run
	// Files are the report files written.
	Files []string
}

// InputError is bad input: a config or flag the run cannot start with.
// The CLI exits 2 for it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Compile compiles the config with the run's flags; every config error
// comes back as an InputError.
func Compile(o Options) (*config.Compiled, error) {
	if o.TestConfig == "" {
		return nil, &InputError{errors.New("--testconfig is required")}
	}
	if o.Nodes < 0 {
		return nil, &InputError{fmt.Errorf("--nodes: must be 0 or more, got %d", o.Nodes)}
	}
	c, err := config.Compile(o.TestConfig, config.Options{
		Overrides: o.Overrides, Nodes: o.Nodes,
		KnownMethods: measurements.Known(), SkipUnsupported: o.SkipUnsupported,
		StrictTemplates: o.StrictTemplates,
	})
	if err != nil {
		return nil, &InputError{err}
	}
	return c, nil
}

// Validate compiles the config and writes the generated config to out, and
// the measurements that would not be measured to warn.
func Validate(o Options, out, warn io.Writer) error {
	c, err := Compile(o)
	if err != nil {
		return err
	}
	reportUnsupported(c, warn)
	_, err = out.Write(c.YAML)
	return err
}

func reportUnsupported(c *config.Compiled, warn io.Writer) {
	for _, w := range c.Warnings() {
		fmt.Fprintf(warn, "warning: %v\n", w)
	}
	for _, d := range c.SkippedDependencies {
		fmt.Fprintf(warn, "skipped dependency (unsupported method, --skip-unsupported-measurements): %s %v at %s:%d: the run goes without what it sets up\n", d.Method, d.Identifiers, d.Where.File, d.Where.Line)
	}
	for _, u := range c.Unsupported {
		fmt.Fprintf(warn, "not measured (unsupported method, --skip-unsupported-measurements): %s %v at %s\n", u.Method, u.Identifiers, u.Where.File+":"+fmt.Sprint(u.Where.Line))
	}
	if len(c.Unsupported) > 0 {
		fmt.Fprintf(warn, "  kscale cannot tell what a skipped method would have judged: each counts as an SLO left unmeasured, and the run is inconclusive (%s)\n", report.AcceptHint)
	}
}

// Run compiles the config, runs it against the cluster of o.Kubeconfig,
// and saves the generated config in the report folder. The result says
// whether every step succeeded; an error means the run could not start.
func Run(ctx context.Context, o Options, warn io.Writer) (*Result, error) {
	s, err := Start(ctx, o, warn)
	if err != nil {
		return nil, err
	}
	for i := range s.Steps() {
		s.Step(ctx, i)
	}
	return s.Finish(ctx)
}

// Session is a run in progress, its steps run one at a time: how a suite
// gives each step a spec of its own. Start → Step for each step in order
// → Finish.
type Session struct {
	o        Options
	compiled *config.Compiled
	restCfg  *rest.Config
	client   kubernetes.Interface
	manager  *measurements.Manager
	executor *executor.Executor
	started  time.Time
	// runCtx outlives the specs of a suite: measurements started in one
	// step keep watching until their gather in a later one.
	runCtx    context.Context
	cancelRun context.CancelFunc
	// host samples this machine's CPU when the cluster runs here; nil
	// otherwise.
	host *hostSampler
}

// Start compiles the config, connects to the cluster, saves the generated
// config and creates the run's namespaces. ctx is the run's context: what
// the steps start (informers, pollers, the chaos monkey) lives until it
// ends or Finish.
func Start(ctx context.Context, o Options, warn io.Writer) (*Session, error) {
	if o.Kubeconfig == "" {
		return nil, &InputError{errors.New("--kubeconfig is required (or KUBECONFIG)")}
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, &InputError{fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)}
	}
	// The tuning sets pace the load; client-go's default limit (5/s) would
	// pace it instead (a Parallel delete of 500 objects: 100 s).
	restCfg.QPS, restCfg.Burst = -1, 0
	if o.QPS > 0 {
		restCfg.QPS, restCfg.Burst = o.QPS, max(o.Burst, 1)
	}
	if o.Nodes == 0 {
		// As clusterloader2 does: the test is sized for the nodes there are.
		if o.Nodes, err = SchedulableNodes(ctx, restCfg); err != nil {
			return nil, err
		}
		klog.InfoS("Counted the cluster's schedulable nodes", "nodes", o.Nodes)
	}
	c, err := Compile(o)
	if err != nil {
		return nil, err
	}
	if c.Config.ChaosMonkey.NodeFailure != nil && len(o.Fleets) == 0 {
		return nil, &InputError{fmt.Errorf("%s: %w", o.TestConfig, executor.ErrNoNodeFailer)}
	}
	reportUnsupported(c, warn)
	clients := o.ClientsNumber
	if clients <= 0 {
		clients = max(1, o.Nodes/100)
	}
	client, dyns, mapper, err := executor.Clients(restCfg, clients)
	if err != nil {
		return nil, err
	}
	if !o.Force {
		if err := refuseRunning(ctx, client); err != nil {
			return nil, err
		}
	}
	if o.ReportDir != "" {
		if err := os.MkdirAll(o.ReportDir, 0o755); err != nil {
			return nil, &InputError{fmt.Errorf("--report-dir: %w", err)}
		}
		path := filepath.Join(o.ReportDir, "generatedConfig_"+c.Config.Name+".yaml")
		if err := os.WriteFile(path, c.YAML, 0o644); err != nil {
			return nil, fmt.Errorf("saving the generated config: %w", err)
		}
	}
	components, clusterDir, clusterProm, err := localComponents(o.ClusterDir, o.Kubeconfig, restCfg)
	if err != nil {
		return nil, err
	}
	if o.PrometheusURL == "" {
		o.PrometheusURL = clusterProm
	}
	runID := newRunID()
	klog.InfoS("Starting the run", "config", c.Config.Name, "run", runID, "namespaces", c.Config.Namespace.Number)
	env := newEnv(o, restCfg, client, components, c.Config.Name, o.Nodes,
		c.Config.Namespace.Prefix, c.Config.Namespace.Number, executor.RunLabel+"="+runID)
	if clusterDir != "" {
		env.RestartComponent = restarter(clusterDir)
	}
	manager := measurements.NewManager(env)
	unsupported := map[string]bool{}
	for _, u := range c.Unsupported {
		unsupported[u.Method] = true
	}
	opts := executor.Options{
		RunID: runID, Client: client, Dynamic: dyns, Mapper: mapper, KeepNamespaces: o.KeepNamespaces,
		Measurements: &measurementRunner{manager: manager, unsupported: unsupported},
	}
	if len(o.Fleets) > 0 {
		opts.NodeFailer = newFleetFailer(o.Fleets)
	}
	e, err := executor.New(c, opts)
	if err != nil {
		return nil, err
	}
	s := &Session{o: o, compiled: c, restCfg: restCfg, client: client, manager: manager, executor: e, started: time.Now()}
	s.runCtx, s.cancelRun = context.WithCancel(ctx)
	if runsLocally(env.Components) {
		s.host = newHostSampler(procstat.ReadMachine, clock.RealClock{})
		s.host.start(s.runCtx, hostSampleInterval)
	}
	e.Begin(s.runCtx)
	return s, nil
}

// Compiled is the config the session runs.
func (s *Session) Compiled() *config.Compiled { return s.compiled }

// Steps are the config's steps, in order.
func (s *Session) Steps() []config.Step { return s.compiled.Config.Steps }

// Step runs step i. Ending ctx (a suite's interrupted spec) ends the
// run's context too: actions in flight finish, later steps are skipped.
func (s *Session) Step(ctx context.Context, i int) executor.StepResult {
	stop := context.AfterFunc(ctx, s.cancelRun)
	defer stop()
	return s.executor.Step(s.runCtx, i)
}

// Summaries are the measurement summaries recorded so far, violations
// noted when the host was saturated over them.
func (s *Session) Summaries() []measurements.Summary {
	return annotateSaturation(s.manager.Summaries(), s.host.Samples())
}

// Finish cleans up what the run created, judges it and writes the reports;
// a run interrupted before its last step is reported incomplete.
func (s *Session) Finish(ctx context.Context) (*Result, error) {
	defer s.cancelRun()
	exec := s.executor.Finish(ctx)
	s.manager.Dispose()
	s.host.stop()
	res := &Result{Result: exec, Summaries: s.Summaries()}
	res.Report = newRunReport(s.o, s.compiled, s.restCfg, s.client, s.started, res)
	res.Report.Incomplete = exec.Interrupted || s.runCtx.Err() != nil
	if s.o.ReportDir != "" {
		var err error
		if res.Files, err = writeReports(s.o.ReportDir, res.Report, res.Summaries, s.started); err != nil {
			return res, fmt.Errorf("writing the reports: %w", err)
		}
	}
	return res, nil
}

// refuseRunning stops a run from starting on a cluster where namespaces of
// another kscale run exist: two tests at once measure each other. Force
// overrides it (a run that crashed left its namespaces).
func refuseRunning(ctx context.Context, client kubernetes.Interface) error {
	list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: executor.RunLabel})
	if err != nil {
		return fmt.Errorf("looking for namespaces of other kscale runs: %w", err)
	}
	var names []string
	for _, ns := range list.Items {
		if ns.DeletionTimestamp == nil {
			names = append(names, ns.Name+" (run "+ns.Labels[executor.RunLabel]+")")
		}
	}
	if len(names) > 0 {
		return &InputError{fmt.Errorf("the cluster holds namespaces of another kscale run: %s; wait for it to end, or pass --force if it is gone", strings.Join(names, ", "))}
	}
	return nil
}

// FailIfNotMeasuredParam is the measurement param that turns "not measured"
// into a failed step: for configs whose verdict means nothing without that
// measurement (a release gate on API latency, say). Set to false, it
// accepts the measurement being not measured (measurements.FailIfNotMeasuredParam).
const FailIfNotMeasuredParam = measurements.FailIfNotMeasuredParam

// measurementRunner runs calls through the measurements registry. Skipped
// unsupported methods, and measurements that could not measure, are "not
// measured": in every report, and a failed step when the entry sets
// failIfNotMeasured: true. What they mean to the run's verdict is the
// report's to judge (report.Run.Judge).
type measurementRunner struct {
	manager     *measurements.Manager
	unsupported map[string]bool
}

func (m *measurementRunner) Run(ctx context.Context, call executor.MeasurementCall) error {
	var nm *measurements.NotMeasuredError
	if m.unsupported[call.Method] {
		nm = &measurements.NotMeasuredError{Reason: "method " + call.Method + " is not supported by kscale (skipped by --skip-unsupported-measurements)"}
		if err := m.manager.RecordUnsupported(call.Method, call.Identifier, call.Params, nm.Reason); err != nil {
			return err
		}
	} else if err := m.manager.Execute(ctx, call.Method, call.Identifier, call.Params); !errors.As(err, &nm) {
		return err
	}
	// The manager refused a bad value already.
	if required, _, _ := measurements.FailIfNotMeasured(call.Params); required {
		return fmt.Errorf("%w (the entry sets %s)", nm, FailIfNotMeasuredParam)
	}
	return &executor.NotMeasuredError{Reason: nm.Reason}
}

// SchedulableNodes counts the nodes pods can be scheduled on: not
// cordoned and without a NoSchedule or NoExecute taint.
func SchedulableNodes(ctx context.Context, cfg *rest.Config) (int, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("counting the cluster's nodes: %w", err)
	}
	n := 0
	for _, node := range list.Items {
		if node.Spec.Unschedulable {
			continue
		}
		tainted := false
		for _, t := range node.Spec.Taints {
			if t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute {
				tainted = true
			}
		}
		if !tainted {
			n++
		}
	}
	return n, nil
}

// newRunID is a short random id with the time: unique per run, readable in
// labels.
func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// Summary writes one line per step and per measurement to out, then each
// summary's verdict (a violation's saturated host beside it), then the
// run's verdict with why when inconclusive, and returns whether the run
// passed: an inconclusive run did not.
func Summary(res *Result, out io.Writer) bool {
	for _, s := range res.Steps {
		status := "ok"
		switch {
		case s.Skipped:
			status = "skipped"
		case len(s.Errors) > 0:
			status = "FAILED"
		}
		fmt.Fprintf(out, "%-60s %-8s %s\n", report.StepName(s.Index, s.Name), status, s.Duration.Round(time.Millisecond))
		for _, m := range s.Measurements {
			switch {
			case m.NotMeasured != "":
				fmt.Fprintf(out, "          %s (%s): not measured: %s\n", m.Identifier, m.Method, m.NotMeasured)
			case m.Err != nil:
				fmt.Fprintf(out, "          %s (%s): %v\n", m.Identifier, m.Method, m.Err)
			}
		}
	nextError:
		for _, err := range s.Errors {
			for _, m := range s.Measurements {
				if m.Err != nil && errors.Is(err, m.Err) {
					continue nextError // printed with its measurement above
				}
			}
			fmt.Fprintf(out, "          error: %v\n", err)
		}
	}
	if res.CleanupError != nil {
		fmt.Fprintf(out, "cleanup: %v\n", res.CleanupError)
	}
	for _, sum := range res.Summaries {
		line := fmt.Sprintf("%-50s %s", sum.FileName(), strings.ToUpper(string(sum.Verdict)))
		if sum.Reason != "" {
			line += ": " + sum.Reason
		}
		fmt.Fprintln(out, line)
		for _, v := range sum.Violations {
			fmt.Fprintf(out, "    %s\n", v)
		}
		if sum.Verdict == measurements.Violated && sum.HostSaturated != "" {
			fmt.Fprintf(out, "    %s\n", sum.HostSaturated)
		}
	}
	r := res.Report
	verdict := strings.ToUpper(string(r.Verdict))
	if reason := r.InconclusiveReason(); r.Verdict == report.RunInconclusive && reason != "" {
		verdict += ": " + reason
	}
	if r.Incomplete {
		verdict += " (incomplete: the run was interrupted)"
	}
	fmt.Fprintf(out, "verdict: %s\n", verdict)
	if r.Verdict == report.RunInconclusive {
		fmt.Fprintf(out, "    an SLO left unmeasured makes the run inconclusive; %s\n", report.AcceptHint)
	}
	if accepted := r.AcceptedUnmeasured(); len(accepted) > 0 {
		names := make([]string, len(accepted))
		for i, m := range accepted {
			names[i] = m.Name
		}
		fmt.Fprintf(out, "    not measured, accepted by --allow-not-measured: %s\n", strings.Join(names, ", "))
	}
	return r.Verdict == report.RunPass && !r.Incomplete
}
