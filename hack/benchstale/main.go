// Command benchstale lists the results files of results/bench that are
// stale: the code they measure changed since they were written (see
// benchjson.Subjects). `make bench-stale` runs it from the module root.
package main

import (
	"fmt"
	"os"

	"github.com/kscale/kscale/framework/benchjson"
)

func main() {
	files, err := benchjson.Files(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchstale:", err)
		os.Exit(1)
	}
	stale := 0
	for _, f := range files {
		if f.Stale {
			stale++
			fmt.Printf("stale    results/bench/%s.json  (rerun: see docs/benchmarks.md)\n", f.Name)
		} else {
			fmt.Printf("current  results/bench/%s.json\n", f.Name)
		}
	}
	fmt.Printf("%d of %d results files stale\n", stale, len(files))
}
