package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/components"
)

func defaultClusterDir() string {
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".kscale", "cluster")
	}
	return ".kscale-cluster"
}

func newClusterCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run a local control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler",
	}
	var dir string
	cmd.PersistentFlags().StringVar(&dir, "dir", defaultClusterDir(), "cluster folder: certificates, kubeconfigs, logs, etcd data")
	cmd.AddCommand(
		newClusterUpCommand(&dir),
		newClusterDownCommand(&dir),
		newClusterStatusCommand(&dir),
		newClusterRestartCommand(&dir),
		newClusterKubeconfigCommand(&dir),
		newClusterNodeCommand(&dir),
		newClusterSuperviseCommand(&dir),
		&cobra.Command{
			Use:    "component NAME -- FLAGS",
			Short:  "Run one control-plane component (used by the supervisor)",
			Hidden: true,
			// main() runs components before cobra sees the command line;
			// this entry only documents the command.
			RunE: func(*cobra.Command, []string) error {
				return usageError{fmt.Errorf("usage: kscale cluster component NAME -- FLAGS, NAME one of %v", components.Names())}
			},
		},
	)
	return cmd
}

// signalContext is cancelled by SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

func newClusterUpCommand(dir *string) *cobra.Command {
	o := controlplane.DefaultOptions()
	var foreground bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local cluster and wait until it is ready",
		Long: `Start etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
127.0.0.1 under a supervisor process, and return once the apiserver's /readyz is
ok and the controller-manager and scheduler hold their leader leases. Prints the
path of the admin kubeconfig on stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if foreground {
				d, err := controlplane.Prepare(*dir, &o)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "kubeconfig: %s (Ctrl-C stops the cluster)\n", d.AdminKubeconfig())
				return superviseHere(d.Path())
			}
			binary, err := os.Executable()
			if err != nil {
				return err
			}
			ctx, cancel := signalContext()
			defer cancel()
			state, err := controlplane.Up(ctx, *dir, o, binary, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			d, _ := clusterdir.Open(*dir)
			fmt.Fprintf(cmd.ErrOrStderr(), "cluster ready in %.1fs: %s\n", state.ReadyAt.Sub(state.StartedAt).Seconds(), state.APIServerURL)
			fmt.Fprintln(cmd.OutOrStdout(), d.AdminKubeconfig())
			return nil
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&foreground, "foreground", false, "run the supervisor in this process until Ctrl-C instead of in the background")
	addOptionFlags(fs, &o)
	return cmd
}

func addOptionFlags(fs *pflag.FlagSet, o *controlplane.Options) {
	fs.IntVar(&o.APIServerPort, "apiserver-port", o.APIServerPort, "kube-apiserver secure port on --apiserver-address; 0 picks a free port")
	fs.StringVar(&o.APIServerAddress, "apiserver-address", o.APIServerAddress, "the address kube-apiserver binds, advertises and its kubeconfigs name: 127.0.0.1, or an address of this machine the hollow-node pods of a root node reach (its bridge's)")
	fs.IntVar(&o.EtcdPort, "etcd-port", o.EtcdPort, "etcd client port; 0 picks a free port")
	fs.IntVar(&o.EtcdPeerPort, "etcd-peer-port", o.EtcdPeerPort, "etcd peer port; 0 picks a free port")
	fs.IntVar(&o.ControllerManagerPort, "controller-manager-port", o.ControllerManagerPort, "kube-controller-manager secure port; 0 picks a free port")
	fs.IntVar(&o.SchedulerPort, "scheduler-port", o.SchedulerPort, "kube-scheduler secure port; 0 picks a free port")
	fs.BoolVar(&o.EtcdUnsafeNoFsync, "etcd-unsafe-no-fsync", o.EtcdUnsafeNoFsync, "disable etcd fsync: faster, loses data if the machine crashes")
	fs.BoolVar(&o.Prometheus, "prometheus", o.Prometheus, "also run a Prometheus server (the prometheus program on PATH) scraping the control plane and the fleets every "+controlplane.PrometheusScrapeInterval.String())
	fs.IntVar(&o.PrometheusPort, "prometheus-port", o.PrometheusPort, "with --prometheus: its port on 127.0.0.1; 0 picks a free port")
	fs.IntVar(&o.MaxRequestsInflight, "max-requests-inflight", o.MaxRequestsInflight, "kube-apiserver --max-requests-inflight")
	fs.IntVar(&o.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInflight, "kube-apiserver --max-mutating-requests-inflight")
	fs.Float32Var(&o.ControllerManagerQPS, "controller-manager-qps", o.ControllerManagerQPS, "kube-controller-manager --kube-api-qps")
	fs.IntVar(&o.ControllerManagerBurst, "controller-manager-burst", o.ControllerManagerBurst, "kube-controller-manager --kube-api-burst")
	fs.Float32Var(&o.SchedulerQPS, "scheduler-qps", o.SchedulerQPS, "kube-scheduler clientConnection.qps")
	fs.IntVar(&o.SchedulerBurst, "scheduler-burst", o.SchedulerBurst, "kube-scheduler clientConnection.burst")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "Service ClusterIP range")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "pod network, cut into one podCIDR per node")
	fs.IntVar(&o.NodeCIDRMaskSize, "node-cidr-mask-size", o.NodeCIDRMaskSize, "prefix length of each node's podCIDR")
	fs.StringArrayVar(&o.APIServerArgs, "apiserver-arg", nil, "extra kube-apiserver flag, e.g. --apiserver-arg=--v=2 (repeatable)")
	fs.StringArrayVar(&o.ControllerManagerArgs, "controller-manager-arg", nil, "extra kube-controller-manager flag (repeatable)")
	fs.StringArrayVar(&o.SchedulerArgs, "scheduler-arg", nil, "extra kube-scheduler flag (repeatable)")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", o.ReadyTimeout, "how long to wait for the cluster to be ready")
}

func newClusterDownCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop the local cluster (the folder and its data stay)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := controlplane.Down(cmd.Context(), *dir)
			if errors.Is(err, controlplane.ErrNotRunning) {
				fmt.Fprintf(cmd.ErrOrStderr(), "no cluster running in %s\n", *dir)
				return nil
			}
			if err == nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "cluster in %s stopped\n", *dir)
			}
			return err
		},
	}
}

func newClusterStatusCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Print the cluster state (JSON): phase, component pids, endpoints",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := clusterdir.Open(*dir)
			if err != nil {
				return err
			}
			state, err := d.ReadState()
			if errors.Is(err, clusterdir.ErrNoState) {
				return &controlplane.InputError{Msg: fmt.Sprintf("no cluster in %s", d)}
			}
			if err != nil {
				return err
			}
			if running, _ := d.Running(); !running && state.Phase != clusterdir.PhaseFailed {
				state.Phase = clusterdir.PhaseStopped
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(state)
		},
	}
}

func newClusterRestartCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:       "restart COMPONENT",
		Short:     "Restart one component and wait until it is ready again",
		ValidArgs: clusterdir.AllComponents(),
		Args:      cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			state, err := controlplane.Restart(cmd.Context(), *dir, args[0])
			if err != nil {
				return err
			}
			c := state.Component(args[0])
			fmt.Fprintf(cmd.ErrOrStderr(), "%s restarted: pid %d, %d restarts\n", c.Name, c.PID, c.Restarts)
			return nil
		},
	}
}

func newClusterKubeconfigCommand(dir *string) *cobra.Command {
	var user, out string
	var groups []string
	cmd := &cobra.Command{
		Use:     "kubeconfig",
		Short:   "Mint a client certificate for any user and groups and write a kubeconfig for it",
		Example: `  kscale cluster kubeconfig --user system:node:hollow-0 --group system:nodes -o hollow-0.kubeconfig`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return usageError{errors.New("--user is required")}
			}
			if out == "" {
				return usageError{errors.New("-o/--output is required")}
			}
			d, err := clusterdir.Open(*dir)
			if err != nil {
				return err
			}
			return d.MintKubeconfig(out, user, groups...)
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user name (certificate common name)")
	cmd.Flags().StringSliceVar(&groups, "group", nil, "group (certificate organization), repeatable")
	cmd.Flags().StringVarP(&out, "output", "o", "", "kubeconfig file to write (mode 0600)")
	return cmd
}

func newClusterSuperviseCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:    "supervise",
		Short:  "Run the supervisor of a prepared cluster folder (started by `up`)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return superviseHere(*dir)
		},
	}
}

// superviseHere runs the cluster's supervisor in this process until SIGINT
// or SIGTERM.
func superviseHere(dir string) error {
	binary, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := signalContext()
	defer cancel()
	defer klog.Flush()
	return controlplane.Supervise(ctx, dir, binary)
}

// runComponent is the body of `kscale cluster component NAME [--] FLAGS`.
func runComponent(args []string) int {
	name, flags := args[0], args[1:]
	if len(flags) > 0 && flags[0] == "--" {
		flags = flags[1:]
	}
	if strings.HasPrefix(name, "-") {
		fmt.Fprintf(os.Stderr, "kscale: cluster component: component name first, one of %v\n", components.Names())
		return 2
	}
	return components.Run(name, flags)
}
