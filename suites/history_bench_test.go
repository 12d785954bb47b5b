package suites_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/abtest"
	"github.com/kscale/kscale/framework/benchjson"
	"github.com/kscale/kscale/framework/changepoint"
	"github.com/kscale/kscale/framework/history"
	"github.com/kscale/kscale/framework/report"
)

// nightlyResult is what BenchmarkNightlySeries records in nightly-series.json.
type nightlyResult struct {
	Nodes int `json:"nodes"`
	// Delay is the start delay of runs 7–12 of the delayed series.
	Delay   string              `json:"delay"`
	Options changepoint.Options `json:"options"`
	Series  []nightlySeries     `json:"series"`
	// Compare are `kscale compare`'s verdicts of runs 1–5 against 8–12 of
	// each series, by figure.
	Compare map[string][]abtest.Figure `json:"compare"`
}

// nightlySeries is one series of runs and what kscale history made of it.
type nightlySeries struct {
	Name string `json:"name"`
	// PodStartupP99 and Verdicts are each run's, in order.
	PodStartupP99 []float64                   `json:"podStartupP99Ms"`
	Verdicts      []report.Verdict            `json:"verdicts"`
	ChangePoints  map[string][]history.Change `json:"changePoints"`
	Regressions   []string                    `json:"regressions"`
	// ExitCode is kscale history's: 1 when a gated figure regressed in the
	// newest runs.
	ExitCode int `json:"exitCode"`
}

// BenchmarkNightlySeries runs the density config with its small overrides
// on 20 fleet nodes 24 times: a series of 12 whose runs 7–12 start every
// pod ~1 s later (--pod-start-delay), and a series of 12 unchanged runs.
// kscale history must find one change point, at run 7, on pod startup
// (worse) and fail the first series only; kscale compare must call runs
// 1–5 against 8–12 of the first "regressed" on pod startup p99 and "not
// distinguishable" on API call latency, and the same halves of the second
// "not distinguishable". Recorded in results/bench/nightly-series.json.
//
// KSCALE_BENCH_RUNS=8 runs a shorter series to try the benchmark out; it
// records nothing.
func BenchmarkNightlySeries(b *testing.B) {
	const nodes, delay = 20, "1s"
	runs := 12
	if s := os.Getenv("KSCALE_BENCH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 8 {
			b.Fatalf("KSCALE_BENCH_RUNS=%q: want 8 runs or more (the comparison takes runs 1–5 and 8 on)", s)
		}
		runs = n
	}
	overrides, err := filepath.Abs("../configs/density/overrides/small.yaml")
	if err != nil {
		b.Fatal(err)
	}
	res := nightlyResult{Nodes: nodes, Delay: delay, Options: changepoint.DefaultOptions(), Compare: map[string][]abtest.Figure{}}
	for _, series := range []string{"delayed", "unchanged"} {
		root := b.TempDir()
		var dirs []string
		s := nightlySeries{Name: series, ChangePoints: map[string][]history.Change{}}
		for i := range runs {
			args := []string{fmt.Sprintf("--nodes=%d", nodes), "--testoverrides=" + overrides}
			if series == "delayed" && i >= 6 {
				args = append(args, "--pod-start-delay="+delay)
			}
			r := startSuiteArgs(b, args)
			code := r.wait(b, time.Hour)
			run, err := report.ReadRun(r.reportDir)
			if err != nil {
				b.Fatalf("%s run %d: exit %d, no summary: %v; log:\n%s", series, i+1, code, err, r.tail())
			}
			// The archive a nightly job keeps: <job>/<build>/artifacts.
			if _, err := report.ExportCILayout(r.reportDir, root, "ci-kscale-density-"+series, i+1); err != nil {
				b.Fatal(err)
			}
			dirs = append(dirs, r.reportDir)
			p99 := 0.0
			for _, m := range run.Measurements {
				if m.Name == "PodStartupLatency_PodStartupLatency" {
					p99 = m.Headline["pod_startup p99 ms"]
				}
			}
			s.PodStartupP99 = append(s.PodStartupP99, p99)
			s.Verdicts = append(s.Verdicts, run.Verdict)
			b.Logf("%s run %d of %d: exit %d, verdict %s, pod startup p99 %.0f ms", series, i+1, runs, code, run.Verdict, p99)
		}
		all, skipped, err := history.Load(root)
		if err != nil {
			b.Fatal(err)
		}
		h, err := history.Analyze(all, skipped, res.Options)
		if err != nil {
			b.Fatal(err)
		}
		h.WriteText(os.Stderr)
		for _, g := range h.Groups {
			for _, ser := range g.Series {
				if len(ser.ChangePoints) > 0 {
					s.ChangePoints[ser.Figure] = ser.ChangePoints
				}
			}
		}
		for _, r := range h.Regressions() {
			s.Regressions = append(s.Regressions, r.Series.Figure)
		}
		if len(s.Regressions) > 0 {
			s.ExitCode = 1
		}
		res.Series = append(res.Series, s)

		read := func(ds []string) []*report.Run {
			var out []*report.Run
			for _, d := range ds {
				r, err := report.ReadRun(d)
				if err != nil {
					b.Fatal(err)
				}
				out = append(out, r)
			}
			return out
		}
		figs, err := abtest.Compare(read(dirs[:5]), read(dirs[7:]), abtest.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		res.Compare[series] = figs
	}
	if runs != 12 {
		b.Logf("a series of %d runs: nothing recorded", runs)
		return
	}
	path, err := benchjson.Write("nightly-series", res)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s", path)
}
