package suites_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/benchjson"
	"github.com/kscale/kscale/framework/report"
)

// BenchmarkDensity runs the density suite as `make density` does — local
// provider, fleets, PODS_PER_NODE=30 — at KSCALE_BENCH_NODES nodes (default
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
	args := []string{fmt.Sprintf("--nodes=%d", nodes), "--pods-per-node=30"}
	if nodes > 100 {
		args = append(args, "--testoverrides=../../configs/density/overrides/5000-nodes.yaml")
	}
	r := startSuiteArgs(b, args)
	start := time.Now()
	code := r.wait(b, 3*time.Hour)
	elapsed := time.Since(start)
	run, err := report.ReadRun(r.reportDir)
	if err != nil {
		b.Fatalf("exit %d, no summary: %v; log:\n%s", code, err, r.tail())
	}
	verdicts := map[string]any{}
	headline := map[string]any{}
	for _, m := range run.Measurements {
		verdicts[m.Name] = m.Verdict
		headline[m.Name] = m.Headline
	}
	steps := map[string]float64{}
	for _, s := range run.Steps {
		steps[fmt.Sprintf("%02d %s", s.Index+1, s.Name)] = s.DurationSeconds
	}
	path, err := benchjson.Write(fmt.Sprintf("density-%d", nodes), map[string]any{
		"nodes": nodes, "podsPerNode": 30, "exitCode": code, "verdict": run.Verdict,
		"secondsClusterStartToReports": elapsed.Seconds(), "provisionSeconds": run.Cluster.ProvisionSeconds,
		"hollow": run.Cluster.Hollow, "steps": steps, "verdicts": verdicts, "headline": headline,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(elapsed.Seconds(), "s/run")
	b.Logf("wrote %s", path)
}
