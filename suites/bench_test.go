package suites_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/benchjson"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

// densityResult is what BenchmarkDensity records in density-<nodes>.json.
type densityResult struct {
	Nodes       int `json:"nodes"`
	PodsPerNode int `json:"podsPerNode"`
	// ExitCode and Verdict are the run's.
	ExitCode int            `json:"exitCode"`
	Verdict  report.Verdict `json:"verdict"`
	// SecondsClusterStartToReports is the whole run, cluster start to
	// reports written.
	SecondsClusterStartToReports float64 `json:"secondsClusterStartToReports"`
	ProvisionSeconds             float64 `json:"provisionSeconds"`
	// Hollow is the run's hollow nodes; null when it started none.
	Hollow *report.Hollow `json:"hollow"`
	// Steps are each step's seconds, by "NN step name" (NN from 01).
	Steps map[string]float64 `json:"steps"`
	// Verdicts and Headline are each measurement's, by measurement name.
	Verdicts map[string]measurements.Verdict `json:"verdicts"`
	Headline map[string]map[string]float64   `json:"headline"`
}

// densityRepeatResult is what BenchmarkDensityRepeat records in
// density-repeat.json.
type densityRepeatResult struct {
	Nodes int `json:"nodes"`
	Runs  int `json:"runs"`
	// Passed counts the runs that exited 0 with the verdict pass.
	Passed int `json:"passed"`
	// WorstAPIWindowP99Ms is the worst of the runs' WorstAPIMs.
	WorstAPIWindowP99Ms float64            `json:"worstAPIWindowP99Ms"`
	Results             []densityRepeatRun `json:"results"`
}

// densityRepeatRun is one run of BenchmarkDensityRepeat.
type densityRepeatRun struct {
	ExitCode int            `json:"exitCode"`
	Verdict  report.Verdict `json:"verdict"`
	// WorstAPIMs is the highest headline "worst p99 ms" (the worst 5-minute
	// window's p99) of the run's APIResponsivenessPrometheus measurements.
	WorstAPIMs float64 `json:"worstAPIWindowP99Ms"`
	Seconds    float64 `json:"seconds"`
	// Measurements are each measurement's verdict, by measurement name.
	Measurements map[string]string `json:"measurements"`
	// HostSaturated are "<measurement>: <why>" for the measurements that
	// found the host saturated.
	HostSaturated []string `json:"hostSaturated,omitempty"`
}

// BenchmarkDensity runs the density suite as `make density` does — local
// provider, fleets, the classic settings (PODS_PER_NODE=30,
// controller-manager QPS 100) — at KSCALE_BENCH_NODES nodes (default
// 100; 1000 adds the 5000-nodes overrides' saturation throughput), and
// records cluster start to reports with the run's verdicts in
// results/bench/density-<nodes>.json.
func BenchmarkDensity(b *testing.B) {
	nodes := 100
	if v := os.Getenv("KSCALE_BENCH_NODES"); v != "" {
		var err error
		if nodes, err = strconv.Atoi(v); err != nil {
			b.Fatalf("KSCALE_BENCH_NODES=%q: %v", v, err)
		}
	}
	args := []string{fmt.Sprintf("--nodes=%d", nodes), "--pods-per-node=30", "--controller-manager-qps=100"}
	if nodes > 100 {
		// Measured on purpose beyond what the machine holds.
		args = append(args, "--testoverrides=../../configs/density/overrides/5000-nodes.yaml", "--beyond-machine")
	}
	r := startSuiteArgs(b, args)
	start := time.Now()
	code := r.wait(b, 3*time.Hour)
	elapsed := time.Since(start)
	run, err := report.ReadRun(r.reportDir)
	if err != nil {
		b.Fatalf("exit %d, no summary: %v; log:\n%s", code, err, r.tail())
	}
	res := densityResult{
		Nodes: nodes, PodsPerNode: 30, ExitCode: code, Verdict: run.Verdict,
		SecondsClusterStartToReports: elapsed.Seconds(), ProvisionSeconds: run.Cluster.ProvisionSeconds,
		Hollow: run.Cluster.Hollow, Steps: map[string]float64{},
		Verdicts: map[string]measurements.Verdict{}, Headline: map[string]map[string]float64{},
	}
	for _, m := range run.Measurements {
		res.Verdicts[m.Name] = m.Verdict
		res.Headline[m.Name] = m.Headline
	}
	for _, s := range run.Steps {
		res.Steps[fmt.Sprintf("%02d %s", s.Index+1, s.Name)] = s.DurationSeconds
	}
	path, err := benchjson.Write(fmt.Sprintf("density-%d", nodes), res)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(elapsed.Seconds(), "s/run")
	b.Logf("wrote %s", path)
}

// BenchmarkDensityRepeat runs the main job — the density suite as `make
// density` runs it, with no flag but --nodes (KSCALE_BENCH_NODES, default
// 100) — KSCALE_BENCH_RUNS times (default 5), each on a fresh local cluster,
// and records each run's verdict, the API call SLO's worst 5-minute window,
// the measurements' verdicts and any host saturation in
// results/bench/density-repeat.json.
func BenchmarkDensityRepeat(b *testing.B) {
	nodes, runs := 100, 5
	for _, v := range []struct {
		env string
		to  *int
	}{{"KSCALE_BENCH_NODES", &nodes}, {"KSCALE_BENCH_RUNS", &runs}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				b.Fatalf("%s=%q: want a positive number", v.env, s)
			}
			*v.to = n
		}
	}
	var results []densityRepeatRun
	passed := 0
	worst := 0.0
	for i := range runs {
		r := startSuiteArgs(b, []string{fmt.Sprintf("--nodes=%d", nodes)})
		start := time.Now()
		code := r.wait(b, 3*time.Hour)
		res := densityRepeatRun{ExitCode: code, Seconds: time.Since(start).Seconds(), Measurements: map[string]string{}}
		run, err := report.ReadRun(r.reportDir)
		if err != nil {
			b.Fatalf("run %d: exit %d, no summary: %v; log:\n%s", i+1, code, err, r.tail())
		}
		res.Verdict = run.Verdict
		for _, m := range run.Measurements {
			res.Measurements[m.Name] = string(m.Verdict)
			if m.Method == "APIResponsivenessPrometheus" {
				res.WorstAPIMs = max(res.WorstAPIMs, m.Headline["worst p99 ms"])
			}
			if m.HostSaturated != "" {
				res.HostSaturated = append(res.HostSaturated, m.Name+": "+m.HostSaturated)
			}
		}
		if code == 0 && run.Verdict == report.RunPass {
			passed++
		}
		worst = max(worst, res.WorstAPIMs)
		b.Logf("run %d of %d: exit %d, verdict %s, worst API window p99 %.0f ms, %.0f s", i+1, runs, code, run.Verdict, res.WorstAPIMs, res.Seconds)
		results = append(results, res)
	}
	path, err := benchjson.Write("density-repeat", densityRepeatResult{
		Nodes: nodes, Runs: runs, Passed: passed, WorstAPIWindowP99Ms: worst, Results: results,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s: %d of %d runs passed, worst API window p99 %.0f ms", path, passed, runs, worst)
}
