package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/changepoint"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

// fakeRun writes a report folder of a density run whose pod startup p99
// is p99 ms.
func fakeRun(t *testing.T, dir string, started time.Time, nodes int, p99 float64, verdict report.Verdict) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &report.Run{
		Version: report.SummaryVersion, Config: "density",
		Cluster:  report.Cluster{Nodes: nodes, Provider: "local", Version: "v1.37.2", Hollow: &report.Hollow{Kind: "fleet", Nodes: nodes}},
		Metadata: &report.Metadata{ConfigHash: "abcdef0123456789", Machine: report.Machine{Cores: 2}},
		Started:  started, Finished: started.Add(3 * time.Minute), DurationSeconds: 180, Verdict: verdict,
		Measurements: []report.Measurement{{
			Method: "PodStartupLatency", Name: "PodStartupLatency_PodStartupLatency", Verdict: measurements.Pass, SLO: true,
			Headline:   map[string]float64{"pod_startup p99 ms": p99, "pods": 60},
			Thresholds: map[string]float64{"pod_startup p99 ms": 5000},
		}},
	}
	if verdict == report.RunFailed {
		r.Steps = []report.Step{{Name: "create", Status: report.StepFailed, Errors: []string{"apiserver gone"}}}
	}
	if _, err := report.WriteRun(dir, r); err != nil {
		t.Fatal(err)
	}
}

// nightly writes n runs a day apart under root/<job>/<build>/artifacts,
// the i-th with pod startup p99 p99(i).
func nightly(t *testing.T, root string, n int, p99 func(i int) float64) {
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	for i := range n {
		fakeRun(t, filepath.Join(root, "ci-density", fmt.Sprint(1000+i), "artifacts"), t0.Add(time.Duration(i)*24*time.Hour), 20, p99(i), report.RunPass)
	}
}

func TestHistoryFindsTheRegression(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	root := t.TempDir()
	nightly(t, root, 12, func(i int) float64 {
		if i >= 6 {
			return 1350 + rng.NormFloat64()*40 // a start delay of ~1 s from the seventh run
		}
		return 350 + rng.NormFloat64()*15
	})
	h := analyze(t, root)
	if len(h.Runs) != 12 || len(h.Groups) != 1 || h.Runs[0].Job != "ci-density" || h.Runs[0].Build != "1000" {
		t.Fatalf("runs %d, groups %d, first run %+v", len(h.Runs), len(h.Groups), h.Runs[0])
	}
	regs := h.Regressions()
	if len(regs) != 1 {
		t.Fatalf("regressions %+v, want pod_startup p99 only", regs)
	}
	r := regs[0]
	if r.Series.Figure != "PodStartupLatency_PodStartupLatency: pod_startup p99 ms" || r.Change.Point != 6 ||
		r.Change.AfterRuns[0] != filepath.Join("ci-density", "1006", "artifacts") || len(r.Change.BeforeRuns) != 6 || !r.Change.Worse || r.Change.Change < 2 {
		t.Errorf("regression %+v of %s", r.Change, r.Series.Figure)
	}
	var text bytes.Buffer
	h.WriteText(&text)
	for _, want := range []string{"REGRESSION PodStartupLatency_PodStartupLatency: pod_startup p99 ms", "from ci-density/1006/artifacts", "1 gated figure(s) regressed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text summary lacks %q:\n%s", want, text.String())
		}
	}
}

func TestHistoryOfQuietRunsHasNoChangePoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	root := t.TempDir()
	nightly(t, root, 12, func(int) float64 { return 350 + rng.NormFloat64()*40 })
	h := analyze(t, root)
	for _, s := range h.Groups[0].Series {
		if len(s.ChangePoints) > 0 {
			t.Errorf("%s: change points %+v in a quiet series", s.Figure, s.ChangePoints)
		}
	}
	if len(h.Regressions()) != 0 {
		t.Error("a quiet series regressed")
	}
}

// TestHistoryGroupsAndLeavesOut: runs of another size are a series of
// their own; a failed run and an unreadable summary are left out, each
// with its reason.
func TestHistoryGroupsAndLeavesOut(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	for i := range 4 {
		fakeRun(t, filepath.Join(root, fmt.Sprintf("small-%d", i)), t0.Add(time.Duration(i)*time.Hour), 20, 350, report.RunPass)
		fakeRun(t, filepath.Join(root, fmt.Sprintf("big-%d", i)), t0.Add(time.Duration(i)*time.Hour+time.Minute), 100, 900, report.RunPass)
	}
	fakeRun(t, filepath.Join(root, "small-failed"), t0.Add(5*time.Hour), 20, 0, report.RunFailed)
	if err := os.MkdirAll(filepath.Join(root, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "broken", report.SummaryFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := analyze(t, root)
	if len(h.Groups) != 2 || len(h.Groups[0].Runs) != 5 || len(h.Groups[1].Runs) != 4 {
		t.Fatalf("groups: %+v", h.Groups)
	}
	if len(h.Skipped) != 1 || h.Skipped[0].Dir != filepath.Join(root, "broken") {
		t.Errorf("skipped %+v", h.Skipped)
	}
	var p99 *Series
	for _, s := range h.Groups[0].Series {
		if s.Number == "pod_startup p99 ms" {
			p99 = s
		}
	}
	if p99 == nil || len(p99.Points) != 4 || len(p99.Missing) != 1 || !strings.Contains(p99.Missing[0].Reason, "apiserver gone") || !p99.Gated {
		t.Errorf("small runs' p99 series %+v", p99)
	}
	if _, _, err := Load(filepath.Join(root, "nowhere")); err == nil {
		t.Error("a missing folder loaded")
	}
}

// analyze loads the runs under root and analyzes them with the defaults.
func analyze(t *testing.T, root string) *History {
	t.Helper()
	runs, skipped, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Analyze(runs, skipped, changepoint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return h
}
