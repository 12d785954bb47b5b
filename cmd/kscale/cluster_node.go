package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kscale/kscale/controlplane/rootnode"
	"github.com/kscale/kscale/kubemark/image"
)

func newClusterNodeCommand(dir *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Join a real node (kubelet + containerd + runc) to the local cluster: a root cluster for the kubemark provider",
	}
	cmd.AddCommand(newClusterNodeUpCommand(dir), newClusterNodeDownCommand(dir))
	return cmd
}

func newClusterNodeUpCommand(dir *string) *cobra.Command {
	c := rootnode.DefaultConfig()
	c.Kubelet = "bin/kubelet"
	c.Images = []string{"bin/kubemark-image.tar"}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a real kubelet on containerd, joined to the cluster, and wait until its Node is Ready",
		Long: `Join a real node to the local cluster in --dir: the kubelet built from
k8s.io/kubernetes (make kubelet), on a containerd of its own (its socket, root
and state under <dir>/nodes/<name>/), runc, and the CNI plugins (bridge,
host-local). The images given are imported first; the kubemark image is also
the pod sandbox, as no pause image can be pulled. Pods get addresses of --subnet
on the bridge --bridge, whose first address is the node's IP: start a cluster
under test with --apiserver-address=<that address> and its hollow-node pods
reach it. Needs root. Prints the node's IP on stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.ClusterDir = *dir
			if c.SandboxImage == "" && len(c.Images) > 0 {
				refs, err := image.ArchiveReferences(c.Images[0])
				if err != nil {
					return usageError{fmt.Errorf("--image=%s: %w", c.Images[0], err)}
				}
				c.SandboxImage = refs[0]
			}
			st, err := rootnode.Up(cmd.Context(), c, cmd.ErrOrStderr())
			if err != nil {
				return nodeError(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), st.NodeIP)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&c.Name, "name", c.Name, "the Node's name")
	fs.StringVar(&c.Kubelet, "kubelet", c.Kubelet, "the kubelet binary (make kubelet builds bin/kubelet)")
	fs.StringArrayVar(&c.Images, "image", c.Images, "OCI archive to import into the node's containerd (repeatable)")
	fs.StringVar(&c.SandboxImage, "sandbox-image", c.SandboxImage, "the pod sandbox image, one of the imported images (default: the first --image's)")
	fs.StringVar(&c.Bridge, "bridge", c.Bridge, "the pods' bridge, created by kscale")
	fs.StringVar(&c.Subnet, "subnet", c.Subnet, "the pods' private subnet; its first address is the bridge's and the node's")
	fs.StringVar(&c.CNIBinDir, "cni-bin-dir", c.CNIBinDir, "the CNI plugins' folder")
	fs.IntVar(&c.MaxPods, "max-pods", c.MaxPods, "the kubelet's pod capacity")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", c.ReadyTimeout, "longest wait for the Node to be Ready")
	return cmd
}

func newClusterNodeDownCommand(dir *string) *cobra.Command {
	name := rootnode.DefaultName
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the real node and remove its pods, containers, mounts, bridge, Node and folder",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := rootnode.Down(cmd.Context(), *dir, name, cmd.ErrOrStderr())
			if errors.Is(err, rootnode.ErrNotUp) {
				fmt.Fprintf(cmd.ErrOrStderr(), "no root node %s in %s\n", name, *dir)
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", name, "the Node's name")
	return cmd
}

func nodeError(err error) error {
	var input *rootnode.InputError
	if errors.As(err, &input) {
		return usageError{err}
	}
	return err
}
