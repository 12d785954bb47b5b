package main

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestCompareRepeated: five runs a side with a start delay on one side are
// a regression of pod startup; five unchanged runs are not; one run a
// side is labelled as such; mixing the two forms is bad input.
func TestCompareRepeated(t *testing.T) {
	base, slow, same := t.TempDir(), t.TempDir(), t.TempDir()
	writeRuns(t, base, 350, 362, 341, 355, 349)
	writeRuns(t, slow, 1340, 1372, 1351, 1329, 1388)
	writeRuns(t, same, 358, 346, 353, 340, 361)
	side := func(flag, root string, n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, "--"+flag, filepath.Join(root, fmt.Sprintf("run-%02d", i)))
		}
		return out
	}
	args := func(parts ...[]string) []string {
		out := []string{"compare"}
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"regressed", args(side("baseline", base, 5), side("candidate", slow, 5)), 1, []string{"REGRESSED", "+286.0%", "p99"}},
		{"unchanged", args(side("baseline", base, 5), side("candidate", same, 5)), 0, []string{"not distinguishable"}},
		{"one run a side", args(side("baseline", base, 1), side("candidate", slow, 1)), 0, []string{"single-run comparison", "single run"}},
		{"two folders", []string{"compare", filepath.Join(base, "run-01"), filepath.Join(slow, "run-01")}, 1, []string{"single-run comparison", "regressed beyond"}},
		{"baseline only", args(side("baseline", base, 2)), 2, []string{"--baseline DIR... --candidate DIR..."}},
		{"both forms", append(args(side("baseline", base, 1), side("candidate", slow, 1)), base), 2, []string{"no folder without a flag"}},
		{"not a run", args(side("baseline", base, 1), []string{"--candidate", t.TempDir()}), 2, []string{"summary"}},
	} {
		t.Run(tc.name, func(t *testing.T) { expectCLI(t, tc.args, tc.code, tc.want...) })
	}
}
