package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the Kubernetes version the control plane is built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := version.Get()
			fmt.Fprintf(cmd.OutOrStdout(), "kscale (Kubernetes %s, %s, built %s)\n", v.GitVersion, v.GoVersion, v.BuildDate)
			return nil
		},
	}
}
