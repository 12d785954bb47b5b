// The rules of the house's layout, held against the imports of every
// package (tests aside: a test may use a helper of any floor).
package layout_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kscale/kscale"

// floors are the top-level folders from the ground up. A package may
// import packages of its own folder and of lower floors, never of a higher
// one; folders on one floor do not import each other.
var floors = map[string]int{
	"controlplane": 1,
	"kubemark":     2,
	"measurements": 3, // with what measurements stand on: metrics, procstat, progress
	"framework":    4, // config, executor, providers, runner, report, suite glue, fidelity, history
	"cmd":          5,
	"suites":       5,
	"bench":        5,
	"configs":      5,
}

// heavy are the packages that may import k8s.io/kubernetes: the real
// control plane's and kubelet's entry points, and the binaries.
var heavy = []string{"controlplane/components", "kubemark/morph", "cmd/kscale", "cmd/kubemark"}

func TestImportsRunOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	packages := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/"), fields[1:]
		if pkg == "" {
			continue // this test's own package
		}
		packages++
		from := strings.Split(pkg, "/")[0]
		floor, ok := floors[from]
		if !ok {
			t.Errorf("%s: top-level folder %q has no floor (the top level is fixed: see docs/design.md)", pkg, from)
			continue
		}
		for _, imp := range imports {
			if strings.HasPrefix(imp, "k8s.io/kubernetes/") && !isHeavy(pkg) {
				t.Errorf("%s imports %s: only %v may link k8s.io/kubernetes", pkg, imp, heavy)
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.Split(strings.TrimPrefix(imp, module+"/"), "/")[0]
			if to != from && floors[to] >= floor {
				t.Errorf("%s (floor %d, %s/) imports %s (floor %d, %s/): imports run down the floors only", pkg, floor, from, imp, floors[to], to)
			}
		}
	}
	if packages < 20 {
		t.Fatalf("only %d packages listed", packages)
	}
}

func isHeavy(pkg string) bool {
	for _, h := range heavy {
		if pkg == h || strings.HasPrefix(pkg, h+"/") {
			return true
		}
	}
	return false
}
