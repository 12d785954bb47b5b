package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/runner"
	"github.com/kscale/kscale/framework/runplan"
)

func newPlanCommand() *cobra.Command {
	var (
		in          runplan.Input
		testConfig  string
		overrides   []string
		podsPerNode int
		cmQPS       int
		timeout     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "plan --nodes N [--provider local|kubemark|existing]",
		Short: "Print a run's plan: its duration, the control plane's size, whether this machine holds it, the root cluster each layout needs",
		Long: `Print what a suite run would be, without starting anything: the config's
parameters at that size, the control plane's pace, whether the local provider
holds it on this machine (and why not), what the kubemark provider's
hollow-node pods ask of a root cluster in each layout (pods, CPU and memory
requested, root machines of 16 cores and 32 GiB), and the estimated duration,
step by step, with the Ginkgo --timeout that covers it. The suites print the
same plan at their start. Exit 2 when --timeout is shorter than the run, or
the local provider cannot hold it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in.Nodes <= 0 {
				return usageError{fmt.Errorf("--nodes=%d: must be above 0", in.Nodes)}
			}
			switch in.Provider {
			case "local", "kubemark", "existing":
			default:
				return usageError{fmt.Errorf("--provider=%s: allowed values are local, kubemark, existing", in.Provider)}
			}
			if in.Hollow != provider.HollowFleet && in.Hollow != provider.HollowKubelet {
				return usageError{fmt.Errorf("--hollow=%s: allowed values are fleet, kubelet", in.Hollow)}
			}
			in.Sizing = local.SizeFor(runtime.NumCPU())
			if cmQPS > 0 {
				in.Sizing.ControllerManagerQPS = cmQPS
			}
			// The suites' own overrides: the machine's size first (the
			// user's files win), --pods-per-node last.
			dir, err := os.MkdirTemp("", "kscale-plan-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			all := overrides
			if podsPerNode > 0 {
				all = append(append([]string(nil), overrides...), writeOverride(dir, "pods-per-node", podsPerNode))
			} else if in.Provider == "local" {
				all = append([]string{writeOverride(dir, "sizing", in.Sizing.PodsPerNode)}, overrides...)
			}
			compiled, err := runner.Compile(runner.Options{TestConfig: testConfig, Overrides: all, Nodes: in.Nodes})
			if err != nil {
				return usageError{err}
			}
			in.Config = compiled
			p := runplan.Make(in)
			p.Print(cmd.OutOrStdout(), true)
			if p.LocalRefusal != nil {
				return usageError{fmt.Errorf("--nodes=%d: %w", in.Nodes, p.LocalRefusal)}
			}
			if err := p.CheckDeadline(timeout, "--timeout"); err != nil {
				return usageError{err}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&in.Nodes, "nodes", 0, "node count of the run (required)")
	fs.StringVar(&in.Provider, "provider", "local", "local, kubemark or existing")
	fs.StringVar(&in.Hollow, "hollow", provider.HollowFleet, "kind of hollow node: fleet or kubelet")
	fs.IntVar(&in.NodesPerFleet, "nodes-per-fleet", provider.DefaultNodesPerFleet, "hollow nodes per fleet pod or process")
	fs.StringVar(&testConfig, "testconfig", filepath.Join("configs", "density", "config.yaml"), "clusterloader2-format test config")
	fs.StringArrayVar(&overrides, "testoverrides", nil, "overrides file (repeatable; a later file wins)")
	fs.IntVar(&podsPerNode, "pods-per-node", 0, "the config's PODS_PER_NODE (0: the overrides', else on the local provider sized to the machine)")
	fs.IntVar(&cmQPS, "controller-manager-qps", 0, "local provider: the controller-manager's QPS (0: sized to the machine)")
	fs.DurationVar(&timeout, "timeout", 0, "the deadline the run would have (Ginkgo's --timeout); exit 2 when the run is longer")
	return cmd
}

func writeOverride(dir, name string, podsPerNode int) string {
	path := filepath.Join(dir, name+".yaml")
	_ = os.WriteFile(path, []byte("PODS_PER_NODE: "+strconv.Itoa(podsPerNode)+"\n"), 0o644)
	return path
}
