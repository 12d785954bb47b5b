// Command printversion prints the Kubernetes versions a binary that imports
// stamp reports, for stamp's test to build without linker flags.
package main

import (
	"fmt"

	"github.com/kscale/kscale/kubemark/stamp"
)

func main() {
	fmt.Println(stamp.Version(), stamp.ClientVersion())
}
