package suites_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHeadlineCommand runs the density suite as typed in the README at
// 5000 nodes: on the local provider of a small machine it prints the plan
// and refuses the size, pointing to the kubemark provider; with the
// kubemark provider and Ginkgo's default 1 h deadline it refuses at once,
// naming the --timeout the run needs. Neither starts anything.
func TestHeadlineCommand(t *testing.T) {
	bin := suiteBinary(t, "density")
	kubeconfig := "../../framework/provider/kubemark/testdata/kubeconfig"
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"local", []string{"--nodes=5000", "-ginkgo.timeout=24h"},
			[]string{"plan: density at 5000 nodes, local provider", "estimated duration", "do not fit this", "--provider=kubemark"}},
		{"kubemark under 1h", []string{"--nodes=5000", "--provider=kubemark", "--kubeconfig=" + kubeconfig, "--root-kubeconfig=" + kubeconfig,
			"--kubemark-image=registry.example.com/kubemark:v1", "-ginkgo.timeout=1h"},
			[]string{"root cluster, fleet layout: 5 pods of 1000 nodes", "is 1h0m0s: run again with --timeout=3h0m0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"--report-dir=" + t.TempDir()}, tc.args...)...)
			cmd.Dir = "density"
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 {
				t.Fatalf("exit %v, want 2:\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(string(out), "Ran ") {
				t.Errorf("specs ran:\n%s", out)
			}
		})
	}
}
