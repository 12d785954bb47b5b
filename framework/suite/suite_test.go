package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kscale/kscale/measurements"
)

// TestSummaryFailure: which summaries fail their measurement's spec, and
// so the suite: violations, failures and SLOs left unmeasured unless
// accepted.
func TestSummaryFailure(t *testing.T) {
	unmeasured := measurements.Summary{Method: "SchedulingThroughput", Identifier: "st", Name: "SchedulingThroughput",
		Verdict: measurements.NotMeasured, SLO: true, Reason: "no scheduled pods matched"}
	optional := unmeasured
	optional.Optional = true
	informational := measurements.Summary{Method: "EtcdMetrics", Identifier: "e", Verdict: measurements.NotMeasured, Reason: "unreachable"}
	for _, tc := range []struct {
		name  string
		s     measurements.Summary
		allow bool
		want  string // "" passes
	}{
		{"a pass", measurements.Summary{Method: "PodStartupLatency", Identifier: "p", Verdict: measurements.Pass, SLO: true}, false, ""},
		{"a violation on a saturated host", measurements.Summary{Method: "PodStartupLatency", Identifier: "p", Verdict: measurements.Violated,
			Violations: []string{"p99 6s > 5s"}, HostSaturated: "host saturated: 99% of 2 cores busy over the violating window 12:00:00–12:05:00"}, false,
			"PodStartupLatency_p violated: p99 6s > 5s (host saturated: 99% of 2 cores busy"},
		{"a failure", measurements.Summary{Method: "X", Identifier: "x", Verdict: measurements.Failed, Reason: "boom"}, false, "X_x failed: boom"},
		{"an SLO not measured", unmeasured, false, "SchedulingThroughput not measured: no scheduled pods matched; an SLO left unmeasured makes the run inconclusive"},
		{"an SLO not measured, allowed by the run", unmeasured, true, ""},
		{"an SLO not measured, accepted by its entry", optional, false, ""},
		{"an informational measurement not measured", informational, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summaryFailure(tc.s, tc.allow)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("summaryFailure = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlanTestSuite: --testsuite makes a scenario per entry, each compiled
// with its own overrides and reporting under the suite's folder; with
// --testconfig or --testoverrides beside it, or a bad entry, the suite
// stops before anything starts.
func TestPlanTestSuite(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	config := write("config.yaml", "name: {{.NAME}}\nsteps:\n- name: sleep\n  measurements:\n  - {Method: Sleep, Identifier: s, Params: {duration: 1ms}}\n")
	a, b := write("a.yaml", "NAME: first\n"), write("b.yaml", "NAME: second\n")
	suiteFile := write("suite.yaml", fmt.Sprintf("- identifier: one\n  configPath: %s\n  overridePaths: [%s]\n- identifier: two\n  configPath: %s\n  overridePaths: [%s]\n", config, a, config, b))
	badSuite := write("bad.yaml", fmt.Sprintf("- identifier: one\n  configPath: %s\n- identifier: one\n  configPath: %s\n", config, config))
	flagsFor := func(mod func(*Flags)) *Flags {
		f := &Flags{Nodes: 2, Provider: "local", Hollow: "fleet", NodesPerFleet: 10, MaxPods: 110, PodsPerNode: 5, ReportDir: filepath.Join(dir, "report")}
		mod(f)
		return f
	}
	p, err := newPlan(Suite{Name: "load"}, flagsFor(func(f *Flags) { f.TestSuite = suiteFile }))
	if err != nil {
		t.Fatal(err)
	}
	if !p.testSuite || len(p.scenarios) != 2 {
		t.Fatalf("plan %+v", p)
	}
	for i, want := range []struct{ id, name string }{{"one", "first"}, {"two", "second"}} {
		sc := p.scenarios[i]
		if sc.identifier != want.id || sc.compiled.Config.Name != want.name || sc.options.ReportDir != filepath.Join(dir, "report", want.id) {
			t.Errorf("scenario %d: %s %s %s", i, sc.identifier, sc.compiled.Config.Name, sc.options.ReportDir)
		}
		// --pods-per-node still comes last.
		if last := sc.options.Overrides[len(sc.options.Overrides)-1]; filepath.Base(last) != "overrides_pods-per-node.yaml" {
			t.Errorf("scenario %d overrides %v", i, sc.options.Overrides)
		}
	}
	for name, mod := range map[string]func(*Flags){
		"with --testconfig":    func(f *Flags) { f.TestSuite, f.TestConfig = suiteFile, config },
		"with --testoverrides": func(f *Flags) { f.TestSuite, f.Overrides = suiteFile, stringList{a} },
		"an identifier twice":  func(f *Flags) { f.TestSuite = badSuite },
		"a missing file":       func(f *Flags) { f.TestSuite = filepath.Join(dir, "none.yaml") },
	} {
		if _, err := newPlan(Suite{Name: "load"}, flagsFor(mod)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
