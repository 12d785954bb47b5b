package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kscale/kscale/kubemark/image"
)

func newKubemarkImageCommand() *cobra.Command {
	c := image.Config{}
	var output string
	var push bool
	cmd := &cobra.Command{
		Use:   "image --kubemark BIN [--output FILE] [--tag REF] [--push]",
		Short: "Build the hollow-node image from a static kubemark: an OCI archive, or pushed to a registry",
		Long: `Build the hollow-node container image without Docker: one layer with the
kubemark binary at /kubemark and the folders the morphs write to, a non-root
default user, labels with the Kubernetes version and the commit. The binary must
be statically linked (CGO_ENABLED=0; make build makes it so).

--output writes an OCI archive, named by --tag, that containerd and skopeo read:

    ctr -n k8s.io images import kubemark.tar
    skopeo copy oci-archive:kubemark.tar docker://registry.example.com/kubemark:TAG

--push pushes it to the registry --tag names, with the credentials of
~/.docker/config.json. The image's reference is printed on stdout; pass it as
--kubemark-image.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" && !push {
				return usageError{fmt.Errorf("nothing to do: give --output FILE, --push, or both")}
			}
			if output != "" {
				if _, err := filepath.Abs(output); err != nil {
					return usageError{fmt.Errorf("--output=%s: %w", output, err)}
				}
			}
			im, err := image.New(c)
			if err != nil {
				return usageError{err}
			}
			digest, err := im.Digest()
			if err != nil {
				return err
			}
			if output != "" {
				if err := im.WriteArchive(output); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %s (%s, kubemark %s, commit %s)\n", output, im.Reference(), digest, im.KubernetesVersion(), orUnknown(im.Revision()))
			}
			if push {
				if err := im.Push(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "pushed %s@%s\n", im.Reference(), digest)
			}
			fmt.Fprintln(cmd.OutOrStdout(), im.Reference())
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&c.Binary, "kubemark", "bin/kubemark", "the static kubemark binary to put in the image")
	fs.StringVar(&c.Reference, "tag", "", "the image's reference, REPOSITORY:TAG (default "+image.DefaultRepository+":<Kubernetes version>)")
	fs.StringVar(&output, "output", "", "write the image as an OCI archive to this file")
	fs.BoolVar(&push, "push", false, "push the image to the registry of --tag")
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
