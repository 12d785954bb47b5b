package suites_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/benchjson"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

// cl2Run is one of clusterloader2's testing configs, unchanged, with what
// it needs to fit 10 hollow nodes on one machine.
type cl2Run struct {
	Config string `json:"config"`
	// Overrides are written to an overrides file: the config's own keys,
	// CL2_* ones as clusterloader2 reads them from the environment.
	Overrides map[string]any `json:"overrides,omitempty"`
	Args      []string       `json:"args,omitempty"`
}

// cl2Result is what one run said.
type cl2Result struct {
	cl2Run
	ExitCode    int            `json:"exitCode"`
	Verdict     report.Verdict `json:"verdict"`
	Seconds     float64        `json:"seconds"`
	Steps       int            `json:"steps"`
	StepsOK     int            `json:"stepsOK"`
	Incomplete  bool           `json:"incomplete,omitempty"`
	NotMeasured []string       `json:"notMeasured,omitempty"`
	Violated    []string       `json:"violated,omitempty"`
	Failed      []string       `json:"failed,omitempty"`
	// CrossCheckRows and CrossCheckAgree count API call latency's numbers
	// computed both ways (with a Prometheus), and those that agree.
	CrossCheckRows  int `json:"crossCheckRows,omitempty"`
	CrossCheckAgree int `json:"crossCheckAgree,omitempty"`
	// Why says why the run did not pass: its steps' errors, its
	// violations, or the end of its log when it wrote no summary.
	Why []string `json:"why,omitempty"`
}

// cl2Runs are the configs run, with the overrides each needs at 10 nodes
// on a small machine. watch-list is left out: its 80 000 pods at 500 QPS
// are beyond one small machine.
var cl2Runs = []cl2Run{
	{Config: "pod-startup-latency"},
	{Config: "node-throughput"},
	{Config: "access-tokens"},
	{Config: "batch"},
	// 500 latency pods of 100m do not fit 10 one-core nodes.
	{Config: "density", Overrides: map[string]any{"MIN_LATENCY_PODS": 20}},
	// No volume provisioner on the local provider.
	{Config: "load", Overrides: map[string]any{"CL2_ENABLE_PVS": false}, Args: []string{"--prometheus"}},
	{Config: "huge-service", Overrides: map[string]any{"CL2_HUGE_SERVICE_ENDPOINTS": 200}},
	{Config: "write-throughput", Overrides: map[string]any{"CL2_PODS_BENCHMARK_POD_COUNT": 500, "CL2_PODS_BENCHMARK_DURATION": "1m"}, Args: []string{"--prometheus"}},
	{Config: "scheduler-throughput", Overrides: map[string]any{"CL2_SCHEDULER_THROUGHPUT_PODS": 500}},
	// Its lister pod asks 1250m.
	{Config: "list", Overrides: map[string]any{"CL2_LIST_CONFIG_MAP_NUMBER": 100}, Args: []string{"--prometheus", "--hollow-arg=--cpu=2"}},
}

// BenchmarkCL2TestingConfigs runs clusterloader2's own testing configs,
// unchanged, through the load suite on 10 fleet nodes of the local
// provider, one fresh cluster each, and records what each run said in
// results/bench/cl2-testing-configs.json. KSCALE_PERF_TESTS names a
// perf-tests checkout (its clusterloader2/testing/ is read); kscale ships
// none of its files. KSCALE_CL2_CONFIGS=a,b runs those configs only, to
// look into them, and records nothing.
func BenchmarkCL2TestingConfigs(b *testing.B) {
	perfTests := os.Getenv("KSCALE_PERF_TESTS")
	if perfTests == "" {
		b.Fatal("KSCALE_PERF_TESTS: set it to a kubernetes/perf-tests checkout")
	}
	testingDir := filepath.Join(perfTests, "clusterloader2", "testing")
	if _, err := os.Stat(testingDir); err != nil {
		b.Fatalf("KSCALE_PERF_TESTS=%s: %v", perfTests, err)
	}
	runs, subset := cl2Runs, os.Getenv("KSCALE_CL2_CONFIGS")
	if subset != "" {
		runs = nil
		for _, r := range cl2Runs {
			if slices.Contains(strings.Split(subset, ","), r.Config) {
				runs = append(runs, r)
			}
		}
		if len(runs) == 0 {
			b.Fatalf("KSCALE_CL2_CONFIGS=%q names none of the configs", subset)
		}
	}
	var results []cl2Result
	for _, run := range runs {
		args := []string{"--nodes=10", "--skip-unsupported-measurements", "--hollow-arg=--job-pod-run-duration=30s",
			"--testconfig=" + filepath.Join(testingDir, run.Config, "config.yaml")}
		if len(run.Overrides) > 0 {
			path := filepath.Join(b.TempDir(), run.Config+"-overrides.yaml")
			var body string
			keys := make([]string, 0, len(run.Overrides))
			for k := range run.Overrides {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				body += fmt.Sprintf("%s: %v\n", k, run.Overrides[k])
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
			args = append(args, "--testoverrides="+path)
		}
		args = append(args, run.Args...)
		start := time.Now()
		r := startNamedSuite(b, "load", args)
		code := r.wait(b, 45*time.Minute)
		res := cl2Result{cl2Run: run, ExitCode: code, Seconds: time.Since(start).Seconds()}
		if sum, err := report.ReadRun(r.reportDir); err != nil {
			res.Why = append([]string{"no summary: " + err.Error()}, lastLines(r.tail(), 15)...)
		} else {
			res.Verdict, res.Incomplete, res.Steps = sum.Verdict, sum.Incomplete, len(sum.Steps)
			for _, s := range sum.Steps {
				if s.Status == report.StepOK {
					res.StepsOK++
				}
				for _, e := range s.Errors {
					res.Why = append(res.Why, s.Name+": "+e)
				}
			}
			for _, m := range sum.Measurements {
				switch m.Verdict {
				case measurements.NotMeasured:
					if m.SLO {
						res.NotMeasured = append(res.NotMeasured, m.Name)
					}
				case measurements.Violated:
					res.Violated = append(res.Violated, m.Name)
					for i, v := range m.Violations {
						if i == 3 {
							res.Why = append(res.Why, fmt.Sprintf("%s: and %d more", m.Name, len(m.Violations)-3))
							break
						}
						res.Why = append(res.Why, m.Name+": "+v)
					}
				case measurements.Failed:
					res.Failed = append(res.Failed, m.Name)
				}
				if m.CrossCheck != nil {
					res.CrossCheckRows += len(m.CrossCheck.Rows)
					res.CrossCheckAgree += len(m.CrossCheck.Rows) - len(m.CrossCheck.Disagreements())
				}
			}
		}
		b.Logf("%s: exit %d, %s, %.0f s, %d/%d steps ok, not measured %v, violated %v; %s", run.Config, code, res.Verdict, res.Seconds, res.StepsOK, res.Steps, res.NotMeasured, res.Violated, strings.Join(res.Why, "; "))
		results = append(results, res)
	}
	if subset != "" {
		return
	}
	path, err := benchjson.Write("cl2-testing-configs", map[string]any{"nodes": 10, "perfTestsCommit": perfTestsCommit(perfTests), "runs": results})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s", path)
}

// perfTestsCommit is the checkout's commit, or $KSCALE_PERF_TESTS_COMMIT
// for a tree without its history (a git archive).
func perfTestsCommit(dir string) string {
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return os.Getenv("KSCALE_PERF_TESTS_COMMIT")
}

// lastLines are the last n lines of s.
func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[max(0, len(lines)-n):]
}
