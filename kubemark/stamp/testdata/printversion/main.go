// Command printversion prints the Kubernetes versions a binary that imports
// stamp reports, for stamp's test to build without linker flags.
package main

import (
	"fmt"

	// A package of k8s.io/kubernetes, as the kubemark binary links.
	_ "k8s.io/kubernetes/pkg/util/flag"

	"github.com/kscale/kscale/kubemark/stamp"
)

func main() {
	fmt.Println(stamp.Version(), stamp.ClientVersion())
}
