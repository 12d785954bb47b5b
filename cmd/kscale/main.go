// Command kscale runs Kubernetes scalability tests and the local control plane
// they run against.
//
//	kscale cluster up --dir DIR      # real etcd, apiserver, controller-manager, scheduler
//	kscale cluster down --dir DIR
//
// Exit codes: 0 success, 1 failure, 2 bad input (flags, configs, a busy port,
// a broken cluster folder).
package main

import (
	"errors"
	goflag "flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/controlplane"
	_ "github.com/kscale/kscale/kubemark/stamp" // the Kubernetes version, however the binary was built
)

func main() {
	// A component child runs its own command line; nothing of kscale's CLI
	// may parse or log before it.
	if len(os.Args) > 3 && os.Args[1] == "cluster" && os.Args[2] == "component" {
		os.Exit(runComponent(os.Args[3:]))
	}
	os.Exit(execute(newRootCommand(), os.Args[1:]))
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "kscale",
		Short:         "Kubernetes scalability tests with hollow nodes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%s: %w (see `%s --help`)", cmd.CommandPath(), err, cmd.CommandPath())}
	})
	// klog's flags (--v, --vmodule, ...) for the supervisor's own log.
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	root.PersistentFlags().AddGoFlagSet(klogFlags)
	root.AddCommand(newClusterCommand(), newValidateCommand(), newRunCommand(), newCompareCommand(), newHistoryCommand(), newReportCommand(), newKubemarkCommand(), newPlanCommand(), newVersionCommand())
	return root
}

// usageError is bad input caught by the CLI itself.
type usageError struct{ error }

func execute(root *cobra.Command, args []string) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "kscale: "+err.Error())
	return exitCode(err)
}

func exitCode(err error) int {
	var input *controlplane.InputError
	var usage usageError
	if errors.As(err, &input) || errors.As(err, &usage) {
		return 2
	}
	return 1
}
