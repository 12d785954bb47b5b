package suite

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // the Ginkgo DSL
	. "github.com/onsi/gomega"    //nolint:revive

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kscale/kscale/framework/binaries"
	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/executor"
	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/framework/runner"
	"github.com/kscale/kscale/framework/runplan"
	"github.com/kscale/kscale/measurements"

	// The providers a suite can name (local is imported above).
	_ "github.com/kscale/kscale/framework/provider/existing"
)

// Suite is one suite: its name, its default config and its labels.
type Suite struct {
	// Name names the suite, its Ginkgo container and its report folder.
	Name string
	// Config is the default --testconfig, relative to the module root.
	Config string
	// Labels go on the suite's container (--label-filter=density).
	Labels []string
}

// plan is what the flags and the config say a run will be, settled before
// Ginkgo builds the spec tree: the tree has a spec per step.
type plan struct {
	suite    Suite
	provider provider.Options
	// reportDir is the suite's report folder.
	reportDir string
	// scenarios run one after another on the one provisioned cluster:
	// the --testconfig, or each --testsuite entry.
	scenarios []*scenario
	// testSuite: the scenarios are --testsuite entries, each in a Ginkgo
	// container and a report folder of its own.
	testSuite bool
}

// scenario is one config's run: its options and the config compiled for
// the planned nodes.
type scenario struct {
	identifier string
	options    runner.Options
	compiled   *config.Compiled
}

var current *plan

// Prepare is the first thing a suite's TestX does, before RunSpecs: it
// checks the flags and compiles the config (exit 2 on bad input, before
// anything starts), so that Define can build a spec per step.
func Prepare(s Suite) {
	p, err := newPlan(s, flags)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
		os.Exit(2)
	}
	current = p
	exitOnSecondInterrupt()
	RegisterFailHandler(Fail)
}

func newPlan(s Suite, f *Flags) (*plan, error) {
	root, err := binaries.ModuleRoot()
	if err != nil {
		return nil, err
	}
	if f.ReportDir == "" {
		f.ReportDir = filepath.Join(root, "results", s.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if f.ReportDir, err = filepath.Abs(f.ReportDir); err != nil {
		return nil, fmt.Errorf("--report-dir: %w", err)
	}
	if f.PodsPerNode < 0 {
		return nil, fmt.Errorf("--pods-per-node=%d: must be 0 or more", f.PodsPerNode)
	}
	if f.MaxPods <= 0 {
		return nil, fmt.Errorf("--max-pods=%d: must be above 0", f.MaxPods)
	}
	po := provider.Options{
		Nodes: f.Nodes, Kubeconfig: f.Kubeconfig, RootKubeconfig: f.RootKubeconfig, Hollow: f.Hollow,
		NodesPerFleet: f.NodesPerFleet, MaxPods: f.MaxPods, HollowArgs: f.HollowArgs, Dir: f.ReportDir,
		KeepCluster: f.KeepCluster, Progress: os.Stderr, ControllerManagerQPS: f.ControllerManagerQPS, Prometheus: f.Prometheus,
	}
	if f.PodStartDelay != "" {
		if f.Hollow != provider.HollowFleet {
			return nil, fmt.Errorf("--pod-start-delay: only fleet hollow nodes take it (--hollow=%s)", f.Hollow)
		}
		po.HollowArgs = append(po.HollowArgs, "--pod-start-delay="+f.PodStartDelay)
	}
	// The provider checks its options now, so bad flags stop the suite
	// before any spec; the one it makes here is used by the specs.
	if _, err := provider.New(f.Provider, po); err != nil {
		return nil, err
	}
	if f.TestSuite != "" && (f.TestConfig != "" || len(f.Overrides) > 0) {
		return nil, errors.New("--testsuite names each entry's config and overrides: give it without --testconfig and --testoverrides")
	}
	if f.TestConfig == "" {
		f.TestConfig = filepath.Join(root, s.Config)
	}
	o := runner.Options{
		TestConfig: f.TestConfig, Overrides: f.Overrides, Nodes: f.Nodes, SkipUnsupported: f.SkipUnsupported,
		StrictTemplates: f.StrictTemplates,
		ReportDir:       f.ReportDir, ClientsNumber: f.ClientsNumber, PrometheusURL: f.PrometheusURL,
		Provider: f.Provider, Force: f.Force, Progress: os.Stderr, AllowNotMeasured: f.AllowNotMeasured,
		CIJob: f.CIJob, CIBuild: f.CIBuild,
	}
	// sizing are the overrides the suite puts before (machine size) or
	// after (--pods-per-node) each config's own.
	var before, after []string
	sizing := local.SizeFor(runtime.NumCPU())
	if f.ControllerManagerQPS != 0 {
		sizing.ControllerManagerQPS = f.ControllerManagerQPS
	}
	if f.PodsPerNode > 0 {
		path, err := podsPerNodeOverride(f.ReportDir, f.PodsPerNode, "--pods-per-node of the suite")
		if err != nil {
			return nil, err
		}
		after = append(after, path)
	} else if f.Provider == "local" {
		// The machine's size comes first: the user's overrides win.
		fmt.Fprintln(os.Stderr, sizing)
		path, err := podsPerNodeOverride(f.ReportDir, sizing.PodsPerNode, "pods per node of a local run sized to the machine")
		if err != nil {
			return nil, err
		}
		before = append(before, path)
	}
	if o.Nodes == 0 {
		// Sized for the nodes the cluster has (existing provider): the
		// spec tree needs the config's steps, so count them now.
		if o.Nodes, err = countNodes(f.Kubeconfig); err != nil {
			return nil, err
		}
		if o.Nodes == 0 {
			return nil, errors.New("--nodes=0: the cluster has no schedulable node to size the run for")
		}
		po.Nodes = o.Nodes
	}
	p := &plan{suite: s, provider: po, reportDir: f.ReportDir, testSuite: f.TestSuite != ""}
	entries := []runner.Scenario{{ConfigPath: f.TestConfig, OverridePaths: f.Overrides}}
	if p.testSuite {
		if entries, err = runner.LoadTestSuite(f.TestSuite); err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		so := o
		if p.testSuite {
			so = runner.ScenarioOptions(o, e)
		}
		so.Overrides = append(append(append([]string(nil), before...), so.Overrides...), after...)
		compiled, err := runner.Compile(so)
		if err != nil {
			if p.testSuite {
				return nil, fmt.Errorf("test scenario %s: %w", e.Identifier, err)
			}
			return nil, err
		}
		p.scenarios = append(p.scenarios, &scenario{identifier: e.Identifier, options: so, compiled: compiled})
	}
	return p, checkPlan(p, f, sizing)
}

// checkPlan prints each scenario's plan and refuses, before anything
// starts, a local run the machine cannot hold and a run longer than the
// deadline Ginkgo (--timeout) or go test (-timeout) gives it.
func checkPlan(p *plan, f *Flags, sizing local.Sizing) error {
	var total time.Duration
	for _, sc := range p.scenarios {
		rp := runplan.Make(runplan.Input{Config: sc.compiled, Provider: f.Provider, Hollow: p.provider.Hollow,
			Nodes: sc.options.Nodes, NodesPerFleet: f.NodesPerFleet, Sizing: sizing})
		rp.Print(os.Stderr, false)
		if rp.LocalRefusal != nil && !f.BeyondMachine {
			return fmt.Errorf("--nodes=%d: %w", sc.options.Nodes, rp.LocalRefusal)
		}
		total += rp.Estimate.Total()
	}
	d, flag := deadline()
	return runplan.CheckDeadline(total, d, flag)
}

// deadline is the shorter of Ginkgo's --timeout and go test's -timeout,
// and the flag that sets it; 0 when neither bounds the run.
func deadline() (time.Duration, string) {
	suiteConfig, _ := GinkgoConfiguration()
	d, name := suiteConfig.Timeout, "--timeout"
	if fl := flag.Lookup("test.timeout"); fl != nil {
		if t, err := time.ParseDuration(fl.Value.String()); err == nil && t > 0 && (d <= 0 || t < d) {
			d, name = t, "-timeout (go test)"
		}
	}
	return d, name
}

// podsPerNodeOverride writes --pods-per-node as an overrides file in the
// report folder, applied after the user's (the later file wins).
func podsPerNodeOverride(dir string, pods int, why string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--report-dir: %w", err)
	}
	path := filepath.Join(dir, "overrides_pods-per-node.yaml")
	body := "# " + why + "\nPODS_PER_NODE: " + strconv.Itoa(pods) + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		return "", fmt.Errorf("writing the --pods-per-node override: %w", err)
	}
	return path, nil
}

func countNodes(kubeconfig string) (int, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return runner.SchedulableNodes(ctx, cfg)
}

// Define builds the suite's specs from the plan Prepare settled: a
// BeforeAll that provisions the cluster and starts the run, a spec per
// step, a spec per gathered measurement, and cleanups that finish the run
// (reports) and tear the cluster down, also after a failure or an
// interrupt. With --testsuite each entry is a container of its own whose
// BeforeAll starts its run on the one cluster.
func Define(s Suite) bool {
	return Describe(s.Name, Ordered, ContinueOnFailure, Label(s.Labels...), func() {
		p := current
		if p == nil || p.suite.Name != s.Name {
			panic("suite.Define(" + s.Name + ") needs suite.Prepare(the same Suite) before RunSpecs")
		}
		c := &cluster{plan: p}
		if !p.testSuite {
			r := &run{cluster: c, scenario: p.scenarios[0]}
			BeforeAll(func(ctx SpecContext) {
				c.provision(ctx)
				r.start(ctx)
			}, NodeTimeout(2*time.Hour))
			r.specs()
			return
		}
		BeforeAll(c.provision, NodeTimeout(2*time.Hour))
		for _, sc := range p.scenarios {
			r := &run{cluster: c, scenario: sc}
			Describe(sc.identifier, Ordered, func() {
				BeforeAll(r.start, NodeTimeout(2*time.Hour))
				r.specs()
			})
		}
	})
}

// specs are the run's specs: one per step, one per gathered measurement.
func (r *run) specs() {
	for i, step := range r.compiled.Config.Steps {
		It(report.StepName(i, step.Name), Label("step"), func(ctx SpecContext) { r.step(ctx, i) }, NodeTimeout(flags.StepTimeout))
	}
	for _, g := range gathers(r.compiled.Config) {
		It("[measurement] "+g.Method+"_"+g.Identifier, Label("measurement", "slo"), func() { r.verdict(g) })
	}
}

// gathers are the measurement calls that produce verdicts: those with
// action gather, in config order, one per identifier.
func gathers(c *config.Config) []executor.MeasurementCall {
	var out []executor.MeasurementCall
	seen := map[[2]string]bool{}
	for _, st := range c.Steps {
		for _, call := range executor.MeasurementCalls(st.Measurements) {
			action, _ := measurements.Params(call.Params).String("action", "")
			key := [2]string{call.Method, call.Identifier}
			if action == "gather" && !seen[key] {
				seen[key] = true
				out = append(out, call)
			}
		}
	}
	return out
}

// cluster is the provisioned cluster the suite's runs share, from the
// first BeforeAll to the teardown.
type cluster struct {
	*plan
	prov provider.Provider
	info *provider.Cluster
	// names and reports are the finished runs of a --testsuite, in order.
	names   []string
	reports []*report.Run
}

func (c *cluster) provision(ctx SpecContext) {
	var err error
	o := c.scenarios[0].options
	c.prov, err = provider.New(o.Provider, c.provider)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.prov.Teardown(ctx)).To(Succeed(), "tearing down the %s provider", o.Provider)
	}, NodeTimeout(5*time.Minute))
	By(fmt.Sprintf("provisioning %d nodes (%s provider, %s hollow nodes)", o.Nodes, o.Provider, c.provider.Hollow))
	c.info, err = c.prov.Provision(ctx)
	Expect(err).NotTo(HaveOccurred(), "provisioning")
	if c.testSuite {
		// Runs before the teardown: cleanups run last-registered first.
		DeferCleanup(func() {
			if len(c.reports) == 0 {
				return
			}
			_, err := report.WriteJUnitSuites(c.reportDir, c.names, c.reports)
			Expect(err).NotTo(HaveOccurred(), "writing the test suite's junit.xml")
		})
	}
}

// run is one config's run on the suite's cluster, from its BeforeAll to
// its last cleanup.
type run struct {
	*cluster
	*scenario
	session *runner.Session
	// steps are the results of the steps run so far.
	steps []executor.StepResult
	// failedUnmeasured: a measurement's spec failed for an SLO left
	// unmeasured, so the inconclusive run has failed the suite already.
	failedUnmeasured bool
}

func (r *run) start(ctx SpecContext) {
	Expect(r.info).NotTo(BeNil(), "the cluster was not provisioned")
	if r.testSuite {
		By(fmt.Sprintf("test scenario %s: %s", r.identifier, r.options.TestConfig))
	}
	o := r.options
	cl := r.info
	o.Kubeconfig, o.ClusterDir, o.Nodes, o.Fleets = cl.Kubeconfig, cl.ClusterDir, cl.Nodes, cl.Fleets
	o.Hollow, o.NodesReady, o.ProvisionSeconds, o.HollowRestarts = cl.Hollow, cl.NodesReady, cl.ProvisionSeconds, cl.HollowRestarts
	// The run's context is not the spec's: what a step starts lives on to
	// later steps; Session.Step ends it when a step's spec is interrupted.
	var err error
	r.session, err = runner.Start(context.WithoutCancel(ctx), o, os.Stderr)
	Expect(err).NotTo(HaveOccurred(), "starting the run")
	Expect(r.session.Steps()).To(HaveLen(len(r.compiled.Config.Steps)),
		"the config compiled for %d nodes has other steps than for the %d planned", o.Nodes, r.options.Nodes)
	DeferCleanup(r.finish, NodeTimeout(30*time.Minute))
}

func (r *run) step(ctx SpecContext, i int) {
	Expect(r.session).NotTo(BeNil(), "the run did not start")
	sr := r.session.Step(ctx, i)
	r.steps = append(r.steps, sr)
	if sr.Skipped {
		Fail("not run: " + skipReason(sr))
	}
	var msgs []string
	for _, err := range sr.Errors {
		msgs = append(msgs, err.Error())
	}
	for _, m := range sr.Measurements {
		if m.NotMeasured != "" {
			AddReportEntry(m.Identifier+" not measured", m.NotMeasured)
		}
	}
	Expect(msgs).To(BeEmpty(), "step %q failed", sr.Name)
}

func skipReason(sr executor.StepResult) string {
	if len(sr.Errors) > 0 {
		return sr.Errors[0].Error()
	}
	return "the run was interrupted or stopped by an earlier critical error"
}

// verdict fails the measurement's spec unless its summaries pass (see
// summaryFailure); one that could not measure and judges no SLO, or whose
// being unmeasured was accepted, passes with a report entry saying why.
// Methods that summarise nothing (the waits) are judged by their gather
// calls.
func (r *run) verdict(call executor.MeasurementCall) {
	Expect(r.session).NotTo(BeNil(), "the run did not start")
	found := false
	for _, s := range r.session.Summaries() {
		if s.Method != call.Method || s.Identifier != call.Identifier {
			continue
		}
		found = true
		if msg := summaryFailure(s, r.options.AllowNotMeasured); msg != "" {
			r.failedUnmeasured = r.failedUnmeasured || s.Verdict == measurements.NotMeasured
			Fail(msg)
		}
		if s.Verdict == measurements.NotMeasured {
			AddReportEntry(s.FileName()+" not measured", s.Reason)
		}
	}
	if found {
		return
	}
	ran := false
	for _, sr := range r.steps {
		for _, m := range sr.Measurements {
			if m.Method != call.Method || m.Identifier != call.Identifier {
				continue
			}
			if action, _ := measurements.Params(m.Params).String("action", ""); action != "gather" {
				continue
			}
			ran = true
			if m.Err != nil {
				Fail(fmt.Sprintf("%s_%s: %v", call.Method, call.Identifier, m.Err))
			}
			if m.NotMeasured != "" {
				AddReportEntry(call.Method+"_"+call.Identifier+" not measured", m.NotMeasured)
			}
		}
	}
	if !ran {
		Fail(call.Method + "_" + call.Identifier + ": its gather step did not run")
	}
}

// summaryFailure is why a summary fails its measurement's spec, or "" when
// it does not: a violation (with the saturated host beside it), a failed
// measurement, or an SLO left unmeasured that neither the entry nor the
// run accepted, which makes the run inconclusive.
func summaryFailure(s measurements.Summary, allowNotMeasured bool) string {
	switch {
	case s.Verdict == measurements.Violated:
		msg := fmt.Sprintf("%s violated: %s", s.FileName(), strings.Join(s.Violations, "; "))
		if s.HostSaturated != "" {
			msg += " (" + s.HostSaturated + ")"
		}
		return msg
	case s.Verdict == measurements.Failed:
		return fmt.Sprintf("%s failed: %s", s.FileName(), s.Reason)
	case s.UnmeasuredSLO() && !allowNotMeasured:
		return fmt.Sprintf("%s not measured: %s; an SLO left unmeasured makes the run inconclusive (%s)", s.FileName(), s.Reason, report.AcceptHint)
	}
	return ""
}

// finish ends the run whatever happened before: cleanup, the verdict, and
// every report of what was measured (incomplete after an interrupt).
func (r *run) finish(ctx SpecContext) {
	res, err := r.session.Finish(ctx)
	Expect(err).NotTo(HaveOccurred(), "finishing the run")
	path := filepath.Join(r.options.ReportDir, report.HTMLFile)
	// Long waits print progress on stderr and the verdicts on stdout
	// whatever Ginkgo's verbosity: a nightly job's log shows them.
	fmt.Fprintln(os.Stdout)
	runner.Summary(res, os.Stdout)
	name := r.suite.Name
	if r.testSuite {
		name += "/" + r.identifier
		r.names, r.reports = append(r.names, r.identifier), append(r.reports, res.Report)
	}
	fmt.Fprintf(os.Stdout, "\n%s: verdict %s%s — report %s\n", name, strings.ToUpper(string(res.Report.Verdict)),
		incomplete(res.Report), path)
	if res.CleanupError != nil {
		Fail("cleanup: " + res.CleanupError.Error())
	}
	// An SLO left unmeasured by a call no spec judges (an unsupported
	// method named only in a start) still fails the suite.
	if res.Report.Verdict == report.RunInconclusive && !r.failedUnmeasured {
		Fail("inconclusive: " + res.Report.InconclusiveReason())
	}
}

func incomplete(r *report.Run) string {
	if r.Incomplete {
		return " (incomplete: interrupted)"
	}
	return ""
}

// exitOnSecondInterrupt makes a second Ctrl-C end the suite at once:
// Ginkgo's first interrupt drains and cleans up, which can take a while.
// The local cluster and hollow nodes die with the process. The watcher
// lives as long as the suite's process.
func exitOnSecondInterrupt() {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		<-ch
		fmt.Fprintln(os.Stderr, "second interrupt: exiting without cleanup")
		os.Exit(1)
	}()
}
