package suite

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/provider/kubemark"
)

// Flags are the suite flags given after `--`.
type Flags struct {
	Nodes          int
	Provider       string
	Kubeconfig     string
	RootKubeconfig string
	TestConfig     string
	// TestSuite is a clusterloader2 test suite file; it replaces
	// TestConfig and Overrides.
	TestSuite     string
	Overrides     stringList
	ReportDir     string
	Hollow        string
	NodesPerFleet int
	PodsPerNode   int
	// ControllerManagerQPS is the local control plane's controller-manager
	// client QPS; 0 sizes it to the machine.
	ControllerManagerQPS int
	// Prometheus runs a Prometheus server with the local control plane.
	Prometheus      bool
	MaxPods         int
	PodStartDelay   string
	HollowArgs      stringList
	KeepCluster     bool
	SkipUnsupported bool
	StrictTemplates bool
	// AllowNotMeasured passes a run whose SLO measurements measured
	// nothing, which is otherwise inconclusive and fails.
	AllowNotMeasured bool
	Force            bool
	// BeyondMachine runs a local size the machine cannot hold.
	BeyondMachine bool
	PrometheusURL string
	ClientsNumber int
	StepTimeout   time.Duration
	// CIJob and CIBuild name the run's CI job and build in its metadata.
	CIJob, CIBuild string
}

// flags are bound once, in init, as go test parses them before any test.
var flags = bindFlags(flag.CommandLine)

// FlagSet returns a new FlagSet holding the suites' flags, for checking a
// suite command line without running it.
func FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	bindFlags(fs)
	return fs
}

func bindFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.IntVar(&f.Nodes, "nodes", 100, "node count of the run (existing provider: 0 = every schedulable node)")
	fs.StringVar(&f.Provider, "provider", "local", "where the cluster comes from: local (a control plane and hollow nodes here), kubemark, existing")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "test cluster kubeconfig (kubemark, existing; default $KUBECONFIG)")
	fs.StringVar(&f.RootKubeconfig, "root-kubeconfig", "", "kubemark provider: the cluster the hollow-node pods run in")
	fs.StringVar(&f.TestConfig, "testconfig", "", "clusterloader2-format test config (default: the suite's own)")
	fs.Var(&f.Overrides, "testoverrides", "overrides file (repeatable; a later file wins)")
	fs.StringVar(&f.TestSuite, "testsuite", "", "clusterloader2 test suite file: each entry's config runs with its own overrides on the one cluster, in its own report folder")
	fs.StringVar(&f.ReportDir, "report-dir", "", "report folder (default results/<suite>-<time>/)")
	fs.StringVar(&f.Hollow, "hollow", provider.HollowFleet, "kind of hollow node: fleet (many per process) or kubelet (the real kubelet, one process per node)")
	fs.IntVar(&f.NodesPerFleet, "nodes-per-fleet", 1000, "hollow nodes per fleet process")
	fs.IntVar(&f.PodsPerNode, "pods-per-node", 0, "the config's PODS_PER_NODE (0: the overrides' value, else on the local provider sized to the machine, else the config's)")
	fs.BoolVar(&f.Prometheus, "prometheus", false, "local provider: also run a Prometheus server (the prometheus program on PATH) scraping the control plane and the fleets")
	fs.IntVar(&f.ControllerManagerQPS, "controller-manager-qps", 0, "local provider: the controller-manager's client QPS and burst (0: sized to the machine, 100 from 5 cores)")
	fs.IntVar(&f.MaxPods, "max-pods", 110, "pod capacity of each hollow node")
	fs.StringVar(&f.PodStartDelay, "pod-start-delay", "", "fleet: time from admission to Running (2s, uniform:1s-3s, normal:2s,500ms, exp:2s)")
	fs.Var(&f.HollowArgs, "hollow-arg", "extra kubemark flag for every hollow node (repeatable)")
	fs.BoolVar(&f.KeepCluster, "keep-cluster", false, "local provider: leave the control plane running after the suite")
	fs.BoolVar(&f.SkipUnsupported, "skip-unsupported-measurements", false, "run configs naming measurement methods kscale lacks; those report 'not measured'")
	fs.BoolVar(&f.StrictTemplates, "strict-templates", false, "a template key nobody set is an error (by default it renders empty, as in clusterloader2, with a warning)")
	fs.BoolVar(&f.AllowNotMeasured, "allow-not-measured", false, "pass a run whose SLO measurements measured nothing (default: such a run is inconclusive and fails)")
	fs.BoolVar(&f.Force, "force", false, "start even when the cluster holds namespaces of another kscale run")
	fs.BoolVar(&f.BeyondMachine, "beyond-machine", false, "local provider: run a size this machine cannot hold (its verdicts then measure the machine)")
	fs.StringVar(&f.PrometheusURL, "prometheus-url", "", "Prometheus server scraping the cluster, which the PromQL measurements query (default: the local cluster's own, when it runs one)")
	fs.IntVar(&f.ClientsNumber, "k8s-clients-number", 0, "client connections for object writes (default one per 100 nodes)")
	fs.DurationVar(&f.StepTimeout, "step-timeout", 2*time.Hour, "longest one step may take")
	fs.StringVar(&f.CIJob, "ci-job", "", "CI job name recorded in the run's metadata (default: Prow's JOB_NAME or GitHub Actions' workflow/job)")
	fs.StringVar(&f.CIBuild, "ci-build", "", "CI build id recorded in the run's metadata (default: Prow's BUILD_ID or GitHub Actions' run id)")
	// The kubemark provider's own flags (--kubemark-image, tolerations, ...).
	kubemark.CommandLine.AddFlags(fs)
	return f
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
