package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/executor"
	"github.com/kscale/kscale/measurements"
)

// Options are the flags of a run, read the same way by validate and run.
type Options struct {
	TestConfig      string
	Overrides       []string
	Nodes           int
	SkipUnsupported bool
	// Run only:
	Kubeconfig     string
	ReportDir      string
	KeepNamespaces bool
	// ClientsNumber is the number of client connections for object writes;
	// 0 means one per 100 nodes.
	ClientsNumber int
	QPS           float32
	Burst         int
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
	for _, u := range c.Unsupported {
		fmt.Fprintf(warn, "not measured (unsupported method, --skip-unsupported-measurements): %s %v at %s\n", u.Method, u.Identifiers, u.Where.File+":"+fmt.Sprint(u.Where.Line))
	}
}

// Run compiles the config, runs it against the cluster of o.Kubeconfig,
// and saves the generated config in the report folder. The result says
// whether every step succeeded; an error means the run could not start.
func Run(ctx context.Context, o Options, warn io.Writer) (*executor.Result, error) {
	if o.Kubeconfig == "" {
		return nil, &InputError{errors.New("--kubeconfig is required (or KUBECONFIG)")}
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, &InputError{fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)}
	}
	if o.QPS != 0 {
		restCfg.QPS, restCfg.Burst = o.QPS, o.Burst
	}
	if o.Nodes == 0 {
		// As clusterloader2 does: the test is sized for the nodes there are.
		if o.Nodes, err = schedulableNodes(ctx, restCfg); err != nil {
			return nil, err
		}
		klog.InfoS("Counted the cluster's schedulable nodes", "nodes", o.Nodes)
	}
	c, err := Compile(o)
	if err != nil {
		return nil, err
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
	if o.ReportDir != "" {
		if err := os.MkdirAll(o.ReportDir, 0o755); err != nil {
			return nil, &InputError{fmt.Errorf("--report-dir: %w", err)}
		}
		path := filepath.Join(o.ReportDir, "generatedConfig_"+c.Config.Name+".yaml")
		if err := os.WriteFile(path, c.YAML, 0o644); err != nil {
			return nil, fmt.Errorf("saving the generated config: %w", err)
		}
	}
	runID := newRunID()
	klog.InfoS("Starting the run", "config", c.Config.Name, "run", runID, "namespaces", c.Config.Namespace.Number)
	unsupported := map[string]bool{}
	for _, u := range c.Unsupported {
		unsupported[u.Method] = true
	}
	e, err := executor.New(c, executor.Options{
		RunID: runID, Client: client, Dynamic: dyns, Mapper: mapper, KeepNamespaces: o.KeepNamespaces,
		Measurements: &measurementRunner{manager: measurements.NewManager(), unsupported: unsupported},
	})
	if err != nil {
		return nil, err
	}
	return e.Run(ctx), nil
}

// measurementRunner runs calls through the measurements registry; skipped
// unsupported methods are "not measured".
type measurementRunner struct {
	manager     *measurements.Manager
	unsupported map[string]bool
}

func (m *measurementRunner) Run(ctx context.Context, call executor.MeasurementCall) error {
	if m.unsupported[call.Method] {
		return &executor.NotMeasuredError{Reason: "method " + call.Method + " is not supported by kscale (skipped by --skip-unsupported-measurements)"}
	}
	return m.manager.Execute(ctx, call.Method, call.Identifier, call.Params)
}

// schedulableNodes counts the nodes pods can be scheduled on: not
// cordoned and without a NoSchedule or NoExecute taint.
func schedulableNodes(ctx context.Context, cfg *rest.Config) (int, error) {
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

// Summary writes one line per step and per measurement to out, and returns
// whether the run succeeded.
func Summary(res *executor.Result, out io.Writer) bool {
	for _, s := range res.Steps {
		status := "ok"
		switch {
		case s.Skipped:
			status = "skipped"
		case len(s.Errors) > 0:
			status = "FAILED"
		}
		fmt.Fprintf(out, "[step %02d] %-50s %-8s %s\n", s.Index+1, s.Name, status, s.Duration.Round(time.Millisecond))
		for _, m := range s.Measurements {
			switch {
			case m.NotMeasured != "":
				fmt.Fprintf(out, "          %s (%s): not measured: %s\n", m.Identifier, m.Method, m.NotMeasured)
			case m.Err != nil:
				fmt.Fprintf(out, "          %s (%s): %v\n", m.Identifier, m.Method, m.Err)
			}
		}
		for _, err := range s.Errors {
			fmt.Fprintf(out, "          error: %v\n", err)
		}
	}
	if res.CleanupError != nil {
		fmt.Fprintf(out, "cleanup: %v\n", res.CleanupError)
	}
	return !res.Failed() && res.CleanupError == nil
}
