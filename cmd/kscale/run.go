package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/framework/runner"
)

// addRunFlags binds the flags validate and run read the same way.
func addRunFlags(fs *pflag.FlagSet, o *runner.Options) {
	fs.StringVar(&o.TestConfig, "testconfig", "", "clusterloader2-format test config")
	fs.StringArrayVar(&o.Overrides, "testoverrides", nil, "overrides file (repeatable; a later file wins)")
	fs.IntVar(&o.Nodes, "nodes", 0, "node count of the run, the template value .Nodes (run: 0 counts the cluster's schedulable nodes)")
	fs.BoolVar(&o.SkipUnsupported, "skip-unsupported-measurements", false, "run configs naming measurement methods kscale lacks; those report 'not measured'")
	fs.BoolVar(&o.StrictTemplates, "strict-templates", false, "a template key nobody set is an error (by default it renders empty, as in clusterloader2, with a warning)")
}

func newValidateCommand() *cobra.Command {
	var o runner.Options
	cmd := &cobra.Command{
		Use:   "validate CONFIG",
		Short: "Compile a test config and print it, or every error in it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if o.TestConfig != "" && o.TestConfig != args[0] {
					return usageError{errors.New("validate: give the config as an argument or --testconfig, not both")}
				}
				o.TestConfig = args[0]
			}
			return inputErr(runner.Validate(o, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	addRunFlags(cmd.Flags(), &o)
	return cmd
}

func newRunCommand() *cobra.Command {
	var o runner.Options
	var observe, fleets []string
	var testSuite string
	cmd := &cobra.Command{
		Use:   "run (--testconfig CONFIG | --testsuite FILE) --kubeconfig FILE",
		Short: "Run a test config against the cluster the kubeconfig points at",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Kubeconfig == "" {
				o.Kubeconfig = os.Getenv("KUBECONFIG")
			}
			o.Progress = cmd.ErrOrStderr()
			for _, spec := range observe {
				c, err := runner.ParseComponent(spec)
				if err != nil {
					return usageError{err}
				}
				o.Components = append(o.Components, c)
			}
			for _, raw := range fleets {
				f, err := runner.ParseFleet(raw)
				if err != nil {
					return usageError{err}
				}
				o.Fleets = append(o.Fleets, f)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if testSuite != "" {
				return runSuite(ctx, cmd, o, testSuite)
			}
			res, err := runner.Run(ctx, o, cmd.ErrOrStderr())
			if err != nil {
				return inputErr(err)
			}
			if !runner.Summary(res, cmd.OutOrStdout()) {
				return notPassed(res)
			}
			return nil
		},
	}
	addRunFlags(cmd.Flags(), &o)
	fs := cmd.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the test cluster (default $KUBECONFIG)")
	fs.StringVar(&o.ReportDir, "report-dir", "", "folder for the generated config and reports")
	fs.StringVar(&testSuite, "testsuite", "", "clusterloader2 test suite file: a list of {identifier, configPath, overridePaths}, run one after another, each reported in a folder of its own")
	fs.BoolVar(&o.KeepNamespaces, "keep-namespaces", false, "leave the run's namespaces in place at the end")
	fs.BoolVar(&o.Force, "force", false, "start even when the cluster holds namespaces of another kscale run")
	fs.IntVar(&o.ClientsNumber, "k8s-clients-number", 0, "client connections for object writes (default one per 100 nodes)")
	fs.Float32Var(&o.QPS, "kube-api-qps", 0, "client-side QPS limit of the run's clients (default none: the tuning sets pace the load)")
	fs.IntVar(&o.Burst, "kube-api-burst", 0, "client burst")
	fs.StringVar(&o.ClusterDir, "cluster-dir", "", "local cluster folder whose processes the measurements observe (default: the kubeconfig's folder, when kscale cluster up made it)")
	fs.StringArrayVar(&fleets, "fleet", nil, "endpoint of a hollow-node fleet in the cluster, e.g. http://127.0.0.1:10269 (repeatable): its usage is reported and chaosMonkey fails its nodes")
	fs.StringArrayVar(&observe, "observe", nil, "another process whose usage ResourceUsageSummary reports, NAME=METRICS_URL (repeatable; a fleet: fleet-1=http://127.0.0.1:10269/metrics)")
	fs.StringVar(&o.PrometheusURL, "prometheus-url", "", "Prometheus server scraping the cluster, which the PromQL measurements query (default: the local cluster's own, when it runs one)")
	fs.StringVar(&o.CIJob, "ci-job", "", "CI job name recorded in the run's metadata (default: Prow's JOB_NAME or GitHub Actions' workflow/job)")
	fs.StringVar(&o.CIBuild, "ci-build", "", "CI build id recorded in the run's metadata (default: Prow's BUILD_ID or GitHub Actions' run id)")
	fs.BoolVar(&o.AllowNotMeasured, "allow-not-measured", false, "pass a run whose SLO measurements measured nothing (default: such a run is inconclusive, exit 1)")
	return cmd
}

// runSuite runs a test suite file's entries (--testsuite) in turn and
// fails, exit 1, when one did not pass.
func runSuite(ctx context.Context, cmd *cobra.Command, o runner.Options, path string) error {
	if o.TestConfig != "" || len(o.Overrides) > 0 {
		return usageError{errors.New("--testsuite names each entry's config and overrides: give it without --testconfig and --testoverrides")}
	}
	suite, err := runner.LoadTestSuite(path)
	if err != nil {
		return inputErr(err)
	}
	res, err := runner.RunSuite(ctx, o, suite, cmd.ErrOrStderr())
	var failed error
	if res != nil {
		for i, r := range res.Results {
			fmt.Fprintf(cmd.OutOrStdout(), "== test scenario %s\n", res.Scenarios[i].Identifier)
			if !runner.Summary(r, cmd.OutOrStdout()) && failed == nil {
				failed = fmt.Errorf("test scenario %s: %w", res.Scenarios[i].Identifier, notPassed(r))
			}
		}
		if err == nil && failed == nil && len(res.Results) < len(suite) {
			failed = fmt.Errorf("the suite was interrupted after %d of %d test scenarios", len(res.Results), len(suite))
		}
	}
	if err != nil {
		return inputErr(err)
	}
	return failed
}

// notPassed is the error, exit 1, of a run that did not pass: why is in
// the summary printed above it.
func notPassed(res *runner.Result) error {
	switch {
	case res.Report.Incomplete:
		return errors.New("the run was interrupted (see the summary above)")
	case res.Report.Verdict == report.RunInconclusive:
		return errors.New("the run is inconclusive: an SLO measurement measured nothing (see the verdict above)")
	case res.Report.Verdict == report.RunViolated:
		return errors.New("an SLO was violated (see the verdicts above)")
	}
	return errors.New("the run failed (see the steps above)")
}

// inputErr maps the runner's bad-input errors to exit code 2.
func inputErr(err error) error {
	var in *runner.InputError
	if errors.As(err, &in) {
		return usageError{fmt.Errorf("%w", in)}
	}
	return err
}
