package main

import (
	goflag "flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/provider/kubemark"
)

func newKubemarkCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubemark",
		Short: "The kubemark provider's image and manifests: hollow-node pods in a root cluster joining a test cluster",
	}
	cmd.AddCommand(newKubemarkRenderCommand(), newKubemarkTemplatesCommand(), newKubemarkImageCommand())
	return cmd
}

func newKubemarkRenderCommand() *cobra.Command {
	po := provider.Options{Hollow: provider.HollowFleet, NodesPerFleet: provider.DefaultNodesPerFleet, MaxPods: provider.DefaultMaxPods}
	o := kubemark.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "render --nodes N --kubeconfig TEST --kubemark-image IMAGE",
		Short: "Print the manifests the kubemark provider applies to the root cluster, as a YAML stream",
		Long: `Render the kubemark provider's templates (embedded, or replaced file by file from
--kubemark-templates, alias --templates) and print the Namespace, the Secret with
the test cluster's kubeconfig (certificates embedded), the ConfigMap of node
settings and the hollow-node Deployment at its full replica count. The output is
what ` + "`kubectl apply --server-side -f -`" + ` against the root cluster would create; the
provider itself scales the Deployment up in steps and waits for Ready nodes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := kubemark.Render(po, o)
			if err != nil {
				return usageError{err}
			}
			_, err = cmd.OutOrStdout().Write(m.YAML)
			return err
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&po.Nodes, "nodes", 0, "hollow nodes to run (required)")
	fs.StringVar(&po.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the test cluster the hollow nodes join (default $KUBECONFIG)")
	fs.StringVar(&po.Hollow, "hollow", po.Hollow, "kind of hollow node: fleet (many nodes per pod) or kubelet (a pod per node: kubelet and proxy morphs)")
	fs.IntVar(&po.NodesPerFleet, "nodes-per-fleet", po.NodesPerFleet, "fleet: most hollow nodes per pod")
	fs.IntVar(&po.MaxPods, "max-pods", po.MaxPods, "pod capacity of each hollow node")
	fs.StringArrayVar(&po.HollowArgs, "hollow-arg", nil, "extra kubemark flag for every hollow node (repeatable)")
	gofs := goflag.NewFlagSet("kubemark", goflag.ContinueOnError)
	o.AddFlags(gofs)
	fs.AddGoFlagSet(gofs)
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "templates" {
			name = "kubemark-templates"
		}
		return pflag.NormalizedName(name)
	})
	return cmd
}

func newKubemarkTemplatesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "templates DIR",
		Short: "Write the embedded templates to DIR, to edit and pass as --kubemark-templates",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return usageError{err}
			}
			src := kubemark.EmbeddedTemplates()
			for _, name := range kubemark.TemplateFiles {
				if path := filepath.Join(dir, name); func() bool { _, err := os.Stat(path); return err == nil }() {
					return usageError{fmt.Errorf("%s exists: kscale does not overwrite templates", path)}
				}
			}
			for _, name := range kubemark.TemplateFiles {
				path := filepath.Join(dir, name)
				data, err := fs.ReadFile(src, name)
				if err != nil {
					return err
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), path)
			}
			return nil
		},
	}
}
