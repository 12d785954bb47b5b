package components

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // the components' --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on every component's /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// registry maps a component name to the function that runs it in this process
// and returns its exit code.
var registry = map[string]func(args []string) int{
	clusterdir.Etcd:              runEtcd,
	clusterdir.APIServer:         kubeCommand(apiserver.NewAPIServerCommand),
	clusterdir.ControllerManager: kubeCommand(controllermanager.NewControllerManagerCommand),
	clusterdir.Scheduler:         kubeCommand(func() *cobra.Command { return scheduler.NewSchedulerCommand() }),
}

// Names lists the components this binary can run.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run runs one component in the current process with the given flags and
// returns its exit code. The component handles SIGTERM and SIGINT itself.
func Run(name string, args []string) int {
	run, ok := registry[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown component %q: allowed values are %v\n", name, Names())
		return 2
	}
	return run(args)
}

// kubeCommand runs a Kubernetes component's cobra command the way its own
// main function does.
func kubeCommand(newCommand func() *cobra.Command) func(args []string) int {
	return func(args []string) int {
		cmd := newCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	}
}
