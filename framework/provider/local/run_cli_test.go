package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

// TestKscaleValidate: the compiled config or every error with its place,
// exit 0 or 2.
func TestKscaleValidate(t *testing.T) {
	density := filepath.Join("..", "..", "..", "configs", "density", "config.yaml")
	// Every method the shipped configs name exists: no skip flag needed.
	r := runBinary(t, "kscale", nil, "validate", density, "--nodes=100")
	if r.code != 0 || !strings.Contains(r.stdout, "name: density") || !strings.Contains(r.stdout, "Replicas: 3000") || r.stderr != "" {
		t.Fatalf("validate density: exit %d\nstdout:\n%.400s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	probes := filepath.Join(t.TempDir(), "probes.yaml")
	if err := os.WriteFile(probes, []byte(`name: probes
steps:
- name: probes
  measurements:
  - {identifier: dns, method: DnsLookupLatency, params: {action: start}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runBinary(t, "kscale", nil, "validate", probes)
	if r.code != 2 || !strings.Contains(r.stderr, "probes.yaml:5:") || !strings.Contains(r.stderr, "DnsLookupLatency") {
		t.Errorf("an unsupported method without the skip flag: exit %d\n%s", r.code, r.stderr)
	}
	r = runBinary(t, "kscale", nil, "validate", probes, "--skip-unsupported-measurements")
	if r.code != 0 || !strings.Contains(r.stderr, "not measured") || !strings.Contains(r.stderr, "DnsLookupLatency") {
		t.Errorf("the skipped measurement is not listed: exit %d\n%s", r.code, r.stderr)
	}

	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte(`name: broken
tuningSets:
- name: Uniform
  qpsLoad: {qps: 1}
steps:
- name: one
  phases:
  - replicasPerNamespace: 1
    tuningSet: Fast
    objectBundle: []
- name: two
  measurements: []
  phases: []
  module: {path: x.yaml}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runBinary(t, "kscale", nil, "validate", broken)
	if r.code != 2 {
		t.Fatalf("broken config: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{broken + ":9:", "steps[0].phases[0].tuningSet", `"Fast"`, "Uniform", broken + ":11:", "steps[1]"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("broken config: stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	r = runBinary(t, "kscale", nil, "run", "--testconfig", density, "--kubeconfig", filepath.Join(t.TempDir(), "missing"), "--skip-unsupported-measurements")
	assertBadInput(t, r, "--kubeconfig")
}

// TestKscaleRun runs a config against the shared cluster from the command
// line: every phase done, the unsupported measurement reported as not
// measured, exit 0, the generated config saved.
func TestKscaleRun(t *testing.T) {
	c, _ := sharedCluster(t)
	reports := t.TempDir()
	r := runBinary(t, "kscale", []string{"CL2_PREFIX=cli-run"}, "run", "--testconfig", "testdata/executor/config.yaml",
		"--kubeconfig", c.Dir.AdminKubeconfig(), "--report-dir", reports, "--skip-unsupported-measurements")
	if r.code != 0 {
		t.Fatalf("kscale run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Phase 2") || !strings.Contains(r.stdout, "not measured") {
		t.Errorf("summary does not show the steps and the unmeasured probe:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(reports, "generatedConfig_executor-it.yaml")); err != nil {
		t.Error(err)
	}
}

// TestKscaleRunTestSuite: a CL2 test suite file's entries run in turn, each
// with its own overrides and report folder, and junit.xml holds a
// testsuite per entry.
func TestKscaleRunTestSuite(t *testing.T) {
	c, _ := sharedCluster(t)
	dir, reports := t.TempDir(), t.TempDir()
	files := map[string]string{
		"config.yaml": "{{$d := DefaultParam .DURATION \"1ms\"}}\nname: {{.NAME}}\nsteps:\n- name: sleep {{$d}}\n  measurements:\n  - {Method: Sleep, Identifier: s, Params: {duration: {{$d}}}}\n",
		"a.yaml":      "NAME: first\n",
		"b.yaml":      "NAME: second\nDURATION: 200ms\n",
		"suite.yaml": "- identifier: one\n  configPath: " + filepath.Join(dir, "config.yaml") + "\n  overridePaths: [" + filepath.Join(dir, "a.yaml") + "]\n" +
			"- identifier: two\n  configPath: " + filepath.Join(dir, "config.yaml") + "\n  overridePaths: [" + filepath.Join(dir, "b.yaml") + "]\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runBinary(t, "kscale", nil, "run", "--testsuite", filepath.Join(dir, "suite.yaml"),
		"--kubeconfig", c.Dir.AdminKubeconfig(), "--report-dir", reports)
	if r.code != 0 {
		t.Fatalf("kscale run --testsuite: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"== test scenario one", "sleep 1ms", "== test scenario two", "sleep 200ms"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, f := range []string{"one/generatedConfig_first.yaml", "two/generatedConfig_second.yaml", "one/summary.json", "two/junit.xml"} {
		if _, err := os.Stat(filepath.Join(reports, f)); err != nil {
			t.Error(err)
		}
	}
	junit, err := os.ReadFile(filepath.Join(reports, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), `<testsuite name="one"`) || !strings.Contains(string(junit), `<testsuite name="two"`) {
		t.Errorf("junit.xml does not hold a testsuite per entry:\n%s", junit)
	}
}

// TestKscaleCompare: two runs' summaries compared from the command line;
// exit 1 when a gated measure regressed beyond the tolerance, 0 within it,
// 2 for a folder without a summary.
func TestKscaleCompare(t *testing.T) {
	dirs := make([]string, 2)
	for i, p99 := range []float64{2000, 2600} {
		dirs[i] = t.TempDir()
		run := &report.Run{Version: report.SummaryVersion, Config: "density", Verdict: report.RunPass, Measurements: []report.Measurement{{
			Name: "PodStartupLatency_PodStartupLatency", Verdict: measurements.Pass,
			Headline: map[string]float64{"pod_startup p99 ms": p99}, Thresholds: map[string]float64{"pod_startup p99 ms": 5000},
		}}}
		if _, err := report.WriteRun(dirs[i], run); err != nil {
			t.Fatal(err)
		}
	}
	page := filepath.Join(t.TempDir(), "compare.html")
	r := runBinary(t, "kscale", nil, "compare", dirs[0], dirs[1], "--html", page)
	if r.code != 1 || !strings.Contains(r.stdout, "+30.0%") || !strings.Contains(r.stdout, "REGRESSED") {
		t.Errorf("a 30 %% regression at 10 %% tolerance: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `class="regressed"`) {
		t.Errorf("compare.html: %v", err)
	}
	if r := runBinary(t, "kscale", nil, "compare", dirs[0], dirs[1], "--tolerance", "50"); r.code != 0 {
		t.Errorf("within 50 %%: exit %d\n%s", r.code, r.stderr)
	}
	assertBadInput(t, runBinary(t, "kscale", nil, "compare", dirs[0], t.TempDir()), "summary.json")
}
