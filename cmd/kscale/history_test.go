package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

// writeRuns writes report folders of density runs under root, a day
// apart, with the pod startup p99s given.
func writeRuns(t *testing.T, root string, p99s ...float64) {
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	for i, v := range p99s {
		r := &report.Run{Version: report.SummaryVersion, Config: "density", Cluster: report.Cluster{Nodes: 20, Provider: "local"},
			Started: t0.Add(time.Duration(i) * 24 * time.Hour), Verdict: report.RunPass,
			Measurements: []report.Measurement{{Name: "PodStartupLatency_PodStartupLatency", Verdict: measurements.Pass, SLO: true,
				Headline: map[string]float64{"pod_startup p99 ms": v}, Thresholds: map[string]float64{"pod_startup p99 ms": 5000}}}}
		dir := filepath.Join(root, fmt.Sprintf("run-%02d", i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := report.WriteRun(dir, r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHistoryCommand(t *testing.T) {
	regressed, quiet := t.TempDir(), t.TempDir()
	writeRuns(t, regressed, 350, 362, 341, 355, 349, 358, 1340, 1372, 1351, 1329, 1388, 1346)
	writeRuns(t, quiet, 350, 362, 341, 355, 349, 358, 347, 361, 352, 344, 356, 350)
	out := filepath.Join(t.TempDir(), "history")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"regressed", []string{"history", regressed, "--output", out}, 1,
			[]string{"REGRESSION PodStartupLatency_PodStartupLatency: pod_startup p99 ms", "from run-07", "wrote " + filepath.Join(out, "history.html")}},
		{"quiet", []string{"history", quiet}, 0, []string{"12 runs of 1 kinds", "no gated figure regressed"}},
		{"no folder", []string{"history"}, 2, []string{"name at least one folder"}},
		{"missing folder", []string{"history", filepath.Join(quiet, "nope")}, 2, []string{"no such file"}},
		{"no runs", []string{"history", t.TempDir()}, 2, []string{"no run (summary.json)"}},
		{"bad p-value", []string{"history", quiet, "--p-value=0"}, 2, []string{"--p-value"}},
	} {
		t.Run(tc.name, func(t *testing.T) { expectCLI(t, tc.args, tc.code, tc.want...) })
	}
	if _, err := os.Stat(filepath.Join(out, "history.json")); err != nil {
		t.Error(err)
	}
}

// TestReportCILayout: runs archived with kscale report --ci-layout are what
// kscale history reads as a CI archive; a half-given layout is bad input.
func TestReportCILayout(t *testing.T) {
	runs, archive := t.TempDir(), t.TempDir()
	writeRuns(t, runs, 350, 362, 341)
	run := runCLI
	for i := 1; i <= 3; i++ {
		if code, out := run("report", filepath.Join(runs, fmt.Sprintf("run-%02d", i)), "--ci-layout", archive, "--job", "ci-density", "--build", fmt.Sprint(100+i)); code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
	}
	code, out := run("history", archive)
	if code != 0 || !strings.Contains(out, "3 runs of 1 kinds") || !strings.Contains(out, "ci-density/101/artifacts") {
		t.Errorf("history of the archive: exit %d\n%s", code, out)
	}
	if code, out := run("report", filepath.Join(runs, "run-01"), "--ci-layout", archive, "--job", "ci-density", "--build", "101"); code != 2 || !strings.Contains(out, "already archived") {
		t.Errorf("archiving a build twice: exit %d: %s", code, out)
	}
	if code, out := run("report", filepath.Join(runs, "run-01"), "--ci-layout", archive); code != 2 || !strings.Contains(out, "go together") {
		t.Errorf("--ci-layout alone: exit %d: %s", code, out)
	}
}

// runCLI runs kscale with args and returns its exit code and what it
// printed, the error included.
func runCLI(args ...string) (int, string) {
	root := newRootCommand()
	var buf bytes.Buffer
	root.SetOut(&buf)
	root.SetErr(io.Discard)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		buf.WriteString(err.Error())
	}
	return exitCodeOf(err), buf.String()
}

// expectCLI runs kscale with args and wants the exit code and every text.
func expectCLI(t *testing.T, args []string, code int, want ...string) {
	t.Helper()
	got, out := runCLI(args...)
	if got != code {
		t.Fatalf("exit %d, want %d:\n%s", got, code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("lacks %q:\n%s", w, out)
		}
	}
}
