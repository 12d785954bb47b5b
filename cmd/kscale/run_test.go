package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/framework/runner"
)

// TestRunAllowNotMeasuredFlag: `kscale run` takes --allow-not-measured,
// off by default; validate, which judges nothing, does not.
func TestRunAllowNotMeasuredFlag(t *testing.T) {
	f := newRunCommand().Flags().Lookup("allow-not-measured")
	if f == nil || f.DefValue != "false" {
		t.Fatalf("run --allow-not-measured: %+v", f)
	}
	if newValidateCommand().Flags().Lookup("allow-not-measured") != nil {
		t.Error("validate takes --allow-not-measured")
	}
}

// TestNotPassed: a run that did not pass exits 1 with a message saying
// which way it did not.
func TestNotPassed(t *testing.T) {
	for _, tc := range []struct {
		run  report.Run
		want string
	}{
		{report.Run{Verdict: report.RunInconclusive}, "inconclusive"},
		{report.Run{Verdict: report.RunViolated}, "violated"},
		{report.Run{Verdict: report.RunFailed}, "failed"},
		{report.Run{Verdict: report.RunPass, Incomplete: true}, "interrupted"},
	} {
		err := notPassed(&runner.Result{Report: &tc.run})
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 1 {
			t.Errorf("%s: %v (exit %d), want %q and exit 1", tc.run.Verdict, err, exitCode(err), tc.want)
		}
	}
}

// TestRunTestSuiteBadInput: --testsuite beside --testconfig, or a suite
// file with a bad entry, is bad input (exit 2) before anything runs.
func TestRunTestSuiteBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(bad, []byte("- identifier: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--testsuite", bad, "--testconfig", "c.yaml"},
		{"--testsuite", bad, "--testoverrides", "o.yaml"},
		{"--testsuite", bad},
		{"--testsuite", filepath.Join(dir, "missing.yaml")},
	} {
		cmd := newRunCommand()
		cmd.SetArgs(append(args, "--kubeconfig", filepath.Join(dir, "kubeconfig")))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		var usage usageError
		if err := cmd.Execute(); !errors.As(err, &usage) {
			t.Errorf("run %v: error %v, want bad input", args, err)
		}
	}
}
